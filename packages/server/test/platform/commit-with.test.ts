import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawRows } from "../../src/platform/db/index.js";
import { useTestServer } from "../support/server.js";

/* Issue 8: a transaction's last statement takes its COMMIT along (`Tx.commitWith`), on both databases. */
const server = useTestServer();
const table = `commit_with_${Date.now()}`;
const insert = (id: string) => sql`INSERT INTO ${sql.raw(table)} (id) VALUES (${id})`;
const ids = async () => (await rawRows<{ id: string }>(server.db.read, sql`SELECT id FROM ${sql.raw(table)} ORDER BY id`)).map((row) => row.id);

/** Fails rather than hangs: on the embedded database a read outside a transaction waits for an open one. */
const within = <T>(work: Promise<T>, ms = 5_000) =>
  Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms))]);

beforeAll(async () => void (await server.db.write.execute(sql.raw(`CREATE TABLE ${table} (id text PRIMARY KEY)`))));
afterAll(async () => void (await server.db.write.execute(sql.raw(`DROP TABLE ${table}`))));

describe("Tx.commitWith", () => {
  it("has committed the transaction once the last statement is answered, before the transaction's callback returns", async () => {
    const seenBeforeReturn = await server.db.tx(async (tx) => {
      await tx.execute(insert("a1"));
      await tx.commitWith(() => tx.execute(insert("a2")));
      // Another connection (on the embedded database, the session outside any transaction) sees both rows.
      return within(ids());
    });
    expect(seenBeforeReturn).toEqual(["a1", "a2"]);
    expect(await ids()).toEqual(["a1", "a2"]);
  });

  it("rolls the whole transaction back when the last statement fails, reports that statement's error, and leaves the connection usable", async () => {
    const failed = server.db.tx(async (tx) => {
      await tx.execute(insert("b1"));
      await tx.commitWith(() => tx.execute(insert("a1")));
    });
    await expect(failed).rejects.toMatchObject({ cause: { code: "23505" } });
    expect(await ids()).toEqual(["a1", "a2"]);
    // Every pooled connection can still run a transaction of its own.
    await Promise.all(["b2", "b3", "b4"].map((id) => server.db.tx(async (tx) => tx.commitWith(() => tx.execute(insert(id))))));
    expect(await ids()).toEqual(["a1", "a2", "b2", "b3", "b4"]);
  });

  it("refuses a statement after the last one, and the connection stays usable", async () => {
    const late = server.db.tx(async (tx) => {
      await tx.commitWith(() => tx.execute(insert("c1")));
      await tx.execute(sql`SELECT 1`);
    });
    await expect(late).rejects.toMatchObject({ cause: { message: expect.stringMatching(/after the transaction's last one/) } });
    // What the last statement committed stays committed: an error after it cannot undo it.
    expect(await ids()).toContain("c1");
    expect(await server.db.tx(async (tx) => rawRows(tx, sql`SELECT 1 AS one`))).toEqual([{ one: 1 }]);
  });

  it("ends the transaction as usual when the last step sends no statement", async () => {
    const result = await server.db.tx(async (tx) => {
      await tx.execute(insert("d1"));
      return tx.commitWith(async () => "nothing sent");
    });
    expect(result).toBe("nothing sent");
    expect(await ids()).toContain("d1");
    // The request to commit behind the next statement ended with its transaction: the next transaction
    // (on PostgreSQL, the pool hands the same idle connection back) still rolls back as a whole.
    const next = server.db.tx(async (tx) => {
      await tx.execute(insert("d2"));
      throw new Error("roll back");
    });
    await expect(next).rejects.toThrow("roll back");
    expect(await ids()).not.toContain("d2");
  });

  it("is rolled back with the rest when the callback throws before its last statement", async () => {
    const thrown = server.db.tx(async (tx) => {
      await tx.execute(insert("e1"));
      throw new Error("changed its mind");
    });
    await expect(thrown).rejects.toThrow("changed its mind");
    expect(await ids()).not.toContain("e1");
  });
});
