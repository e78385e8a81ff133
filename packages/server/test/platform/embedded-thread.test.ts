import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../support/server.js";

/*
 * Issue 9, F4: PGlite runs PostgreSQL as WebAssembly on the thread that calls it, so a busy embedded
 * database used to hold up every HTTP request, /healthz included. It now runs in a worker thread.
 * Order, not time, is asserted: the probe must finish while a long statement is still running.
 */
const server = useTestServer();

describe.skipIf(process.env["DATABASE_URL"])("the embedded database's thread", () => {
  it("answers /healthz while a long statement occupies the database", async () => {
    let slowDone = false;
    const slow = server.db.read.execute(sql`select pg_sleep(2)`).then(() => (slowDone = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const probe = await fetch(`${server.url}/healthz`);
    expect(probe.status).toBe(200);
    expect(slowDone).toBe(false);
    await slow;
  });

  it("serves statements, transactions and notifications across the thread, and rolls a failed transaction back", async () => {
    await server.db.write.execute(sql`create table thread_probe (id int primary key)`);
    await expect(
      server.db.tx(async (tx) => {
        await tx.execute(sql`insert into thread_probe values (1)`);
        await tx.execute(sql`insert into thread_probe values (1)`);
      }),
    ).rejects.toMatchObject({ cause: expect.objectContaining({ code: "23505", constraint: "thread_probe_pkey" }) });
    const rows = await server.db.read.execute(sql`select count(*)::int as n from thread_probe`);
    expect((rows as unknown as { rows: Array<{ n: number }> }).rows[0]!.n).toBe(0);

    const heard: string[] = [];
    await server.db.notifications.listen("thread_probe", (payload) => heard.push(payload));
    await server.db.tx(async (tx) => void (await tx.execute(sql`select pg_notify('thread_probe', 'committed')`)));
    await server.db.tx(async (tx) => {
      await tx.execute(sql`select pg_notify('thread_probe', 'rolled back')`);
      throw new Error("roll back");
    }).catch(() => {});
    await server.db.notifications.notify("thread_probe", "direct");
    await server.db.notifications.unlisten("thread_probe");
    expect(heard).toEqual(["committed", "direct"]);
  });

  it("takes a consistent dump and leaves the database's single session as it found it", async () => {
    const before = await server.api.userWithOrg("Dumped");
    const dump = await server.db.dump!();
    expect(dump).toContain("Dumped");
    // pg_dump's snapshot transaction and empty search_path must not leak into svc's next statements.
    await server.db.tx(async () => {
      throw new Error("roll back");
    }).catch(() => {});
    const after = await server.api.get(`/api/v1/orgs/${before.org.id}/projects`, { token: before.token });
    expect(after.status, after.text).toBe(200);
    expect((await server.api.userWithOrg("After")).org.name).toBe("After");
  });
});
