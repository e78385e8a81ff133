import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import * as schema from "../../db/schema/index.js";
import { runTransaction } from "./transaction.js";
import { createListener } from "./listener.js";
import { PreparingClient } from "./prepared-statements.js";
import type { AppDb, Database } from "./types.js";

export interface PostgresOptions {
  url: string;
  maxConnections?: number;
}

export function openPostgres(options: PostgresOptions): Database {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.maxConnections ?? 10,
    // A lost connection surfaces as a query error on the next use; an idle client error must not crash.
    idleTimeoutMillis: 30_000,
    Client: PreparingClient,
    // Statements of one transaction that do not depend on each other are sent together (see
    // docs/architecture.md, Storage); pipeline mode puts them on the wire at once, each with its own
    // Sync, so an error still fails only its own statement and the ones after it in the transaction.
    pipeline: true,
  });
  pool.on("error", () => {});
  const db = drizzle({ client: pool, schema }) as unknown as AppDb;
  const listener = createListener(options.url, pool);
  return {
    kind: "postgres",
    read: db,
    write: db,
    tx: (work) => runTransaction(db, work),
    ping: async () => void (await db.execute(sql`select 1`)),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    notifications: listener,
    close: async () => {
      await listener.close();
      await pool.end();
    },
  };
}
