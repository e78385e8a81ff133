import type { PGlite } from "@electric-sql/pglite";
import pg from "pg";

/*
 * Counts the SQL a server runs, for tests that pin a path's cost (counts are exact; timings are not, so
 * they live in bench/). BEGIN/COMMIT/ROLLBACK count as one transaction, not as statements; LISTEN and
 * UNLISTEN are subscriptions, not work, and are left out.
 */

export interface StatementCount {
  statements: number;
  transactions: number;
}

type Counter = (text: string | undefined) => void;
const counters = new Set<{ database: string | undefined; count: Counter }>();
let pgPatched = false;

function counterFor(total: StatementCount): Counter {
  return (text) => {
    const verb = text?.trimStart().slice(0, 9).toLowerCase() ?? "";
    if (verb.startsWith("listen") || verb.startsWith("unlisten")) return;
    if (verb.startsWith("begin")) total.transactions++;
    else if (!verb.startsWith("commit") && !verb.startsWith("rollback")) total.statements++;
  };
}

const textOf = (query: unknown): string | undefined => (typeof query === "string" ? query : (query as { text?: string } | undefined)?.text);

/** node-postgres: every Client of this process reports its queries, by database name. */
function patchPg(): void {
  if (pgPatched) return;
  pgPatched = true;
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown; database?: string };
  const query = prototype.query;
  prototype.query = function (this: { database?: string }, ...args: unknown[]) {
    for (const counter of counters) if (counter.database === this.database) counter.count(textOf(args[0]));
    return query.apply(this, args);
  };
}

const patchedPglite = new WeakMap<PGlite, Set<Counter>>();

/** PGlite: the instance's own query and transaction entry points (drizzle uses both). */
function patchPglite(db: PGlite): Set<Counter> {
  let listeners = patchedPglite.get(db);
  if (listeners) return listeners;
  const own = new Set<Counter>();
  listeners = own;
  patchedPglite.set(db, own);
  const report = (text: string | undefined) => own.forEach((count) => count(text));
  const query = db.query.bind(db);
  const transaction = db.transaction.bind(db);
  db.query = ((...args: Parameters<PGlite["query"]>) => (report(args[0]), query(...args))) as PGlite["query"];
  db.transaction = ((work: Parameters<PGlite["transaction"]>[0]) => {
    report("begin");
    return transaction((tx) => {
      const inner = tx.query.bind(tx);
      tx.query = ((...args: Parameters<typeof tx.query>) => (report(args[0]), inner(...args))) as typeof tx.query;
      return work(tx);
    });
  }) as PGlite["transaction"];
  return own;
}

/**
 * Starts counting the statements run on a test server's database (`pglite` on the embedded database,
 * else the PostgreSQL database named in `databaseUrl`); the returned function reads the count so far
 * and stops counting.
 */
export function countStatements(server: { pglite: PGlite | undefined; databaseUrl: string | undefined }): () => StatementCount {
  const total: StatementCount = { statements: 0, transactions: 0 };
  const count = counterFor(total);
  if (server.pglite) {
    const listeners = patchPglite(server.pglite);
    listeners.add(count);
    return () => (listeners.delete(count), { ...total });
  }
  patchPg();
  const entry = { database: new URL(server.databaseUrl!).pathname.slice(1), count };
  counters.add(entry);
  return () => (counters.delete(entry), { ...total });
}
