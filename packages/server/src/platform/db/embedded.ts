import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/pglite";
import type { PGlite } from "@electric-sql/pglite";
import * as schema from "../../db/schema/index.js";
import { runTransaction } from "./transaction.js";
import type { AppDb, Database, NotificationTransport } from "./types.js";
import type { EmbeddedClient } from "./embedded-worker/client.js";

/**
 * svc's database over an embedded PostgreSQL: the worker thread `openDatabase` starts on the data
 * directory (claimed for this process), or a PGlite instance in this thread (benchmark baselines).
 */
export async function openEmbedded(source: { client: EmbeddedClient }): Promise<Database> {
  const { client } = source;
  // Drizzle's PGlite driver calls only `query` and `transaction`, which the worker's client answers alike.
  const db = drizzle({ client: client as PGlite, schema }) as unknown as AppDb;
  return {
    kind: "embedded",
    read: db,
    write: db,
    tx: (work) => runTransaction(db, work),
    ping: async () => void (await db.execute(sql`select 1`)),
    poolStats: () => ({ total: 1, idle: 0, waiting: 0 }),
    notifications: embeddedNotifications(client),
    dump: client.dump?.bind(client),
    close: () => client.close(),
  };
}

/** PGlite delivers NOTIFY to its own LISTENers; it is one process, so nothing is ever lost to a reconnect. */
function embeddedNotifications(client: EmbeddedClient): NotificationTransport {
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
