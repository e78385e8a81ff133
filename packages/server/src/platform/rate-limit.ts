import { sql } from "drizzle-orm";
import { AppError } from "./errors.js";
import { rawCount, rawRows, type Database } from "./db/index.js";

/** A counter's value in its current window, and the seconds until that window ends. */
export interface WindowCount {
  count: number;
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /** Counts one attempt against `key`; throws 429 `rate_limited` once `limit` attempts fill the window. */
  hit(key: string, limit: number, windowSeconds: number): Promise<void>;
  /** Counts one event against `key` and returns the count of its window, this one included. */
  add(key: string, windowSeconds: number): Promise<WindowCount>;
  /** Takes back one `add` against `key`, for an attempt that turned out not to count. */
  takeBack(key: string): Promise<void>;
  /** Deletes windows that ended; run by maintenance. */
  sweep(): Promise<number>;
}

export function rateLimited(retryAfterSeconds: number): AppError {
  return new AppError("rate_limited", "too many attempts; try again later", { retryAfterSeconds: Math.max(1, retryAfterSeconds) });
}

/**
 * Fixed-window counters in PostgreSQL, so every API process shares one budget per client. A count is a
 * single upsert that restarts the window when it has ended; no row lock is held beyond the statement.
 */
export function createRateLimiter(db: Database): RateLimiter {
  async function add(key: string, windowSeconds: number): Promise<WindowCount> {
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
    const row = rows[0]!;
    return { count: Number(row.count), retryAfterSeconds: Number(row.retry_after) };
  }

  return {
    add,
    async hit(key, limit, windowSeconds) {
      const { count, retryAfterSeconds } = await add(key, windowSeconds);
      if (count > limit) throw rateLimited(retryAfterSeconds);
    },
    async takeBack(key) {
      await rawCount(db.write, sql`UPDATE rate_limit_buckets SET count = count - 1 WHERE key = ${key} AND count > 0`);
    },
    async sweep() {
      // Windows are at most a day long; anything older than that has ended under every limit.
      return rawCount(db.write, sql`DELETE FROM rate_limit_buckets WHERE window_start < statement_timestamp() - interval '1 day'`);
    },
  };
}
