/**
 * Child processes for the load benchmark: `svc serve` as `npm start` runs it (built, then
 * `node packages/server/dist/main.js serve`), the fake model provider, and a bare Fastify server. Each
 * runs on its own so its memory is measured on its own and the load generator's event loop never
 * delays its answers.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { exited, freePort, ready } from "../packages/server/test/support/process.js";
import { admin, progress, withDatabase, type DbKind } from "./lib.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const MAIN = join(root, "packages", "server", "dist", "main.js");
const STOP_GRACE_MS = 15_000;
// Loading the built server takes tens of seconds on a 2-core machine shared with other jobs; more than 30 s was seen.
const START_TIMEOUT_MS = 120_000;

export interface Child {
  url: string;
  pid: number;
  /** Resident memory of the process and every process it started, in MB (Linux /proc). */
  rssMb(): number;
  /** The last few kB the process wrote, for error messages. */
  output(): string;
  /** How the process ended ("exit code 1", "signal SIGKILL"), or undefined while it runs. */
  ended(): string | undefined;
  /** Connections the kernel completed that the process has not accepted yet (Linux /proc/net/tcp). */
  acceptQueue(): number;
  /** SIGKILL, as a crash would end it (no shutdown), resolving once it has exited. */
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

let built = false;
/** Builds the server and the protocol package it imports once per benchmark run, so dist/ matches the sources measured. */
export function buildServer(): void {
  if (built) return;
  progress("load: building packages/protocol and packages/server (npm run build -w @svc/protocol -w @svc/server)");
  execFileSync("npm", ["run", "build", "-w", "@svc/protocol", "-w", "@svc/server"], { cwd: root, stdio: ["ignore", "ignore", "inherit"], timeout: 180_000 });
  built = true;
}

/**
 * The environment `npm start` gives svc (package.json's start script): glibc's malloc keeps at most two arenas and
 * returns every block over 128 kB to the system when freed (docs/performance.md, "Memory"). A user's own value wins.
 */
export const NPM_START_ENV: Record<string, string> = {
  MALLOC_ARENA_MAX: process.env["MALLOC_ARENA_MAX"] ?? "2",
  MALLOC_MMAP_THRESHOLD_: process.env["MALLOC_MMAP_THRESHOLD_"] ?? "131072",
};

