import type { ExtractTablesWithRelations } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from "drizzle-orm/pg-core";
import type * as schema from "../../db/schema/index.js";

export type Schema = typeof schema;
export type AppDb = PgDatabase<PgQueryResultHKT, Schema>;
type DrizzleTx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;

/** A transaction handle; callbacks given to afterCommit run only once the commit succeeded. */
export type Tx = DrizzleTx & { afterCommit(hook: () => void): void };

export interface Database {
  readonly kind: "embedded" | "postgres";
  /** Runs `work` in one transaction; a thrown error rolls it back and after-commit hooks are dropped. */
  tx<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /** Reads outside an explicit transaction (a single statement is its own transaction). */
  readonly read: AppDb;
  ping(): Promise<void>;
  close(): Promise<void>;
}
