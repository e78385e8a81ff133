import { isNull, lt, or, sql, type AnyColumn, type SQL } from "drizzle-orm";
import { timestamp, uuid } from "drizzle-orm/pg-core";

/**
 * The database clock, truncated to milliseconds so a timestamp survives the round trip through a
 * JavaScript Date exactly; keyset cursors compare timestamps and must not lose microseconds.
 */
export const dbNow = sql`date_trunc('milliseconds', statement_timestamp())`;

/** The database clock `seconds` ahead, for expiry times. */
export const dbSecondsFromNow = (seconds: number): SQL => sql`${dbNow} + make_interval(secs => ${seconds})`;

/** A timestamp as epoch milliseconds (float8), for raw statements: every driver returns it as a number. */
export const epochMs = (column: SQL): SQL => sql`(extract(epoch from ${column}) * 1000)::float8`;

/** The database clock `seconds` back. */
export const dbSecondsAgo = (seconds: number): SQL => sql`${dbNow} - make_interval(secs => ${seconds})`;

/** The column is unset or older than `seconds`: throttles stamps such as last-used and last-seen times. */
export const unsetOrOlderThan = (column: AnyColumn, seconds: number): SQL =>
  or(isNull(column), lt(column, dbSecondsAgo(seconds)))!;

/** Primary keys are UUIDv7 made by the application, so an id is known before its row is written. */
export const idColumn = () => uuid("id").primaryKey();

export const createdAt = () => timestamp("created_at", { withTimezone: true }).notNull().default(dbNow);
export const updatedAt = () => timestamp("updated_at", { withTimezone: true }).notNull().default(dbNow);
export const optionalTime = (name: string) => timestamp(name, { withTimezone: true });
export const requiredTime = (name: string) => timestamp(name, { withTimezone: true }).notNull();
