import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, inject } from "vitest";
import { buildApp, type App } from "../../src/app.js";
import { loadConfig, type Config } from "../../src/config.js";
import { EmbeddedWorkerClient, openEmbedded, openPostgres, type Database, type EmbeddedClient } from "../../src/platform/db/index.js";
import { adminQuery, withDatabase } from "./global-setup.js";
import { ApiClient } from "./client.js";
import { startMaintenance } from "../../src/maintenance.js";
import { leaseReaper, skillInstallDeadlines, startAgentWorker } from "../../src/runtime/index.js";
import { unreachableMachines } from "../../src/modules/machines/unreachable.js";
import { byoBindingsFollowConfig } from "../../src/modules/machines/follow-config.js";
import { startPoolMachines, type PoolMachinesLog } from "../../src/modules/machines/lifecycle.js";
import { buildIsCurrent, freePort, SVCD_ENTRY } from "./process.js";
import { createIntegrationReceipts } from "../../src/modules/integrations/kinds/receipt-handlers.js";
import { createWebhookSender } from "../../src/modules/webhooks/sender.js";
import { machineOfflineWebhooks } from "../../src/modules/machines/offline-webhooks.js";


export const TEST_ORIGIN = "http://svc.test";
export const TEST_SECRET_KEY = "0".repeat(63) + "1";

export interface TestServerOptions {
  /** Run the agent worker and lease maintenance in the server process, as `svc serve` does. */
  worker?: boolean;
  /**
   * Handle integration receipts as they are stored, as every svc role does (true by default). A test
   * that drives the receipts processor step by step turns it off.
   */
  followReceipts?: boolean;
  /**
   * Also run the pool machine loop: the local provider enabled, its machines real svcd children run from
   * source with tsx, sandboxed by bubblewrap as by default.
   */
  poolMachines?: boolean;
  /** Where the pool machine loop logs (nowhere by default). */
  poolLog?: PoolMachinesLog;
  /**
   * SVC_PUBLIC_URL is the server's own address (a free port taken first) instead of TEST_ORIGIN, for tests
   * whose processes reach svc at its public URL: the svcd installer downloads from it and svcd connects to it.
   */
  reachablePublicUrl?: boolean;
  /**
   * Run the webhook sender, as the maintenance role does (woken by NOTIFY and by its own retry timer); with
   * `worker`, maintenance also announces machines whose lease lapsed (`machine.offline`).
   */
  webhooks?: boolean;
}

export interface TestServer {
  /** The database URL of this server's own database (PostgreSQL only), for processes started by a test. */
  databaseUrl: string | undefined;
  url: string;
  config: Config;
  db: Database;
  /** The client of the embedded database's worker behind `db`, for counting its statements. */
  pglite: EmbeddedClient | undefined;
  app: App;
  api: ApiClient;
  close(): Promise<void>;
}

/**
 * A real svc over real HTTP on a loopback port, on a fresh clone of the migrated database: PGlite by
 * default, PostgreSQL when DATABASE_URL is set. Each call gets its own database.
 */
