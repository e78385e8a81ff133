import type { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/pglite";
import * as schema from "../../db/schema/index.js";
import { runTransaction } from "./transaction.js";
import type { AppDb, Database, NotificationTransport } from "./types.js";

/**
 * svc's database over an open PGlite instance. `openDatabase` opens the data directory (and claims it
 * for this process); tests and benchmarks pass in-memory instances.
 */
export async function openEmbedded(source: { client: PGlite }): Promise<Database> {
  const { client } = source;
  const db = drizzle({ client, schema }) as unknown as AppDb;
  return {
    kind: "embedded",
    read: db,
    write: db,
    tx: (work) => runTransaction(db, work),
    ping: async () => void (await db.execute(sql`select 1`)),
    poolStats: () => ({ total: 1, idle: 0, waiting: 0 }),
    notifications: embeddedNotifications(client),
    close: () => client.close(),
  };
}

/** PGlite delivers NOTIFY to its own LISTENers; it is one process, so nothing is ever lost to a reconnect. */
function embeddedNotifications(client: PGlite): NotificationTransport {
  const stops = new Map<string, () => Promise<void>>();
  return {
    async listen(channel, deliver) {
      stops.set(channel, await client.listen(channel, deliver));
    },
    async unlisten(channel) {
      const stop = stops.get(channel);
      stops.delete(channel);
      await stop?.();
    },
    async notify(channel, payload) {
      await client.query("SELECT pg_notify($1, $2)", [channel, payload]);
    },
    onReconnect() {},
  };
}
