import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { rawRows } from "../../src/platform/db/index.js";
import { statementName } from "../../src/platform/db/prepared-statements.js";
import { useTestServer } from "../support/server.js";

/* Issue 8: svc's frequent parameterized statements are named prepared statements on PostgreSQL. */
const server = useTestServer();

describe("naming statements", () => {
  it("names a text from its third sighting on, keeps the name, and gives each text its own", () => {
    const text = `select ${Math.random()} where $1`;
    expect([statementName(text), statementName(text)]).toEqual([undefined, undefined]);
    const name = statementName(text);
    expect(name).toMatch(/^svc_\d+$/);
    expect(statementName(text)).toBe(name);
    const other = `select ${Math.random()} where $1`;
    [1, 2].forEach(() => statementName(other));
    expect(statementName(other)).not.toBe(name);
  });
});

describe.runIf(process.env["DATABASE_URL"])("prepared statements on PostgreSQL", () => {
  it("prepares a statement run often on the connection that runs it, and leaves one run once unprepared", async () => {
    const marker = `probe_${Date.now()}`;
    const seen = await server.db.tx(async (tx) => {
      for (let i = 0; i < 4; i++) await rawRows(tx, sql`select ${i}::int as n, ${marker}::text as often`);
      await rawRows(tx, sql`select ${marker}::text as once`);
      return rawRows<{ statement: string }>(tx, sql`select statement from pg_prepared_statements where statement like ${`%${"as often"}%`} or statement like ${`%${"as once"}%`}`);
    });
    expect(seen.map((row) => row.statement)).toEqual([expect.stringContaining("as often")]);
  });
});
