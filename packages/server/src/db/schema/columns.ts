import { sql } from "drizzle-orm";
import { timestamp, uuid } from "drizzle-orm/pg-core";

/**
 * The database clock, truncated to milliseconds so a timestamp survives the round trip through a
 * JavaScript Date exactly; keyset cursors compare timestamps and must not lose microseconds.
 */
export const dbNow = sql`date_trunc('milliseconds', statement_timestamp())`;

/** Primary keys are UUIDv7 made by the application, so an id is known before its row is written. */
export const idColumn = () => uuid("id").primaryKey();

export const createdAt = () => timestamp("created_at", { withTimezone: true }).notNull().default(dbNow);
export const updatedAt = () => timestamp("updated_at", { withTimezone: true }).notNull().default(dbNow);
export const optionalTime = (name: string) => timestamp(name, { withTimezone: true });
export const requiredTime = (name: string) => timestamp(name, { withTimezone: true }).notNull();
