import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { Results, Transaction } from "@electric-sql/pglite";
import { statementAfterLast } from "../transaction.js";
import type { CommitsBehind } from "../types.js";
import type { HostOptions, Reply, Request, RowMode, WireError } from "./protocol.js";

/** What svc (and drizzle's PGlite driver) asks of an embedded database; a PGlite instance has it too. */
export interface EmbeddedClient {
  query<T>(sql: string, params?: unknown[], options?: { rowMode?: RowMode }): Promise<Results<T>>;
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T>;
  listen(channel: string, deliver: (payload: string) => void): Promise<() => Promise<void>>;
  /** A consistent SQL dump of the whole database (only the worker's client can take one while serving). */
  dump?(): Promise<string>;
  close(): Promise<void>;
}

type Op = Request extends infer R ? (R extends { id: number } ? Omit<R, "id"> : never) : never;

/** A database error from the worker, shaped like the driver's own (`code`, `constraint`, … as properties). */
export class EmbeddedDatabaseError extends Error {
  constructor(wire: WireError) {
    super(wire.message);
    this.name = "DatabaseError";
    Object.assign(this, wire.fields);
  }
}

/**
 * The embedded database, run in a worker thread (`host.ts`) and reached by messages, so PostgreSQL's
 * WebAssembly never runs on the thread that answers HTTP. Each call is one round trip; a transaction is
 * held open in the worker between `begin` and `end`, and its statements name it.
 */
export class EmbeddedWorkerClient implements EmbeddedClient {
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();
  private readonly listeners = new Map<string, Set<(payload: string) => void>>();
  private nextId = 1;
  private nextTransaction = 1;
  private failure: Error | undefined;

  private constructor(private readonly worker: Worker) {
    worker.on("message", (reply: Reply) => this.receive(reply));
    worker.on("error", (err) => this.fail(err));
    worker.on("exit", (code) => this.fail(new Error(`the embedded database's worker exited (code ${code})`)));
  }

  /** Starts the worker and waits until it has opened (and, if asked, migrated) the database. */
  static async start(options: HostOptions): Promise<EmbeddedWorkerClient> {
    if (options.dataDir !== undefined && !existsSync(join(options.dataDir, "PG_VERSION"))) {
      await prepare(options);
      options = { ...options, restoreSql: undefined, migrate: false };
    }
    const worker = hostWorker(options);
    const client = new EmbeddedWorkerClient(worker);
    await new Promise<unknown>((resolve, reject) => client.pending.set(0, { resolve, reject }));
    return client;
  }

  query<T>(sql: string, params: unknown[] = [], options: { rowMode?: RowMode } = {}): Promise<Results<T>> {
    return this.call({ op: "query", sql, params, rowMode: options.rowMode ?? "object" }) as Promise<Results<T>>;
  }

  /**
   * The transaction's number is chosen here, so its first statement follows the `begin` at once: one
   * round trip fewer per transaction. A failed BEGIN fails that statement and the `end`. A transaction
   * whose last statement took its commit along (`Tx.commitWith`) already ended in the worker.
   */
  async transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    const tx = this.nextTransaction++;
    this.call({ op: "begin", tx }).catch(() => {});
    const handle = this.transactionHandle(tx);
    let result: T;
    try {
      result = await work(handle);
    } catch (err) {
      if (!handle.ended) await this.call({ op: "end", tx, commit: false }).catch(() => {});
      throw err;
    }
    if (!handle.ended) await this.call({ op: "end", tx, commit: true });
    return result;
  }

  async listen(channel: string, deliver: (payload: string) => void): Promise<() => Promise<void>> {
    let delivers = this.listeners.get(channel);
    if (!delivers) {
      delivers = new Set();
      this.listeners.set(channel, delivers);
      await this.call({ op: "listen", channel });
    }
    delivers.add(deliver);
    return async () => {
      delivers.delete(deliver);
      if (delivers.size > 0 || this.listeners.get(channel) !== delivers) return;
      this.listeners.delete(channel);
      await this.call({ op: "unlisten", channel });
    };
  }

  async dump(): Promise<string> {
    return (await this.call({ op: "dump" })) as string;
  }

  async close(): Promise<void> {
    if (!this.failure) await this.call({ op: "close" });
    this.failure ??= new Error("the embedded database is closed");
    await this.worker.terminate();
  }

  /**
   * Only what drizzle's PGlite driver uses inside a transaction; savepoints are statements like any other.
   * `ended` once a statement was sent with the commit behind it: the worker ends the transaction there.
   */
  private transactionHandle(tx: number): Transaction & CommitsBehind & { readonly ended: boolean } {
    let commitBehindNext = false;
    let ended = false;
    const statement = (op: Op): Promise<never> => {
      if (ended) return Promise.reject(statementAfterLast());
      if (op.op !== "query" || !commitBehindNext) return this.call(op) as Promise<never>;
      commitBehindNext = false;
      ended = true;
      return this.call({ ...op, commit: true }) as Promise<never>;
    };
    const handle: Pick<Transaction, "query" | "exec"> & CommitsBehind & { readonly ended: boolean } = {
      query: (sql, params = [], options) => statement({ op: "query", sql, params, rowMode: options?.rowMode ?? "object", tx }),
      exec: (sql) => statement({ op: "exec", sql, tx }),
      commitBehindNextStatement: () => void (commitBehindNext = true),
      get ended() {
        return ended;
      },
    };
    return handle as Transaction & typeof handle;
  }

  private call(op: Op): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...op, id });
    });
  }

  private receive(reply: Reply): void {
    if ("notification" in reply) {
      const { channel, payload } = reply.notification;
      for (const deliver of this.listeners.get(channel) ?? []) deliver(payload);
      return;
    }
    const waiting = this.pending.get(reply.id);
    this.pending.delete(reply.id);
    if (reply.ok) waiting?.resolve(reply.value);
    else waiting?.reject(new EmbeddedDatabaseError(reply.error));
  }

  /** The worker is gone: every call waiting for it fails now, and every later one at once. */
  private fail(err: Error): void {
    this.failure ??= err;
    for (const waiting of this.pending.values()) waiting.reject(this.failure);
    this.pending.clear();
  }
}

/**
 * Creates a new data directory (initdb, a restore, migrations) in a worker that is then terminated. PGlite's
 * initdb runs a second PostgreSQL instance beside the one it prepares and its memory stays reachable after it
 * closes: measured, a fresh start kept about 450 MB more than a restart on the same directory (docs/performance.md,
 * "Memory"). Only the end of the worker's isolate gives it back.
 */
async function prepare(options: HostOptions): Promise<void> {
  const worker = hostWorker({ ...options, prepareOnly: true });
  try {
    await new Promise<void>((resolve, reject) => {
      worker.once("message", (reply: Reply) => ("ok" in reply && !reply.ok ? reject(new EmbeddedDatabaseError(reply.error)) : resolve()));
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`the embedded database's worker exited (code ${code}) while preparing ${options.dataDir}`)));
    });
  } finally {
    await worker.terminate();
  }
}

/**
 * Built code runs host.js. Run from source (tests, `tsx`), the worker must first register tsx's loader
 * in its own thread: Node 20 does not carry `--import` hooks into worker threads.
 */
function hostWorker(options: HostOptions): Worker {
  const built = new URL("./host.js", import.meta.url);
  if (existsSync(fileURLToPath(built))) return new Worker(built, { workerData: options });
  const tsx = import.meta.resolve("tsx/esm/api");
  const source = new URL("./host.ts", import.meta.url).href;
  const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); })`;
  return new Worker(bootstrap, { eval: true, workerData: options });
}
