import { performance } from "node:perf_hooks";
import { sql } from "drizzle-orm";
import type { Database } from "./types.js";

/**
 * PGlite runs no autovacuum daemon, so nothing ever refreshes the planner's statistics: without them it
 * guesses row counts and may join whole tables before limiting (issue 8 measured event pages this way).
 * svc runs ANALYZE itself on the embedded database: after migrations, and periodically from maintenance.
 * A PostgreSQL server's autovacuum already does this, so nothing here touches it.
 */
export async function analyzeEmbedded(db: Database): Promise<void> {
  if (db.kind !== "embedded") return;
  await db.tx(async (tx) => void (await tx.execute(sql`ANALYZE`)));
}

/**
 * A maintenance task that analyzes the embedded database every `everyMs` (0: never). Maintenance ticks
 * more often than that, so the task keeps its own schedule; the first run waits a whole interval, since
 * opening the database with migrations has just analyzed it. The schedule is process-local and stored
 * nowhere, so the monotonic clock is the right one here, not the database's.
 */
export function embeddedAnalyzeTask(db: Database, everyMs: number): Array<{ name: string; run(): Promise<number> }> {
  if (db.kind !== "embedded" || everyMs <= 0) return [];
  let last = performance.now();
  return [
    {
      name: "embedded-analyze",
      async run() {
        if (performance.now() - last < everyMs) return 0;
        await analyzeEmbedded(db);
        last = performance.now();
        return 1;
      },
    },
  ];
}
