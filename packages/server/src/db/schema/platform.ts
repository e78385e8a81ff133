import { integer, pgTable, text } from "drizzle-orm/pg-core";
import { requiredTime } from "./columns.js";

/** Fixed-window counters shared by every process; one upsert per attempt. */
export const rateLimitBuckets = pgTable("rate_limit_buckets", {
  key: text("key").primaryKey(),
  windowStart: requiredTime("window_start"),
  count: integer("count").notNull(),
});
