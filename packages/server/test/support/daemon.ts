import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { staleWorkspaces } from "../../../../scripts/build-state.mjs";
import { afterAll, expect } from "vitest";
import type { ApiClient } from "./client.js";
import { eventually } from "./agent-loop.js";
import { SVCD_ENTRY } from "./process.js";

/** Helpers for tests that run the real `svcd` entry point in child processes against a test server. */


export interface Daemon {
  child: ChildProcess;
  /** What it printed so far, for failure messages. */
  output(): string;
  exited: Promise<number | null>;
}

export function startDaemon(url: string, token: string, home: string, extraArgs: string[] = []): Daemon {
  // The token in the environment, as the docs show it (svcd takes no token in its arguments).
  const child = spawn(process.execPath, [...SVCD_ENTRY, "run", "--url", url, "--home", home, ...extraArgs], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, SVC_DAEMON_TOKEN: token } });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => output, exited };
}

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../../..");

/**
 * svcd's package tarball as svc serves it (/downloads/svcd.tgz), built first when missing or older than its
 * sources (as `npm start` would build it); its path.
 */
export function builtSvcdTarball(): string {
  const tarball = join(ROOT, "packages/daemon/dist/download/svcd.tgz");
  const stale = staleWorkspaces(ROOT);
  if (stale.includes("packages/protocol")) execFileSync("npm", ["run", "build", "-w", "@svc/protocol"], { cwd: ROOT, stdio: "ignore" });
  if (stale.includes("packages/daemon") || !existsSync(tarball)) execFileSync("npm", ["run", "build", "-w", "@svc/daemon"], { cwd: ROOT, stdio: "ignore" });
  return tarball;
}

export const tempDir = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));

/**
 * The daemons and temporary directories a test file starts: after its tests every daemon still running is
 * killed and every directory removed. `daemon` starts svcd against `server` (read when called).
 */
export function useDaemons(server: { readonly url: string }) {
  const daemons: Daemon[] = [];
  const dirs: string[] = [];
  afterAll(async () => {
    for (const started of daemons) {
      if (started.child.exitCode === null && started.child.signalCode === null) started.child.kill("SIGKILL");
      await started.exited;
    }
    for (const path of dirs) rmSync(path, { recursive: true, force: true });
  });
  return {
    dir(prefix: string): string {
      const path = tempDir(prefix);
      dirs.push(path);
      return path;
    },
    daemon(token: string, home: string): Daemon {
      const started = startDaemon(server.url, token, home);
      daemons.push(started);
      return started;
    },
  };
}

/** Connects a BYO machine granted to the project; its token and ids. */
export async function connectMachine(api: ApiClient, token: string, orgId: string, projectId: string, displayName: string) {
  const reply = await api.post(`/api/v1/orgs/${orgId}/machines/connect`, { display_name: displayName, project_ids: [projectId] }, { token });
  expect(reply.status, reply.text).toBe(201);
  return { machineId: reply.body.machine.id as string, daemonToken: reply.body.token as string, tokenId: reply.body.token_record.id as string };
}

export async function connectionState(api: ApiClient, token: string, orgId: string, machineId: string): Promise<string> {
  const reply = await api.get(`/api/v1/orgs/${orgId}/machines/${machineId}`, { token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.connection_state as string;
}

/** Waits (bounded) until the machine reads `state`. */
export const untilConnection = (api: ApiClient, token: string, orgId: string, machineId: string, state: string) =>
  eventually(() => connectionState(api, token, orgId, machineId), (s) => s === state);
