import type { ExtractTablesWithRelations } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from "drizzle-orm/pg-core";
import type * as schema from "../../db/schema/index.js";

export type Schema = typeof schema;
export type AppDb = PgDatabase<PgQueryResultHKT, Schema>;
type DrizzleTx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;

/** A transaction handle; callbacks given to afterCommit run only once the commit succeeded. */
export type Tx = DrizzleTx & {
  afterCommit(hook: () => void): void;
  /**
   * Runs the transaction's last statement with its COMMIT sent right behind it, so the transaction ends
   * one round trip sooner (and, on the embedded database, holds its single session that much less). It
   * resolves once both succeeded. If the statement fails, the COMMIT finds the transaction aborted and
   * rolls it back. Nothing may follow it: another statement is refused, and an error thrown after it
   * cannot undo what it committed.
   */
  commitWith<T>(last: () => Promise<T>): Promise<T>;
};

/** A driver connection that can send a transaction's COMMIT right behind its next statement (`Tx.commitWith`). */
export interface CommitsBehind {
  commitBehindNextStatement(): void;
}

export interface Database {
  readonly kind: "embedded" | "postgres";
  /** Runs `work` in one transaction; a thrown error rolls it back, drops its after-commit hooks, and NOTIFYs sent in it are never delivered. */
  tx<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /** Reads outside an explicit transaction (a single statement is its own transaction). */
  readonly read: AppDb;
  /**
   * One statement that changes data, outside an explicit transaction (it is its own). Kept apart from
   * `read` so reads can move to a replica without taking a write along.
   */
  readonly write: AppDb;
  ping(): Promise<void>;
  /** Connections held and requests waiting for one (PGlite: one connection, always held). */
  poolStats(): { total: number; idle: number; waiting: number };
  /**
   * Embedded only: a consistent SQL dump of the whole database (PGlite's pg_dump), taken while svc runs
   * (`svc backup`). A PostgreSQL server has its own tools for this.
   */
  dump?(): Promise<string>;
  /** LISTEN/NOTIFY on this database, for the bus (`platform/bus.ts`); never use it for data. */
  readonly notifications: NotificationTransport;
  close(): Promise<void>;
}

/**
 * PostgreSQL notifications. Channels are lowercase `[a-z0-9_]` identifiers of at most 63 characters.
 * Delivery is a hint: a lost connection loses notifications, reported through `onReconnect`.
 */
export interface NotificationTransport {
  listen(channel: string, deliver: (payload: string) => void): Promise<void>;
  unlisten(channel: string): Promise<void>;
  notify(channel: string, payload: string): Promise<void>;
  /** Called after the listening connection was lost and restored; listeners should re-read state. */
  onReconnect(handler: () => void): void;
}
