#!/usr/bin/env node
import { createServer } from "node:net";
import type pino from "pino";
import { createLogger } from "./platform/log.js";
import { startTracing } from "./platform/tracing.js";
import { ConfigError, isLoopbackHost, loadConfig, unknownSettings, type Config } from "./config.js";
import { startLine, type ServedPages } from "./start-line.js";
import { DataDirInUse, embeddedAnalyzeTask, openDatabase, type Database } from "./platform/db/index.js";
import { startMaintenance, type MaintenanceTask } from "./maintenance.js";
import { startHeapTrim } from "./platform/heap-trim.js";
import { createIntegrationReceipts } from "./modules/integrations/kinds/receipt-handlers.js";
import type { ReceiptProcessor } from "./modules/integrations/inbound-processor.js";
import { deleteOldFlows } from "./modules/secrets/mcp-oauth-store.js";
import { runFakeProvider } from "./runtime/models/fake-provider/cli.js";
import { leaseReaper, skillInstallDeadlines, startAgentWorker } from "./runtime/index.js";
import { unreachableMachines } from "./modules/machines/unreachable.js";
import { byoBindingsFollowConfig } from "./modules/machines/follow-config.js";
import { mcpRegistrySync } from "./modules/mcp-servers/registry-sync.js";
import { createScheduler, startScheduler } from "./modules/cron-triggers/scheduler.js";
import { createGatewayManager } from "./modules/integrations/kinds/discord/gateway-manager.js";
import { cronTargets } from "./modules/cron-triggers/targets.js";
import { buildServices, type Services } from "./services.js";
import { startPoolMachines } from "./modules/machines/lifecycle.js";
import { runBackup, runRestore } from "./backup.js";
import { serveBackups } from "./platform/db/backup/socket.js";
import { createWebhookSender, webhookDeliveriesTask } from "./modules/webhooks/sender.js";
import { machineOfflineWebhooks } from "./modules/machines/offline-webhooks.js";

const USAGE = `usage: svc <command>

commands:
  serve        API, agent worker and maintenance in one process (migrates first)
  api          the HTTP API only
  worker       the agent loop only: claims agents with work and runs their model calls and tools, and
               fires due cron triggers
  maintenance  housekeeping only (expired runtime leases, webhook deliveries, sessions, rate-limit windows, device flows,
               unreferenced artifact files)
  migrate      apply database migrations and exit
  backup <dir> [--include-master-key]
               copy the embedded database (and, if asked, its master key) into a new directory, while
               svc runs or not
  restore <dir> [--force]
               load a backup into the embedded data directory (svc stopped); --force sets aside what
               is there
  fake-provider [--port 8787] [--host 127.0.0.1]
               a deterministic model server speaking the OpenAI Chat Completions, OpenAI Responses and
               Anthropic Messages wire formats, for tests and offline trials

Configuration comes from the environment; see docs/configuration.md.`;

const COMMANDS = ["serve", "api", "worker", "maintenance", "migrate"] as const;
type Command = (typeof COMMANDS)[number];
const SHARED_DATABASE_ONLY = ["api", "worker", "maintenance"];

async function main(argv: string[]): Promise<number> {
  const command = argv[0];
  if (command === undefined || command === "help" || command === "--help" || command === "-h") {
    console.log(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command === "fake-provider") return runFakeProvider(argv.slice(1));
  if (![...COMMANDS, "backup", "restore"].includes(command)) {
    console.error(`svc: unknown command "${command}"\n\n${USAGE}`);
    return 2;
  }
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`svc: ${err.message}`);
      return 2;
    }
    throw err;
  }
  if (!config.databaseUrl && SHARED_DATABASE_ONLY.includes(command)) {
    // PGlite keeps its files to one process: a second one opening the data dir would corrupt it.
    console.error(`svc: "${command}" runs beside other svc processes and needs DATABASE_URL; the embedded database belongs to one process, so use "svc serve"`);
    return 2;
  }
  if (command === "backup" || command === "restore") {
    for (const warning of unknownSettings()) console.error(`svc: warning: ${warning}`);
    return command === "backup" ? runBackup(argv.slice(1), config) : runRestore(argv.slice(1), config);
  }
  const log = createLogger(config.logLevel, config.logFormat);
  for (const warning of unknownSettings()) log.warn(warning);
  return run(command as Command, config, log);
}

