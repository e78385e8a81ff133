import { mkdirSync } from "node:fs";
import type { Config } from "../../config.js";
import { lockDataDir } from "./data-dir-lock.js";
import { openEmbedded } from "./embedded.js";
import { migratePostgres } from "./migrate.js";
import { EmbeddedWorkerClient } from "./embedded-worker/client.js";
import { openPostgres } from "./postgres.js";
import type { Database } from "./types.js";

/** Opens the configured database; with `migrate`, applies pending migrations first. */
export async function openDatabase(config: Config, options: { migrate: boolean }): Promise<Database> {
  if (config.databaseUrl) {
    if (options.migrate) await migratePostgres(config.databaseUrl);
    return openPostgres({ url: config.databaseUrl });
  }
  mkdirSync(config.dataDir, { recursive: true });
  const release = lockDataDir(config.dataDir);
  try {
    const client = await EmbeddedWorkerClient.start({
      dataDir: `${config.dataDir}/pgdata`,
      migrate: options.migrate,
      sharedBuffersMb: config.embeddedSharedBuffersMb,
    });
    const db = await openEmbedded({ client });
    return {
      ...db,
      close: async () => {
        await db.close();
        release();
      },
    };
  } catch (err) {
    release();
    throw err;
  }
}
