import { eq, sql } from "drizzle-orm";
import { integer, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { rawRows } from "../../src/platform/db/index.js";
import { builtOnce } from "../../src/platform/db/prepared.js";
import { PreparingClient, statementName } from "../../src/platform/db/prepared-statements.js";
import { useTestServer } from "../support/server.js";

/* Issue 8: svc's frequent parameterized statements are named prepared statements, on both databases. */
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

describe("prepared statements", () => {
  it("prepares a statement run often on the session that runs it, and leaves one run once unprepared", async () => {
    const marker = `probe_${Date.now()}`;
    const seen = await server.db.tx(async (tx) => {
      for (let i = 0; i < 4; i++) await rawRows(tx, sql`select ${i}::int as n, ${marker}::text as often`);
      await rawRows(tx, sql`select ${marker}::text as once`);
      return rawRows<{ statement: string }>(tx, sql`select statement from pg_prepared_statements where statement like ${`%${"as often"}%`} or statement like ${`%${"as once"}%`}`);
    });
    expect(seen.map((row) => row.statement)).toEqual([expect.stringContaining("as often")]);
  });
});

describe.skipIf(!process.env["DATABASE_URL"])("a transaction's BEGIN on PostgreSQL", () => {
  const connected = async (): Promise<pg.Client> => {
    const client: pg.Client = new PreparingClient({ connectionString: process.env["DATABASE_URL"], pipeline: true } as pg.ClientConfig);
    await client.connect();
    return client;
  };
  /** Bytes the client has read from PostgreSQL: an answer received shows here. */
  const received = (client: pg.Client) => (client as unknown as { connection: { stream: { bytesRead: number } } }).connection.stream.bytesRead;

  it("is answered without waiting for PostgreSQL, and the statements behind it run inside the transaction", async () => {
    const client = await connected();
    try {
      const before = received(client);
      await client.query("begin");
      expect(received(client)).toBe(before);
      const [inside] = (await client.query("select now() = statement_timestamp() as first, txid_current_if_assigned() is null as fresh")).rows;
      await client.query("create temporary table begin_probe (n int)");
      await client.query("rollback");
      expect(inside).toEqual({ first: false, fresh: true });
      // The table went with the rollback: it was made inside the transaction BEGIN opened.
      await expect(client.query("select * from begin_probe")).rejects.toMatchObject({ code: "42P01" });
    } finally {
      await client.end();
    }
  });

  it("fails the next statement with BEGIN's error when the connection is gone", async () => {
    const client = await connected();
    const killer = await connected();
    try {
      // The terminated connection also reports its end as an error event, maybe before the kill's answer.
      client.on("error", () => {});
      const pid = (client as unknown as { processID: number }).processID;
      await killer.query("select pg_terminate_backend($1)", [pid]);
      await client.query("begin");
      await expect(client.query("select 1")).rejects.toThrow();
    } finally {
      await killer.end();
      await client.end().catch(() => {});
    }
  });
});

describe.skipIf(process.env["DATABASE_URL"])("prepared statements on the embedded database", () => {
  it("answers a named statement as an unnamed one: the same rows, types and parameters, inside and outside transactions", async () => {
    const marker = `probe_${Date.now()}`;
    const statement = (i: number) =>
      sql`select ${i}::int as n, ${marker}::text as label, ${JSON.stringify({ i })}::jsonb as doc, ${new Date(0).toISOString()}::timestamptz as at, ${i % 2 === 0}::boolean as even`;
    const outside = [];
    for (let i = 0; i < 4; i++) outside.push((await rawRows(server.db.read, statement(i)))[0]);
    const inside = await server.db.tx(async (tx) => {
      const rows = [];
      for (let i = 4; i < 6; i++) rows.push((await rawRows(tx, statement(i)))[0]);
      return rows;
    });
    expect([...outside, ...inside]).toEqual(
      [0, 1, 2, 3, 4, 5].map((i) => ({ n: i, label: marker, doc: { i }, at: expect.stringMatching(/^1970-01-01/), even: i % 2 === 0 })),
    );
  });

  it("keeps a failed named statement's error and leaves the session usable", async () => {
    const failing = (i: number) => sql`select ${i}::int / 0 as boom`;
    for (let i = 0; i < 4; i++) await expect(rawRows(server.db.read, failing(i))).rejects.toMatchObject({ cause: { code: "22012" } });
    expect(await rawRows(server.db.read, sql`select ${1}::int as ok`)).toEqual([{ ok: 1 }]);
  });
});

describe("queries built once", () => {
  it("builds a query on the first handle only and runs each copy on its own transaction's connection", async () => {
    const table = `built_once_${Date.now()}`;
    await server.db.write.execute(sql.raw(`CREATE TABLE ${table} (id text PRIMARY KEY)`));
    let builds = 0;
    const countOf = builtOnce((db) => {
      builds++;
      return db
        .select({ n: sql<number>`count(*)::int` })
        .from(sql.raw(table))
        .where(sql`id = ${sql.placeholder("id")}`)
        .prepare(`svc_test_${table}`);
    });
    const count = async (db: Parameters<typeof countOf>[0], id: string) => (await countOf(db).execute({ id }))[0]!.n;

    expect(await count(server.db.read, "a")).toBe(0);
    // Uncommitted rows are visible only on the transaction's own connection.
    const inside = await server.db.tx(async (tx) => {
      await tx.execute(sql`INSERT INTO ${sql.raw(table)} (id) VALUES ('a')`);
      return [await count(tx, "a"), await count(tx, "a")];
    });
    const rolledBack = server.db.tx(async (tx) => {
      await tx.execute(sql`INSERT INTO ${sql.raw(table)} (id) VALUES ('b')`);
      expect(await count(tx, "b")).toBe(1);
      throw new Error("roll back");
    });
    await expect(rolledBack).rejects.toThrow("roll back");
    expect([...inside, await count(server.db.read, "a"), await count(server.db.read, "b")]).toEqual([1, 1, 1, 0]);
    expect(builds).toBe(1);
    await server.db.write.execute(sql.raw(`DROP TABLE ${table}`));
  });

  it("maps rows as drizzle does: nested groups, decoders, and a left-joined group null only when its row is missing", async () => {
    const suffix = Date.now();
    const parents = pgTable(`mapped_parent_${suffix}`, { id: text("id").primaryKey(), name: text("name") });
    const children = pgTable(`mapped_child_${suffix}`, {
      id: text("id").primaryKey(),
      parentId: text("parent_id").notNull(),
      note: text("note"),
      at: timestamp("at", { withTimezone: true }),
      doc: jsonb("doc"),
      size: integer("size"),
    });
    await server.db.write.execute(sql.raw(`CREATE TABLE mapped_parent_${suffix} (id text PRIMARY KEY, name text)`));
    await server.db.write.execute(
      sql.raw(`CREATE TABLE mapped_child_${suffix} (id text PRIMARY KEY, parent_id text NOT NULL, note text, at timestamptz, doc jsonb, size int)`),
    );
    await server.db.write.insert(parents).values([{ id: "p1", name: "one" }, { id: "p2", name: null }, { id: "p3", name: "three" }]);
    // p2's child has null columns (but exists); p3 has no child at all.
    await server.db.write.insert(children).values([
      { id: "c1", parentId: "p1", note: "n", at: new Date("2026-01-02T03:04:05.678Z"), doc: { a: [1, "x"] }, size: 3 },
      { id: "c2", parentId: "p2", note: null, at: null, doc: null, size: null },
    ]);
    const query = (db: Parameters<ReturnType<typeof builtOnce>>[0]) =>
      db
        .select({
          id: parents.id,
          name: parents.name,
          doubled: sql<number>`length(${parents.id}) * 2`.mapWith(Number),
          child: { id: children.id, note: children.note, at: children.at, doc: children.doc, size: children.size },
          mixed: { parentName: parents.name, childNote: children.note },
        })
        .from(parents)
        .leftJoin(children, eq(children.parentId, parents.id))
        .where(sql`${parents.id} like ${sql.placeholder("pattern")}`)
        .orderBy(parents.id);
    const compiled = builtOnce((db) => query(db).prepare(`svc_test_mapped_${suffix}`));
    const viaDrizzle = await query(server.db.read).execute({ pattern: "p%" });
    const viaCompiled = await compiled(server.db.read).execute({ pattern: "p%" });
    expect(viaCompiled).toEqual(viaDrizzle);
    expect(viaCompiled.map((row) => row.child)).toEqual([
      { id: "c1", note: "n", at: new Date("2026-01-02T03:04:05.678Z"), doc: { a: [1, "x"] }, size: 3 },
      { id: "c2", note: null, at: null, doc: null, size: null },
      null,
    ]);
    expect(viaCompiled.map((row) => [row.doubled, row.mixed])).toEqual([
      [4, { parentName: "one", childNote: "n" }],
      [4, { parentName: null, childNote: null }],
      [4, { parentName: "three", childNote: null }],
    ]);
    await server.db.write.execute(sql.raw(`DROP TABLE mapped_child_${suffix}`));
    await server.db.write.execute(sql.raw(`DROP TABLE mapped_parent_${suffix}`));
  });
});
