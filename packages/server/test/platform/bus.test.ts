import { beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { createBus, type Bus } from "../../src/platform/bus.js";
import { openPostgres, rawRows, type Tx } from "../../src/platform/db/index.js";
import { useTestServer } from "../support/server.js";

const server = useTestServer();
let bus: Bus;
beforeAll(async () => {
  bus = createBus(server.db.notifications);
});

/** Resolves with the payloads a channel received once `count` arrived (bounded wait). */
function collect(channel: string, count: number): { payloads: string[]; done: Promise<string[]>; stop: () => Promise<void> } {
  const payloads: string[] = [];
  let stop: () => Promise<void> = async () => {};
  const done = new Promise<string[]>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${payloads.length}/${count} on ${channel}`)), 10_000);
    void bus
      .subscribe(channel, (payload) => {
        payloads.push(payload);
        if (payloads.length === count) {
          clearTimeout(timer);
          resolve(payloads);
        }
      })
      .then((unsubscribe) => (stop = unsubscribe));
  });
  return { payloads, done, stop: () => stop() };
}

async function settle(): Promise<void> {
  await server.db.ping();
  await new Promise((resolve) => setTimeout(resolve, 100));
}

describe("the notification bus", () => {
  it("delivers a publish to every subscriber of the channel and to no other", async () => {
    const unsubscribeA = await bus.subscribe("bus_test_a", () => {});
    const a = collect("bus_test_a", 2);
    const b = collect("bus_test_b", 1);
    await settle();
    await bus.publish("bus_test_a", "one");
    await bus.publish("bus_test_b", "other");
    await bus.publish("bus_test_a", "two");
    expect(await a.done).toEqual(["one", "two"]);
    expect(await b.done).toEqual(["other"]);
    await unsubscribeA();
    await a.stop();
    await bus.publish("bus_test_a", "after");
    await settle();
    expect(a.payloads).toEqual(["one", "two"]);
  });

  it("delivers a NOTIFY sent inside a transaction on commit, once per transaction, and never after a rollback", async () => {
    const seen = collect("bus_test_tx", 2);
    await settle();
    const notify = (tx: Tx, payload: string) => tx.execute(sql`select pg_notify('bus_test_tx', ${payload})`);
    await server.db.tx(async (tx) => {
      await notify(tx, "first");
      await notify(tx, "first");
    });
    await server.db
      .tx(async (tx) => {
        await notify(tx, "rolled back");
        throw new Error("roll back");
      })
      .catch(() => {});
    await server.db.tx((tx) => notify(tx, "second"));
    expect(await seen.done).toEqual(["first", "second"]);
    await settle();
    expect(seen.payloads).toEqual(["first", "second"]);
  });

  it.runIf(process.env["DATABASE_URL"])("carries hints between processes and recovers a lost listening connection", async () => {
    const url = new URL(process.env["DATABASE_URL"]!);
    const [current] = await rawRows<{ db: string }>(server.db.read, sql`select current_database() as db`);
    url.pathname = `/${current!.db}`;
    const other = openPostgres({ url: url.toString() });
    try {
      const reconnected = new Promise<void>((resolve) => bus.onReconnect(resolve));
      const seen = collect("bus_test_remote", 2);
      await settle();
      await createBus(other.notifications).publish("bus_test_remote", "from another pool");
      await new Promise((resolve) => setTimeout(resolve, 200));
      await other.read.execute(
        sql`select pg_terminate_backend(pid) from pg_stat_activity where query like 'LISTEN%' and pid <> pg_backend_pid() and datname = current_database()`,
      );
      await reconnected;
      await createBus(other.notifications).publish("bus_test_remote", "after reconnect");
      expect(await seen.done).toEqual(["from another pool", "after reconnect"]);
    } finally {
      await other.close();
    }
  });
});
