import { randomUUID } from "node:crypto";
import type { Bus } from "../../src/platform/bus.js";
import type { EmbeddedClient } from "../../src/platform/db/index.js";
import pg from "pg";

/*
 * Counts the SQL a server runs, for tests that pin a path's cost (counts are exact; timings are not, so
 * they live in bench/). BEGIN/COMMIT/ROLLBACK count as one transaction, not as statements; LISTEN and
 * UNLISTEN are subscriptions, not work, and are left out. `commits` is what the database committed: one per
 * transaction, plus one per statement run outside any (autocommitted, its own transaction). `rows` adds up
 * the rows every counted statement returned to svc (what it had to read and decode), so a benchmark can show
 * rows read per step.
 */

export interface StatementCount {
  statements: number;
  transactions: number;
  /** Transactions plus statements run outside one, each of which commits by itself. */
  commits: number;
  /** Rows returned by the counted statements (result rows; an INSERT or UPDATE without RETURNING returns none). */
  rows: number;
}

/** One open count: told of every statement's text, and of its result rows when it was counted. */
interface Tally {
  /**
   * True when the statement counts as work (not a transaction boundary or a subscription); `inTransaction`
   * says whether it ran inside an explicit transaction (else it commits by itself).
   */
  statement(text: string | undefined, inTransaction: boolean): boolean;
  rows(n: number): void;
}

const tallies = new Set<{ database: string | undefined; tally: Tally }>();
let pgPatched = false;

function tallyOf(total: StatementCount): Tally {
  return {
    statement(text, inTransaction) {
      const verb = verbOf(text);
      if (verb === "listen" || verb === "unlisten") return false;
      if (verb === "begin") (total.transactions++, total.commits++);
      else if (verb !== "commit" && verb !== "rollback") {
        total.statements++;
        if (!inTransaction) total.commits++;
        return true;
      }
      return false;
    },
    rows: (n) => void (total.rows += n),
  };
}

/** The statement's first word, lowercased: what tells a transaction boundary or a subscription apart. */
function verbOf(text: string | undefined): string {
  return /^\s*([a-z]+)/i.exec(text ?? "")?.[1]?.toLowerCase() ?? "";
}

const textOf = (query: unknown): string | undefined => (typeof query === "string" ? query : (query as { text?: string } | undefined)?.text);

/** Rows of a node-postgres or PGlite result; a multi-statement query answers with an array of results. */
function rowsOf(result: unknown): number {
  if (Array.isArray(result)) return result.reduce((sum: number, r) => sum + rowsOf(r), 0);
  const rows = (result as { rows?: unknown[] } | undefined)?.rows;
  return Array.isArray(rows) ? rows.length : 0;
}

/** Reports a result's rows to `counted` without touching what the caller receives (errors stay theirs). */
function afterResult(returned: unknown, counted: Tally[]): void {
  if (counted.length === 0 || typeof (returned as Promise<unknown> | undefined)?.then !== "function") return;
  (returned as Promise<unknown>).then(
    (result) => counted.forEach((t) => t.rows(rowsOf(result))),
    () => {},
  );
}

/**
 * node-postgres: every Client of this process reports its queries, by database name. pg-pool calls
 * `client.query(text, values, callback)`, drizzle's transactions call it without a callback and await
 * the promise; rows are read from whichever carries the result. A client is inside a transaction from
 * the BEGIN it sends to its COMMIT or ROLLBACK (`Tx.commitWith`'s COMMIT, sent behind the last statement,
 * included; the driver then answers drizzle's own COMMIT without sending it).
 */
function patchPg(): void {
  if (pgPatched) return;
  pgPatched = true;
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown; database?: string };
  const query = prototype.query;
  const inTransaction = new WeakSet<object>();
  prototype.query = function (this: { database?: string }, ...args: unknown[]) {
    const text = textOf(args[0]);
    const verb = verbOf(text);
    const within = inTransaction.has(this);
    if (verb === "begin") inTransaction.add(this);
    else if (verb === "commit" || verb === "rollback") inTransaction.delete(this);
    const counted: Tally[] = [];
    for (const entry of tallies) if (entry.database === this.database && entry.tally.statement(text, within)) counted.push(entry.tally);
    const last = args.length - 1;
    if (counted.length > 0 && typeof args[last] === "function") {
      const callback = args[last] as (err: unknown, result: unknown) => void;
      args[last] = (err: unknown, result: unknown) => {
        if (!err) counted.forEach((t) => t.rows(rowsOf(result)));
        callback(err, result);
      };
    }
    const returned = query.apply(this, args);
    if (typeof args[last] !== "function") afterResult(returned, counted);
    return returned;
  };
}

const patchedPglite = new WeakMap<EmbeddedClient, Set<Tally>>();

/** The embedded database: its client's query (its own transaction) and transaction entry points (drizzle uses both). */
function patchPglite(db: EmbeddedClient): Set<Tally> {
  let listeners = patchedPglite.get(db);
  if (listeners) return listeners;
  const own = new Set<Tally>();
  listeners = own;
  patchedPglite.set(db, own);
  const report = (text: string | undefined, inTransaction: boolean): Tally[] => [...own].filter((t) => t.statement(text, inTransaction));
  const query = db.query.bind(db);
  const transaction = db.transaction.bind(db);
  const counted = <R>(text: string | undefined, inTransaction: boolean, run: () => R): R => {
    const tallied = report(text, inTransaction);
    const returned = run();
    afterResult(returned, tallied);
    return returned;
  };
  db.query = ((...args: Parameters<EmbeddedClient["query"]>) => counted(args[0], false, () => query(...args))) as EmbeddedClient["query"];
  db.transaction = ((work: Parameters<EmbeddedClient["transaction"]>[0]) => {
    report("begin", false);
    return transaction((tx) => {
      const inner = tx.query.bind(tx);
      tx.query = ((...args: Parameters<typeof tx.query>) => counted(args[0], true, () => inner(...args))) as typeof tx.query;
      return work(tx);
    });
  }) as EmbeddedClient["transaction"];
  return own;
}

/**
 * Starts counting the statements run on a test server's database (`pglite` on the embedded database,
 * else the PostgreSQL database named in `databaseUrl`); the returned function reads the count so far
 * and stops counting.
 */
export function countStatements(server: { pglite: EmbeddedClient | undefined; databaseUrl: string | undefined }): () => StatementCount {
  const total: StatementCount = { statements: 0, transactions: 0, commits: 0, rows: 0 };
  const tally = tallyOf(total);
  if (server.pglite) {
    const listeners = patchPglite(server.pglite);
    listeners.add(tally);
    return () => (listeners.delete(tally), { ...total });
  }
  patchPg();
  const entry = { database: new URL(server.databaseUrl!).pathname.slice(1), tally };
  tallies.add(entry);
  return () => (tallies.delete(entry), { ...total });
}

/**
 * Waits until every notification committed before the call has reached the server's subscribers. A listener
 * gets notifications in commit order, so once a marker published now has arrived, every earlier one has.
 * A count begun before that could see a hint from an earlier request (an input's wakeup) wake a worker
 * inside it, one claim more on a loaded machine than on a quiet one.
 */
export async function notificationsSettled(server: { app: { services: { bus: Bus } } }): Promise<void> {
  const bus = server.app.services.bus;
  const marker = randomUUID();
  let arrived!: () => void;
  const received = new Promise<void>((resolve) => (arrived = resolve));
  const unsubscribe = await bus.subscribe("svc_test_settled", (payload) => payload === marker && arrived());
  try {
    await bus.publish("svc_test_settled", marker);
    await received;
  } finally {
    await unsubscribe();
  }
}