async function run(command: Command, config: Config, log: pino.Logger): Promise<number> {
  if (command === "serve" || command === "api") {
    // Said before the database is opened and migrated, which takes a while, rather than as a stack trace after it.
    const taken = await portProblem(config.host, config.port);
    if (taken) {
      console.error(`svc: ${taken}`);
      return 2;
    }
  }
  let db: Database;
  try {
    db = await openDatabase(config, { migrate: command === "serve" || command === "migrate" });
  } catch (err) {
    if (!(err instanceof DataDirInUse)) throw err;
    console.error(`svc: ${err.message}`);
    return 2;
  }
  if (command === "migrate") {
    await db.close();
    log.info("migrations applied");
    return 0;
  }
  const stops: Array<() => Promise<void>> = [];
  // Listened for before anything starts: a signal that comes while starting still stops svc cleanly.
  const signalled = waitForSignal(log);
  // First in, so last out: the spans of everything that stops before it are sent.
  if (config.tracing) stops.push(await startTracing(config.tracing, log));
  const { services, pages } = await startServices(command, config, db, log, stops);
  stops.push(startHeapTrim(config.heapTrimIntervalMs, log).stop);
  log.info({ command, database: db.kind, services, tracing: config.tracing !== undefined }, startLine(config, pages));
  await signalled;
  const deadline = setTimeout(() => {
    log.error("shutdown timed out; exiting");
    process.exit(1);
  }, config.shutdownTimeoutMs);
  deadline.unref();
  // Stop in reverse start order: stop taking requests, finish background work, then close the database.
  for (const stop of stops.reverse()) await stop().catch((err: unknown) => log.error({ err }, "shutdown step failed"));
  await db.close();
  log.info("svc stopped");
  return 0;
}

async function startServices(command: Command, config: Config, db: Database, log: pino.Logger, stops: Array<() => Promise<void>>) {
  const started: string[] = [];
  let pages: ServedPages | undefined;
  // Only a role that answers HTTP builds the Fastify app; the worker and maintenance need the services alone.
  // Loaded only by the roles that serve HTTP: a worker or maintenance process never loads Fastify.
  const app = command === "serve" || command === "api" ? await (await import("./app.js")).buildApp({ config, db, logger: log }) : undefined;
  const services = app?.services ?? buildServices(config, db);
  if (!app) stops.push(async () => services.close());
  // Every role handles integration receipts as they are stored, by any process (an inbound request, the
  // Gateway, a routed interaction, a schedule's firing); maintenance's tick takes whatever a lost hint leaves.
  const receipts = createIntegrationReceipts(db, services, config, (err) => log.error({ err }, "integration event handling failed"));
  await receipts.follow(services.bus);
  stops.push(() => receipts.stop());
  if (command === "serve" || command === "worker") {
    const worker = startAgentWorker({ db, services, config, log });
    stops.push(() => worker.stop());
    started.push(`worker (${config.runtime.workerConcurrency} slots)`);
    // Every worker polls the one schedule in the database; a due firing is claimed by exactly one of them.
    const scheduler = createScheduler({ db, handlers: cronTargets({ db, artifacts: services.artifacts }), leaseSeconds: config.runtime.schedulerLeaseSeconds, log });
    const schedulerLoop = startScheduler(scheduler, log, config.runtime.schedulerIntervalMs);
    stops.push(() => schedulerLoop.stop());
    started.push("scheduler");
    // Every worker offers to hold Discord Gateway connections; a lease gives each integration exactly one.
    const gateways = createGatewayManager({
      db,
      secrets: services.secrets,
      apiUrl: config.integrations.discordApiUrl,
      policy: { allowPrivateNetwork: config.allowPrivateNetwork },
      leaseSeconds: config.integrations.discordGatewayLeaseSeconds,
      log,
    });
    gateways.start();
    stops.push(() => gateways.stop());
    started.push("discord gateway");
  }
  if (command === "serve" || command === "maintenance") {
    // The webhook sender runs where maintenance runs: woken by NOTIFY as deliveries are written, by its own
    // timer for retries, and by maintenance's tick after anything a lost notification left (docs/webhooks.md).
    const webhooks = createWebhookSender({ db, cipher: services.cipher, outbound: config, onError: (err) => log.error({ err }, "webhook delivery failed") });
    await webhooks.follow(services.bus);
    stops.push(() => webhooks.stop());
    started.push("webhook sender");
    const tasks = [...maintenanceTasks(db, services, config, receipts), machineOfflineWebhooks(db), webhookDeliveriesTask(db, webhooks), ...embeddedAnalyzeTask(db, config.runtime.embeddedAnalyzeIntervalMs)];
    const maintenance = startMaintenance(tasks, log, config.runtime.maintenanceIntervalMs);
    stops.push(() => maintenance.stop());
    // Pool machines are made, restarted and deleted by the process that runs maintenance; it stops their
    // daemons when it stops, and starts them again when it starts (docs/machines.md).
    const poolMachines = await startPoolMachines({ db, config, log });
    stops.push(() => poolMachines.stop());
    started.push("maintenance");
  }
  if (command === "serve" && db.dump) {
    stops.push(await backupSocket(config, db.dump, log));
    started.push("backups on the data directory's socket");
  }
  if (app) {
    await app.http.listen({ host: config.host, port: config.port });
    stops.push(() => app.http.close());
    started.push(`api on ${config.host}:${config.port} (public URL ${config.publicUrl})`);
    pages = { console: app.http.hasRoute({ method: "GET", url: "/" }), apiDocs: app.http.hasRoute({ method: "GET", url: "/api/docs" }) };
    warnIfExposed(config, log);
  }
  return { services: started, pages };
}

