import { sql } from "drizzle-orm";
import { AppError } from "./errors.js";
import { rawCount, rawRows, type Database } from "./db/index.js";

export interface RateLimiter {
  /** Counts one attempt against `key`; throws 429 `rate_limited` once `limit` attempts fill the window. */
  hit(key: string, limit: number, windowSeconds: number): Promise<void>;
  /** Deletes windows that ended; run by maintenance. */
  sweep(): Promise<number>;
}

/**
 * Fixed-window counters in PostgreSQL, so every API process shares one budget per client. A hit is a
 * single upsert that restarts the window when it has ended; no row lock is held beyond the statement.
 */
export function createRateLimiter(db: Database): RateLimiter {
  return {
    async hit(key, limit, windowSeconds) {
      const rows = await rawRows<{ count: number; retry_after: number }>(db.write, sql`
        INSERT INTO rate_limit_buckets AS b (key, window_start, count)
        VALUES (${key}, statement_timestamp(), 1)
        ON CONFLICT (key) DO UPDATE SET
          window_start = CASE WHEN b.window_start <= statement_timestamp() - make_interval(secs => ${windowSeconds})
                              THEN statement_timestamp() ELSE b.window_start END,
          count = CASE WHEN b.window_start <= statement_timestamp() - make_interval(secs => ${windowSeconds})
                       THEN 1 ELSE b.count + 1 END
        RETURNING b.count,
          ceil(extract(epoch FROM b.window_start + make_interval(secs => ${windowSeconds}) - statement_timestamp()))::int AS retry_after`);
      const row = rows[0];
      if (row && row.count > limit) {
        throw new AppError("rate_limited", "too many attempts; try again later", {
          retryAfterSeconds: Math.max(1, Number(row.retry_after)),
        });
      }
    },
    async sweep() {
      // Windows are at most a day long; anything older than that has ended under every limit.
      return rawCount(db.write, sql`DELETE FROM rate_limit_buckets WHERE window_start < statement_timestamp() - interval '1 day'`);
    },
  };
}