export async function startTestServer(env: Record<string, string> = {}, options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-data-"));
  const port = options.reachablePublicUrl ? await freePort() : 0;
  const publicUrl = options.reachablePublicUrl ? `http://127.0.0.1:${port}` : TEST_ORIGIN;
  const config = loadConfig({
    SVC_DATA_DIR: dataDir,
    SVC_PUBLIC_URL: publicUrl,
    SVC_SECRET_KEY: TEST_SECRET_KEY,
    SVC_RATE_LIMIT_AUTH: "100000",
    SVC_RATE_LIMIT_DEVICE: "100000",
    SVC_LOG_LEVEL: "silent",
    SVC_WORKER_CONCURRENCY: "4",
    SVC_WORKER_POLL_MS: "200",
    // The least cost svc accepts: nearly every test signs a user up, and at the default each hash is about
    // 0.1 s of CPU. Sign-up and sign-in still run scrypt with the same code; the process tests keep the default.
    SVC_PASSWORD_HASH_COST: "10",
    ...(options.poolMachines
      ? { SVC_MACHINE_PROVIDERS: "local", SVC_LOCAL_DAEMON_COMMAND: JSON.stringify([process.execPath, ...SVCD_ENTRY]), SVC_LOCAL_MACHINE_ISOLATION: "bubblewrap" }
      : {}),
    ...env,
  });
  const { db, drop, databaseUrl, pglite } = await cloneDatabase();
  const app = await buildApp({ config, db, logger: false });
  const address = await app.http.listen({ host: "127.0.0.1", port });
  const quiet = { info: () => {}, warn: () => {}, error: () => {} };
  const worker = options.worker ? startAgentWorker({ db, services: app.services, config, log: quiet }) : undefined;
  const maintenance = options.worker ? startMaintenance([leaseReaper(db, app.services), unreachableMachines(db, config), byoBindingsFollowConfig(db), skillInstallDeadlines(db, app.services), ...(options.webhooks ? [machineOfflineWebhooks(db)] : [])], quiet as never, config.runtime.maintenanceIntervalMs) : undefined;
  const receipts = options.followReceipts === false ? undefined : createIntegrationReceipts(db, app.services, config);
  await receipts?.follow(app.services.bus);
  const webhooks = options.webhooks ? createWebhookSender({ db, cipher: app.services.cipher, outbound: config }) : undefined;
  await webhooks?.follow(app.services.bus);
  const poolMachines = options.poolMachines ? await startPoolMachines({ db, config, log: options.poolLog ?? { warn: () => {}, error: () => {}, debug: () => {} }, url: address }) : undefined;
  return {
    databaseUrl,
    url: address,
    config,
    db,
    pglite,
    app,
    api: new ApiClient(address, config.publicUrl),
    async close() {
      await poolMachines?.stop();
      await maintenance?.stop();
      await worker?.stop();
      await receipts?.stop();
      await webhooks?.stop();
      await app.http.close();
      await db.close();
      await drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A test server for the whole file: started before its tests, closed after them. The returned object
 * reads through to the running server, so it can be declared at the top of a file.
 */
export function useTestServer(env: Record<string, string> = {}, options: TestServerOptions = {}): TestServer {
  let current: TestServer | undefined;
  beforeAll(async () => {
    current = await startTestServer(env, options);
  });
  afterAll(async () => {
    await current?.close();
  });
  const running = (): TestServer => {
    if (!current) throw new Error("the test server starts in beforeAll; use it inside hooks and tests");
    return current;
  };
  return {
    get databaseUrl() {
      return running().databaseUrl;
    },
    get url() {
      return running().url;
    },
    get config() {
      return running().config;
    },
    get db() {
      return running().db;
    },
    get pglite() {
      return running().pglite;
    },
    get app() {
      return running().app;
    },
    get api() {
      return running().api;
    },
    close: () => running().close(),
  };
}

async function cloneDatabase(): Promise<{ db: Database; drop: () => Promise<void>; databaseUrl?: string; pglite?: EmbeddedClient }> {
  const url = process.env["DATABASE_URL"];
  if (url) {
    const name = `svc_t_${inject("runId")}_${randomBytes(4).toString("hex")}`;
    await adminQuery(url, `CREATE DATABASE ${name} TEMPLATE ${inject("postgresTemplate")}`);
    const db = openPostgres({ url: withDatabase(url, name), maxConnections: 5 });
    return { db, databaseUrl: withDatabase(url, name), drop: () => adminQuery(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).then(() => undefined) };
  }
  // The embedded database in its worker thread, as `svc serve` runs it, started from the migrated template.
  const client = await (await embeddedWorkerClient()).start({ loadDataDir: readFileSync(inject("embeddedTemplate")), migrate: false });
  return { db: await openEmbedded({ client }), drop: async () => {}, pglite: client };
}

/**
 * The embedded database's worker client, from the server's build when that is current (CI builds before it
 * tests), else from sources as before. Loaded from sources, the client's worker thread has to register
 * tsx and compile host.ts and its imports anew in every thread: about 1.3 s of CPU more per test server
 * (4.8 s instead of 3.5 s measured), and the suite starts over a hundred of them. Built, the thread runs
 * host.js as `svc serve` does. Never a stale build: the same rule as the process tests' SVC_ENTRY.
 */
async function embeddedWorkerClient(): Promise<Pick<typeof EmbeddedWorkerClient, "start">> {
  if (!buildIsCurrent("server")) return EmbeddedWorkerClient;
  builtClient ??= import(pathToFileURL(BUILT_CLIENT).href).then((module: { EmbeddedWorkerClient: typeof EmbeddedWorkerClient }) => module.EmbeddedWorkerClient);
  return builtClient;
}

const BUILT_CLIENT = join(dirname(fileURLToPath(import.meta.url)), "../../dist/platform/db/embedded-worker/client.js");
let builtClient: Promise<typeof EmbeddedWorkerClient> | undefined;