/**
 * Why svc could not listen on host:port, or undefined when it can: a listen probe, closed again at once.
 * Another process may still take the port before svc listens; then the listen itself fails as before.
 */
function portProblem(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "EADDRINUSE") resolve(`port ${port} on ${host} is in use by another program; stop it, or set PORT to a free port`);
      else if (err.code === "EACCES") resolve(`svc may not listen on port ${port} on ${host} (${err.code}); set PORT to a port above 1023`);
      else if (err.code === "EADDRNOTAVAIL") resolve(`${host} is not an address of this machine; set HOST to one (127.0.0.1, 0.0.0.0)`);
      else resolve(`cannot listen on ${host}:${port}: ${err.message}`);
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}

/** Listening beyond loopback is the operator's choice; the log says what that opens (docs/operations.md). */
function warnIfExposed(config: Config, log: pino.Logger): void {
  if (isLoopbackHost(config.host)) return;
  const signup = {
    open: "sign-up is open: anyone who reaches it can create an account",
    invite: "sign-up needs an org invitation",
    closed: "sign-up is closed",
  }[config.signup];
  log.warn(
    { host: config.host, port: config.port, signup: config.signup, machine_providers: config.machines.providers },
    `svc is reachable from the network on ${config.host}:${config.port}; ${signup} (SVC_SIGNUP)`,
  );
}

/** `svc backup` reaches the running process here; without the socket, backups need svc stopped. */
async function backupSocket(config: Config, dump: () => Promise<string>, log: pino.Logger): Promise<() => Promise<void>> {
  try {
    return await serveBackups(config.dataDir, dump, (err) => log.error({ err }, "backup dump failed"));
  } catch (err) {
    log.warn({ err }, "backup socket unavailable: svc backup will need svc stopped");
    return async () => {};
  }
}

/** `receipts` is the process's own processor: the tick takes what its notifications left, with no second processor beside it. */
export function maintenanceTasks(db: Database, services: Services, config: Config, receipts: Pick<ReceiptProcessor, "runDue">): MaintenanceTask[] {
  return [
    leaseReaper(db, services),
    unreachableMachines(db, config),
    byoBindingsFollowConfig(db),
    skillInstallDeadlines(db, services),
    { name: "expired-sessions", run: () => services.identity.sweepExpired() },
    { name: "rate-limit-windows", run: () => services.rateLimiter.sweep() },
    { name: "expired-device-flows", run: () => services.deviceLogin.sweepExpired() },
    { name: "old-mcp-oauth-flows", run: () => deleteOldFlows(db.write) },
    { name: "orphan-blobs", run: () => services.artifacts.sweepOrphanBlobs() },
    { name: "orphan-skill-archives", run: () => services.skills.sweepOrphanBlobs() },
    mcpRegistrySync(db, config),
    { name: "integration-event-receipts", run: () => receipts.runDue() },
  ];
}

/**
 * Resolves at the first SIGTERM or SIGINT. The handlers stay: Ctrl-C on `npm start` signals svc more than
 * once (the terminal's SIGINT to the whole process group, npm passing it on, then the orphan watcher's
 * SIGTERM once npm has exited), and a signal without a handler would end svc in the middle of its
 * shutdown, its data directory still locked. The shutdown deadline bounds how long they are ignored.
 */
function waitForSignal(log: pino.Logger): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) return log.debug({ signal }, "already shutting down");
      stopping = true;
      log.info({ signal }, "shutting down");
      resolve();
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error("svc: fatal:", err);
    process.exit(1);
  },
);