/** `svc serve` on a new database of `kind`: a fresh data directory, or a new PostgreSQL database, started as `npm start` starts it. */
export async function startSvc(kind: DbKind): Promise<Child> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), "svc-load-"));
  const env: Record<string, string> = {
    ...NPM_START_ENV,
    PORT: String(port),
    HOST: "127.0.0.1",
    SVC_PUBLIC_URL: url,
    SVC_DATA_DIR: dataDir,
    // warn rather than the default info: at info Fastify logs two lines per request, which would measure
    // pino and a pipe rather than svc.
    SVC_LOG_LEVEL: "warn",
    // The fake provider listens on loopback, which a PostgreSQL-backed svc refuses by default.
    SVC_ALLOW_PRIVATE_NETWORK: "true",
    DATABASE_URL: "",
  };
  let drop = async () => {};
  if (kind === "postgres") {
    const server = process.env["DATABASE_URL"];
    if (!server) throw new Error("DATABASE_URL is required for the postgres run");
    const name = `svc_load_${randomBytes(4).toString("hex")}`;
    await admin(server, `CREATE DATABASE ${name}`);
    env["DATABASE_URL"] = withDatabase(server, name);
    env["SVC_SECRET_KEY"] = "0".repeat(63) + "1";
    drop = async () => void (await admin(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  }
  const child = spawnChild([MAIN, "serve"], env);
  try {
    await untilReady(child, ready(url));
  } catch (err) {
    await stopChild(child.process);
    await drop();
    throw err;
  }
  return {
    url,
    pid: child.process.pid!,
    rssMb: () => treeRssMb(child.process.pid!),
    output: child.output,
    ended: () => endOf(child.process),
    acceptQueue: () => acceptQueue(port),
    kill9: () => killNow(child.process),
    async stop() {
      await stopChild(child.process);
      await drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** `svc fake-provider` on a free port; `url` is its API base URL (…/v1). */
export async function startProviderProcess(): Promise<Child> {
  const port = await freePort();
  const child = spawnChild([MAIN, "fake-provider", "--port", String(port)], {});
  await untilReady(child, child.line(/listening/));
  return childOf(`http://127.0.0.1:${port}/v1`, port, child);
}

/**
 * The baseline server: Fastify with svc's `/healthz` route (same path, same response schema) and nothing
 * else. Plain node, no loader, so its memory is a floor for a Fastify process.
 */
const BARE_SERVER = `
import Fastify from "fastify";
const app = Fastify({ logger: false });
const schema = { response: { 200: { type: "object", properties: { status: { type: "string" } } } } };
app.get("/healthz", { schema }, async () => ({ status: "ok" }));
await app.listen({ host: "127.0.0.1", port: Number(process.env.PORT) });
console.log("listening");
process.once("SIGTERM", () => app.close().then(() => process.exit(0)));
`;

export async function startBareFastify(): Promise<Child> {
  const port = await freePort();
  const child = spawnChild(["--input-type=module", "-e", BARE_SERVER], { PORT: String(port) });
  await untilReady(child, child.line(/listening/));
  return childOf(`http://127.0.0.1:${port}`, port, child);
}

/** The roles of a scaled-out svc (docs/configuration.md): each its own process on one PostgreSQL database. */
export type Role = "api" | "worker" | "maintenance";

/**
 * `svc <role>` built, on the database `env` names (DATABASE_URL; the roles do not migrate). An API is ready when
 * its /readyz answers at `env.PORT`; a worker or maintenance process serves no HTTP, so `started` says when it is.
 */
export async function startRole(role: Role, env: Record<string, string>, started?: () => Promise<void>): Promise<Child> {
  const port = Number(env["PORT"] ?? 0);
  const url = role === "api" ? `http://127.0.0.1:${port}` : "";
  const child = spawnChild([MAIN, role], { ...NPM_START_ENV, ...env });
  try {
    await untilReady(child, role === "api" ? ready(url) : (started?.() ?? Promise.resolve()));
  } catch (err) {
    await stopChild(child.process);
    throw err;
  }
  return childOf(url, port, child);
}

function childOf(url: string, port: number, child: Spawned): Child {
  const pid = child.process.pid!;
  return {
    url,
    pid,
    rssMb: () => treeRssMb(pid),
    output: child.output,
    ended: () => endOf(child.process),
    acceptQueue: () => acceptQueue(port),
    kill9: () => killNow(child.process),
    stop: () => stopChild(child.process),
  };
}

async function killNow(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = exited(child);
  child.kill("SIGKILL");
  await gone;
}

/**
 * The accept queue of the socket listening on 127.0.0.1:`port`: for a listening socket, the rx_queue
 * column of /proc/net/tcp. A queue that grows means the process is not getting round to accept().
 */
export function acceptQueue(port: number): number {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  try {
    for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n")) {
      const [, address, , state, queues] = line.trim().split(/\s+/);
      if (address === local && state === "0A") return parseInt(queues!.split(":")[1]!, 16);
    }
  } catch {
    // not Linux
  }
  return 0;
}

function endOf(child: ChildProcess): string | undefined {
  if (child.signalCode !== null) return `signal ${child.signalCode}`;
  return child.exitCode !== null ? `exit code ${child.exitCode}` : undefined;
}

interface Spawned {
  process: ChildProcess;
  output(): string;
  /** Resolves when the process writes a line matching `pattern`. */
  line(pattern: RegExp): Promise<void>;
}

function spawnChild(args: string[], env: Record<string, string>): Spawned {
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let tail = "";
  const watchers: Array<{ pattern: RegExp; resolve: () => void }> = [];
  const take = (chunk: Buffer) => {
    tail = (tail + chunk.toString("utf8")).slice(-4096);
    for (const watcher of watchers.filter((w) => w.pattern.test(tail))) {
      watchers.splice(watchers.indexOf(watcher), 1);
      watcher.resolve();
    }
  };
  child.stdout!.on("data", take);
  child.stderr!.on("data", take);
  return {
    process: child,
    output: () => tail,
    line: (pattern) => (pattern.test(tail) ? Promise.resolve() : new Promise((resolve) => watchers.push({ pattern, resolve }))),
  };
}

/** Waits for `started`, failing fast when the process exits first and after START_TIMEOUT_MS at most. */
async function untilReady(child: Spawned, started: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const died = exited(child.process).then((code) => {
    throw new Error(`the process exited with ${code} before it was ready:\n${child.output()}`);
  });
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not ready after ${START_TIMEOUT_MS} ms:\n${child.output()}`)), START_TIMEOUT_MS);
  });
  try {
    await Promise.race([started, died, late]);
  } finally {
    clearTimeout(timer);
    died.catch(() => {});
  }
}

/** SIGTERM, then SIGKILL after STOP_GRACE_MS: a stop never waits longer than that. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = exited(child);
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
  await gone;
  clearTimeout(timer);
}

/**
 * VmRSS of `pid` plus its descendants. Summed over the tree so that memory moved into a helper process
 * (a database process, say) still counts as svc's; threads are already part of their process's VmRSS.
 */
export function treeRssMb(pid: number): number {
  let kb = 0;
  for (const id of descendantsAndSelf(pid)) {
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${id}/status`, "utf8"));
      kb += Number(match?.[1] ?? 0);
    } catch {
      // the process ended between listing and reading
    }
  }
  return kb / 1024;
}

function descendantsAndSelf(pid: number): number[] {
  const all = [pid];
  for (let i = 0; i < all.length; i++) {
    try {
      for (const task of readdirSync(`/proc/${all[i]}/task`)) {
        const children = readFileSync(`/proc/${all[i]}/task/${task}/children`, "utf8").trim();
        if (children) all.push(...children.split(/\s+/).map(Number));
      }
    } catch {
      // gone already
    }
  }
  return all;
}
