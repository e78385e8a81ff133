import { parentPort, workerData } from "node:worker_threads";
import { PGlite, types, type Results, type Transaction } from "@electric-sql/pglite";
import { pgDump } from "@electric-sql/pglite-tools/pg_dump";
import { migrateEmbedded } from "../migrate.js";
import { Gate } from "./gate.js";
import { NamedQueries } from "./named-queries.js";
import { ERROR_FIELDS, type HostOptions, type Reply, type Request, type WireError } from "./protocol.js";

/*
 * The worker thread that owns the embedded database. PGlite runs PostgreSQL as WebAssembly on the thread
 * that calls it, so a busy database used to stall every HTTP request in the process (issue 9, F4); here
 * it stalls only this thread. Requests are handled concurrently, exactly as PGlite would handle them
 * in-process: a query outside a transaction waits for an open one to end, as on a single connection.
 */

const port = parentPort!;
const options = workerData as HostOptions;

// Drizzle reads dates, timestamps and intervals as the text PostgreSQL sends (see drizzle-orm/pglite). They are
// given to PGlite once, at creation: per query, PGlite copies its whole parser table to add them (about 0.17 ms a
// statement here, a tenth of a raw append transaction).
const keepText = (value: string) => value;
const TEXT_TYPES = [types.TIMESTAMP, types.TIMESTAMPTZ, types.INTERVAL, types.DATE, 1231, 1115, 1185, 1187, 1182];
const PARSERS = Object.fromEntries(TEXT_TYPES.map((type) => [type, keepText]));

class Rollback extends Error {}

interface OpenTransaction {
  /** Resolves once BEGIN ran; rejects if it failed. */
  ready: Promise<Transaction>;
  end(commit: boolean): void;
  done: Promise<void>;
}

const gate = new Gate();
const transactions = new Map<number, OpenTransaction>();
const listening = new Map<string, () => Promise<void>>();

function wireError(err: unknown): WireError {
  const source = (err ?? {}) as Record<string, unknown>;
  const fields: Record<string, string> = {};
  for (const name of ERROR_FIELDS) if (typeof source[name] === "string") fields[name] = source[name];
  return { message: err instanceof Error ? err.message : String(err), fields };
}

const send = (reply: Reply) => port.postMessage(reply);

/**
 * Opens transaction `id` (numbered by the client, so it can send the first statement right behind the
 * `begin` without waiting for an answer) and holds it until `end` arrives. It is registered at once:
 * statements naming it wait for `ready`; messages arrive in order, so none can come before it.
 */
function begin(pg: PGlite, id: number): Promise<null> {
  let end!: (commit: boolean) => void;
  const decided = new Promise<void>((commit, rollback) => (end = (ok) => (ok ? commit() : rollback(new Rollback()))));
  let opened!: (tx: Transaction) => void;
  const ready = new Promise<Transaction>((resolve) => (opened = resolve));
  const done = (async () => {
    const entering = gate.enter();
    if (entering) await entering;
    try {
      await pg.transaction(async (tx) => {
        opened(tx);
        await decided;
      });
    } finally {
      gate.leave();
    }
  })();
  const entry: OpenTransaction = { ready: Promise.race([ready, done.then(() => ready)]), end, done };
  transactions.set(id, entry);
  const forget = () => void transactions.delete(id);
  done.then(forget, forget);
  return entry.ready.then(() => null);
}

async function end(id: number, commit: boolean): Promise<void> {
  const open = transactions.get(id);
  if (!open) throw new Error(`no open transaction ${id}`);
  await open.ready;
  open.end(commit);
  try {
    await open.done;
  } catch (err) {
    if (!(err instanceof Rollback)) throw err;
  }
}

async function target(pg: PGlite, tx: number | undefined): Promise<PGlite | Transaction> {
  if (tx === undefined) return pg;
  const open = transactions.get(tx);
  if (!open) throw new Error(`no open transaction ${tx}`);
  return open.ready;
}

/** Work outside a transaction shares the gate for its duration; a transaction's statements already hold it. */
async function shared<T>(work: () => Promise<T>): Promise<T> {
  const entering = gate.enter();
  if (entering) await entering;
  try {
    return await work();
  } finally {
    gate.leave();
  }
}

/**
 * pg_dump as PGlite's tools run it: plain SQL with INSERTs, in one snapshot. It drives the session
 * itself, so it runs alone (see `Gate`), and the session is put back afterwards: PGlite has a single
 * session, and pg_dump's disconnect leaves its snapshot transaction and settings (an empty
 * search_path) in it, which every later statement of svc would inherit.
 */
