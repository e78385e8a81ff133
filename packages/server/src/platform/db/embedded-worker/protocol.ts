/*
 * Messages between svc's threads and the worker thread that owns the embedded database (`host.ts`).
 * Every request carries an id its reply repeats; notifications arrive unasked.
 */

export type RowMode = "object" | "array";

export type Request =
  /** `commit`: the transaction's last statement; the worker ends the transaction right behind it (`Tx.commitWith`). */
  | { id: number; op: "query"; sql: string; params: unknown[]; rowMode: RowMode; tx?: number; commit?: boolean }
  | { id: number; op: "exec"; sql: string; tx?: number }
  | { id: number; op: "begin"; tx: number }
  | { id: number; op: "end"; tx: number; commit: boolean }
  | { id: number; op: "listen"; channel: string }
  | { id: number; op: "unlisten"; channel: string }
  | { id: number; op: "dump" }
  | { id: number; op: "close" };

/** A database error as it crosses threads: PostgreSQL's fields, never the statement's parameters. */
export interface WireError {
  message: string;
  fields: Record<string, string>;
}

export type Reply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: WireError }
  | { notification: { channel: string; payload: string } };

/** What the worker opens: a data directory, a data-dir dump (tests, benchmarks), or memory. */
export interface HostOptions {
  dataDir?: string;
  /** A PGlite data-dir dump (`dumpDataDir`) to start from. */
  loadDataDir?: Uint8Array;
  /** SQL of a backup (`svc restore`), run on the new database before migrations bring it up to date. */
  restoreSql?: string;
  migrate: boolean;
  /**
   * PostgreSQL's shared_buffers, in MB (`SVC_EMBEDDED_SHARED_BUFFERS_MB`). PGlite's own default is 128 MB, all of
   * it resident from the start in its WebAssembly memory, which never shrinks (docs/performance.md, "Memory").
   */
  sharedBuffersMb?: number;
  /**
   * Open (creating and migrating a new database), close and report, then wait to be terminated: a new data
   * directory is prepared in a worker of its own, since what PGlite's initdb leaves allocated is only given
   * back to the system when that worker's isolate goes.
   */
  prepareOnly?: boolean;
}

/** PostgreSQL error fields worth keeping (see `pg-errors.ts`); PGlite's `params` are left behind on purpose. */
export const ERROR_FIELDS = [
  "code",
  "severity",
  "detail",
  "hint",
  "position",
  "where",
  "schema",
  "table",
  "column",
  "dataType",
  "constraint",
  "routine",
  "query",
] as const;
