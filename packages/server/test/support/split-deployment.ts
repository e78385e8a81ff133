import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { inject } from "vitest";
import { adminQuery, withDatabase } from "./global-setup.js";
import { exited, freePort, READY_TIMEOUT_MS, SVC_ENTRY } from "./process.js";

/**
 * svc scaled out for a test: `svc api`, `svc worker` and `svc maintenance` as separate OS processes on one
 * fresh PostgreSQL database (only PostgreSQL can be shared; the embedded database belongs to one process).
 */
export interface SplitDeployment {
  /** The API's base URL. */
  url: string;
  databaseUrl: string;
  /** Starts one role and resolves once it has logged that it started (at most 30 s). */
  start(role: "api" | "worker" | "maintenance"): Promise<ChildProcess>;
  /** Runs SQL on the shared database, for facts the API does not show (runtime locks, attempts). */
  query<T>(text: string, values?: unknown[]): Promise<T[]>;
  /** Kills what still runs, then drops the database. */
  close(): Promise<void>;
}

/**
 * `env` is added to the roles' shared environment: a short lease and a fast maintenance tick by default,
 * so a dead worker's claim is reaped within seconds.
 */
export async function startSplitDeployment(adminUrl: string, env: Record<string, string> = {}): Promise<SplitDeployment> {
  // The run id in the name lets the run's teardown drop the database if this file never gets to.
  const name = `svc_split_${inject("runId")}_${randomBytes(4).toString("hex")}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${name} TEMPLATE ${inject("postgresTemplate")}`);
  const databaseUrl = withDatabase(adminUrl, name);
  const dataDir = mkdtempSync(join(tmpdir(), "svc-split-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const shared = {
    DATABASE_URL: databaseUrl,
    SVC_SECRET_KEY: "0".repeat(63) + "1",
    SVC_DATA_DIR: dataDir,
    PORT: String(port),
    HOST: "127.0.0.1",
    SVC_PUBLIC_URL: url,
    // `started` reads the start line ("svc is ready: …"), logged at info.
    SVC_LOG_LEVEL: "info",
    SVC_ALLOW_PRIVATE_NETWORK: "true",
    SVC_WORKER_POLL_MS: "200",
    SVC_RUNTIME_LEASE_SECONDS: "2",
    SVC_MAINTENANCE_INTERVAL_MS: "300",
    ...env,
  };
  const children: ChildProcess[] = [];
  return {
    url,
    databaseUrl,
    async start(role) {
      const child = spawn(process.execPath, [...SVC_ENTRY, role], { env: { ...process.env, ...shared }, stdio: ["ignore", "pipe", "inherit"] });
      children.push(child);
      await started(child);
      return child;
    },
    query: (text, values) => query(databaseUrl, text, values),
    async close() {
      for (const child of children) {
        if (child.exitCode !== null || child.signalCode !== null) continue;
        child.kill("SIGKILL");
        await exited(child);
      }
      await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Resolves once the process has logged that it started (at most READY_TIMEOUT_MS). Its stdout is read for as long as
 * it runs, keeping only a tail for errors: an unread pipe fills up and blocks the process's logging.
 */
function started(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let tail = "";
    let done = false;
    const timer = setTimeout(() => reject(new Error(`process did not start within ${READY_TIMEOUT_MS / 1000} s: ${tail}`)), READY_TIMEOUT_MS);
    child.stdout!.on("data", (chunk: Buffer) => {
      tail += chunk.toString();
      if (!done && tail.includes('"msg":"svc is ready')) {
        done = true;
        clearTimeout(timer);
        resolve();
      }
      tail = tail.slice(-2000);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`process exited with ${code} before starting: ${tail}`));
    });
  });
}

async function query<T>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}
