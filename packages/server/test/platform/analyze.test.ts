import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { startMaintenance } from "../../src/maintenance.js";
import { embeddedAnalyzeTask, rawRows } from "../../src/platform/db/index.js";
import { useTestServer } from "../support/server.js";

/* Issue 8, item 4: PGlite has no autovacuum, so svc analyzes the embedded database itself. */
const server = useTestServer();

async function userRowsEstimate(): Promise<number> {
  const [row] = await rawRows<{ reltuples: number }>(server.db.read, sql`SELECT reltuples::float8 AS reltuples FROM pg_class WHERE relname = 'users'`);
  return Number(row!.reltuples);
}

describe.skipIf(process.env["DATABASE_URL"])("ANALYZE on the embedded database", () => {
  it("is refreshed by the maintenance task once its interval has passed, and the task stops cleanly", async () => {
    expect(await userRowsEstimate()).toBeLessThan(2);
    await server.api.signup();
    await server.api.signup();
    const [task] = embeddedAnalyzeTask(server.db, 20);
    expect(await task!.run()).toBe(0);
    await sleep(30);
    expect(await task!.run()).toBe(1);
    expect(await userRowsEstimate()).toBeGreaterThanOrEqual(2);
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