async function dump(pg: PGlite): Promise<string> {
  return gate.alone(async () => {
    try {
      return await (await pgDump({ pg })).text();
    } finally {
      if (pg.isInTransaction()) await pg.exec("ROLLBACK");
      await pg.exec("RESET ALL; DEALLOCATE ALL");
      named.clear();
    }
  });
}

/**
 * A statement through the named path when it is worth a name, else PGlite's `query()`. Named statements
 * take PGlite's locks as `query()` would: inside a transaction its query lock, outside also the
 * transaction lock, so they never run inside someone else's transaction.
 */
async function query(pg: PGlite, request: Extract<Request, { op: "query" }>): Promise<Results> {
  const { sql, params, rowMode, tx } = request;
  const session = await target(pg, tx);
  const name = named.nameOf(sql, params);
  if (name === undefined) return session.query(sql, params, { rowMode });
  const viaName = () => pg.runExclusive(() => named.run(name, sql, params, rowMode, tx === undefined));
  return tx === undefined ? pg._runExclusiveTransaction(viaName) : viaName();
}

/**
 * A transaction's last statement, with the transaction ended right behind it here (`Tx.commitWith`):
 * committed when the statement succeeded, rolled back when it failed. Its answer waits for the end, so
 * a failed commit is this statement's error.
 */
async function lastStatement(pg: PGlite, request: Extract<Request, { op: "query" }>): Promise<Results> {
  let result: Results;
  try {
    result = await query(pg, request);
  } catch (err) {
    await end(request.tx!, false);
    throw err;
  }
  await end(request.tx!, true);
  return result;
}

// A transaction enters the gate at `begin` and leaves at its end; a dump takes it alone.
const GATED_ELSEWHERE = new Set<Request["op"]>(["begin", "end", "dump", "close"]);

function handle(pg: PGlite, request: Request): Promise<unknown> {
  const inTransaction = "tx" in request && request.tx !== undefined;
  return inTransaction || GATED_ELSEWHERE.has(request.op) ? run(pg, request) : shared(() => run(pg, request));
}

async function run(pg: PGlite, request: Request): Promise<unknown> {
  switch (request.op) {
    case "query":
      return request.commit ? lastStatement(pg, request) : query(pg, request);
    case "exec":
      return (await target(pg, request.tx)).exec(request.sql);
    case "begin":
      return begin(pg, request.tx);
    case "end":
      return end(request.tx, request.commit);
    case "listen":
      if (!listening.has(request.channel)) {
        const channel = request.channel;
        listening.set(channel, await pg.listen(channel, (payload) => send({ notification: { channel, payload } })));
      }
      return null;
    case "unlisten": {
      const stop = listening.get(request.channel);
      listening.delete(request.channel);
      await stop?.();
      return null;
    }
    case "dump":
      return dump(pg);
    case "close":
      await pg.close();
      return null;
  }
}

async function open(): Promise<PGlite> {
  const loadDataDir = options.loadDataDir ? new Blob([options.loadDataDir]) : undefined;
  const startParams = [...PGlite.defaultStartParams];
  if (options.sharedBuffersMb !== undefined) startParams.push("-c", `shared_buffers=${options.sharedBuffersMb}MB`);
  const pg = await PGlite.create({ dataDir: options.dataDir, loadDataDir, parsers: PARSERS, startParams });
  if (options.restoreSql !== undefined) {
    await pg.exec(options.restoreSql);
    // The dump empties the session's search_path; migrations name tables unqualified.
    await pg.exec("RESET search_path");
  }
  if (options.migrate) await migrateEmbedded(pg);
  return pg;
}

const pg = await open().catch((err: unknown) => {
  send({ id: 0, ok: false, error: wireError(err) });
  throw err;
});
if (options.prepareOnly) {
  await pg.close();
  send({ id: 0, ok: true, value: null });
  // Nothing more to do: the client terminates this worker, which frees what initdb left behind.
  await new Promise<never>(() => {});
}
const named = new NamedQueries(pg);
port.on("message", (request: Request) => {
  handle(pg, request).then(
    (value) => send({ id: request.id, ok: true, value }),
    (err: unknown) => send({ id: request.id, ok: false, error: wireError(err) }),
  );
});
send({ id: 0, ok: true, value: null });
