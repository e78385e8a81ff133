#!/usr/bin/env node
import type pino from "pino";
import { createLogger } from "./platform/log.js";
import { ConfigError, loadConfig, type Config } from "./config.js";
import { DataDirInUse, embeddedAnalyzeTask, openDatabase, type Database } from "./platform/db/index.js";
import { startMaintenance, type MaintenanceTask } from "./maintenance.js";
import { runFakeProvider } from "./runtime/models/fake-provider/cli.js";
import { leaseReaper, startAgentWorker } from "./runtime/index.js";
import { buildServices, type Services } from "./services.js";

const USAGE = `usage: svc <command>

commands:
  serve        API, agent worker and maintenance in one process (migrates first)
  api          the HTTP API only
  worker       the agent loop only: claims agents with work and runs their model calls and tools
  maintenance  housekeeping only (expired runtime leases, sessions, rate-limit windows, device flows,
               unreferenced artifact files)
  migrate      apply database migrations and exit
  fake-provider [--port 8787] [--host 127.0.0.1]
               a deterministic model server speaking the OpenAI Chat Completions, OpenAI Responses and
               Anthropic Messages wire formats, for tests and offline trials

Configuration comes from the environment; see docs/configuration.md.`;

type Command = "serve" | "api" | "worker" | "maintenance" | "migrate";
const SHARED_DATABASE_ONLY = ["api", "worker", "maintenance"];

async function main(argv: string[]): Promise<number> {
  const command = argv[0];
  if (command === undefined || command === "help" || command === "--help" || command === "-h") {
    console.log(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command === "fake-provider") return runFakeProvider(argv.slice(1));
  if (!["serve", "api", "worker", "maintenance", "migrate"].includes(command)) {
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
  const log = createLogger(config.logLevel);
  return run(command as Command, config, log);
}

async function run(command: Command, config: Config, log: pino.Logger): Promise<number> {
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
  const services = await startServices(command, config, db, log, stops);
  log.info({ command, database: db.kind, services }, "svc started");
  await waitForSignal(log);
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
  // Only a role that answers HTTP builds the Fastify app; the worker and maintenance need the services alone.
  // Loaded only by the roles that serve HTTP: a worker or maintenance process never loads Fastify.
  const app = command === "serve" || command === "api" ? await (await import("./app.js")).buildApp({ config, db, logger: log }) : undefined;
  const services = app?.services ?? buildServices(config, db);
  if (!app) stops.push(async () => services.close());
  if (command === "serve" || command === "worker") {
    const worker = startAgentWorker({ db, services, config, log });
    stops.push(() => worker.stop());
    started.push(`worker (${config.runtime.workerConcurrency} slots)`);
  }
  if (command === "serve" || command === "maintenance") {
    const tasks = [...maintenanceTasks(db, services), ...embeddedAnalyzeTask(db, config.runtime.embeddedAnalyzeIntervalMs)];
    const maintenance = startMaintenance(tasks, log, config.runtime.maintenanceIntervalMs);
    stops.push(() => maintenance.stop());
    started.push("maintenance");
  }
  if (app) {
    await app.http.listen({ host: config.host, port: config.port });
    stops.push(() => app.http.close());
    started.push(`api on ${config.host}:${config.port} (public URL ${config.publicUrl})`);
  }
  return started;
}

export function maintenanceTasks(db: Database, services: Services): MaintenanceTask[] {
  return [
    leaseReaper(db, services),
    { name: "expired-sessions", run: () => services.identity.sweepExpired() },
    { name: "rate-limit-windows", run: () => services.rateLimiter.sweep() },
    { name: "expired-device-flows", run: () => services.deviceLogin.sweepExpired() },
    { name: "orphan-blobs", run: () => services.artifacts.sweepOrphanBlobs() },
    { name: "orphan-skill-archives", run: () => services.skills.sweepOrphanBlobs() },
  ];
}

function waitForSignal(log: pino.Logger): Promise<void> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      log.info({ signal }, "shutting down");
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
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
