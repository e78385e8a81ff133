/**
 * svc scaled out for the scale-out benchmark: on a new PostgreSQL database (`svc_bench_scale_<random>`), one
 * `svc maintenance`, `apis` × `svc api` behind HAProxy and `workers` × `svc worker`, each its own built process
 * as an operator runs them (docs/operations.md, "Running several processes").
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { migratePostgres } from "../packages/server/src/platform/db/index.js";
import { freePort } from "../packages/server/test/support/process.js";
import { startBalancer, type Balancer } from "./haproxy.js";
import { admin, progress, sleep, withDatabase } from "./lib.js";
import { startRole, type Child, type Role } from "./processes.js";

const STARTED_TIMEOUT_MS = 120_000;

export interface Shape {
  workers: number;
  apis: number;
}

/** "2x1": workers × APIs, as `--shapes` spells it. */
export const shapeName = (shape: Shape) => `${shape.workers}x${shape.apis}`;

/** An empty list is no shape (`--shapes=` with the kill run alone). */
export function parseShapes(list: string): Shape[] {
  return list.split(",").filter((item) => item.trim() !== "").map((item) => {
    const match = /^(\d+)x(\d+)$/.exec(item.trim());
    if (!match || Number(match[1]) < 1 || Number(match[2]) < 1) throw new Error(`--shapes: "${item}" is not WORKERSxAPIS (e.g. 2x1)`);
    return { workers: Number(match[1]), apis: Number(match[2]) };
  });
}

export interface Deployment {
  /** The balancer's URL: every client goes through it. */
  url: string;
  databaseName: string;
  apis: Child[];
  workers: Child[];
  maintenance: Child;
  balancer: Balancer;
  /** Every svc process, by its role. */
  processes(): Array<{ role: Role; child: Child }>;
  /** SQL on the benchmark's database, on one connection of the bench's own (named `svc-bench`). */
  query<T>(text: string, values?: unknown[]): Promise<T[]>;
  /** Stops every process (a killed one too), then drops the database. */
  close(): Promise<void>;
}

/** `env` is added to every role's environment (a shorter lease for the kill run, say). */
export async function startDeployment(serverUrl: string, shape: Shape, env: Record<string, string> = {}): Promise<Deployment> {
  const name = `svc_bench_scale_${randomBytes(4).toString("hex")}`;
  await admin(serverUrl, `CREATE DATABASE ${name}`);
  const databaseUrl = withDatabase(serverUrl, name);
  const dataDir = mkdtempSync(join(tmpdir(), "svc-scale-"));
  const started: Array<{ role: Role; child: Child }> = [];
  let balancer: Balancer | undefined;
  let bench: pg.Client | undefined;
  const close = async () => {
    await bench?.end().catch(() => {});
    await balancer?.stop();
    await Promise.all(started.map(({ child }) => child.stop()));
    await admin(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await migratePostgres(databaseUrl);
    bench = new pg.Client({ connectionString: named(databaseUrl, "svc-bench") });
    await bench.connect();
    const ports = await Promise.all(Array.from({ length: shape.apis }, () => freePort()));
    // The public URL is the balancer's, which clients (and the console's origin check) see; its port is known first.
    const publicPort = await freePort();
    const shared: Record<string, string> = {
      SVC_SECRET_KEY: "0".repeat(63) + "1",
      SVC_DATA_DIR: dataDir,
      HOST: "127.0.0.1",
      SVC_PUBLIC_URL: `http://127.0.0.1:${publicPort}`,
      // warn, as the load benchmark: at info the API logs a line per change and the worker two per step.
      SVC_LOG_LEVEL: "warn",
      // The fake provider listens on loopback, which a PostgreSQL-backed svc refuses by default.
      SVC_ALLOW_PRIVATE_NETWORK: "true",
      ...env,
    };
    const start = async (role: Role, index: number, port?: number) => {
      const appName = `svc-${role}-${index + 1}`;
      const own = { ...shared, DATABASE_URL: named(databaseUrl, appName), ...(port ? { PORT: String(port) } : {}) };
      const child = await startRole(role, own, () => listening(bench!, appName));
      started.push({ role, child });
    };
    // One at a time: starting several Node processes at once on a small machine only makes each slower.
    await start("maintenance", 0);
    for (const [i, port] of ports.entries()) await start("api", i, port);
    for (let i = 0; i < shape.workers; i++) await start("worker", i);
    balancer = await startBalancer(ports.map((port) => `127.0.0.1:${port}`), publicPort);
    progress(`scale-out ${shapeName(shape)}: maintenance, ${shape.apis} api, ${shape.workers} worker and haproxy ready on ${name}`);
  } catch (err) {
    await close();
    throw err;
  }
  const of = (role: Role) => started.filter((s) => s.role === role).map((s) => s.child);
  return {
    url: balancer.url,
    databaseName: name,
    apis: of("api"),
    workers: of("worker"),
    maintenance: of("maintenance")[0]!,
    balancer,
    processes: () => [...started],
    query: async <T>(text: string, values: unknown[] = []) => (await bench!.query(text, values)).rows as T[],
    close,
  };
}

/** The database URL with PostgreSQL's application_name set, so pg_stat_activity tells the processes apart. */
function named(url: string, applicationName: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set("application_name", applicationName);
  return parsed.toString();
}

/**
 * A worker or maintenance process serves no HTTP and, at SVC_LOG_LEVEL=warn, says nothing when it has started:
 * it is taken as started once its LISTEN connection (opened as it starts following notifications) shows in
 * pg_stat_activity. Bounded by STARTED_TIMEOUT_MS (a dead process fails earlier, in startRole).
 */
async function listening(bench: pg.Client, applicationName: string): Promise<void> {
  const deadline = Date.now() + STARTED_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const found = await bench.query("SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'", [applicationName]);
    if (found.rowCount) return;
    await sleep(200);
  }
  throw new Error(`${applicationName} did not LISTEN within ${STARTED_TIMEOUT_MS / 1000} s`);
}
