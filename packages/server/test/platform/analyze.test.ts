import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { startMaintenance } from "../../src/maintenance.js";
import { analyzeChangedTables, embeddedAnalyzeTask, rawRows } from "../../src/platform/db/index.js";
import { useTestServer } from "../support/server.js";

/* Issue 8, item 4: PGlite has no autovacuum, so svc analyzes the embedded database itself. */
const server = useTestServer();

async function userRowsEstimate(): Promise<number> {
  const [row] = await rawRows<{ reltuples: number }>(server.db.read, sql`SELECT reltuples::float8 AS reltuples FROM pg_class WHERE relname = 'users'`);
  return Number(row!.reltuples);
}

describe.skipIf(process.env["DATABASE_URL"])("ANALYZE on the embedded database", () => {
  it("refreshes the statistics of the tables that changed enough once the task's interval has passed, and the task stops cleanly", async () => {
    expect(await userRowsEstimate()).toBeLessThan(2);
    const [task] = embeddedAnalyzeTask(server.db, 60_000);
    expect(await task!.run()).toBe(0);
    // Autovacuum's rule: more than 50 changed rows (plus 10 % of the table) since the table's last ANALYZE.
    for (let i = 0; i < 60; i++) await server.api.signup();
    // The activity statistics reach pg_stat_user_tables when the session flushes them, within a few seconds.
    let analyzed = 0;
    for (let attempt = 0; attempt < 100 && analyzed === 0; attempt++) {
      await sleep(100);
      analyzed = await analyzeChangedTables(server.db);
    }
    expect(analyzed).toBeGreaterThanOrEqual(1);
    expect(await userRowsEstimate()).toBeGreaterThanOrEqual(60);
    const quiet = { debug: () => {}, warn: () => {} };
    const maintenance = startMaintenance(embeddedAnalyzeTask(server.db, 1), quiet as never, 5);
    await sleep(50);
    await maintenance.stop();
  });
});

describe.runIf(process.env["DATABASE_URL"])("ANALYZE on PostgreSQL", () => {
  it("is left to the server's autovacuum", () => {
    expect(embeddedAnalyzeTask(server.db, 1)).toEqual([]);
  });
});
