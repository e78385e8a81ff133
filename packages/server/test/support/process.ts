import type { ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { networkInterfaces } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { staleWorkspaces } from "../../../../scripts/build-state.mjs";

/** tsx by its path: a child started in another working directory (a pool machine's) would not resolve `tsx`. */
export const TSX = createRequire(import.meta.url).resolve("tsx");

/** Helpers for tests that run the real `svc` entry point in child processes. */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../../..");
const STALE = new Set(staleWorkspaces(ROOT));

/**
 * Node's arguments that run `workspace`'s entry point: its build when that is newer than every source it
 * is built from (CI builds before it tests), else its TypeScript sources through tsx, @svc/protocol's
 * included (the `@svc/source` export condition, as vitest uses). Never a stale build; the build when it
 * is current, because tsx compiles the sources anew in every child (seconds of CPU per start).
 */
function entryOf(workspace: "server" | "daemon"): string[] {
  const fresh = buildIsCurrent(workspace);
  const dir = join(ROOT, "packages", workspace);
  return fresh ? [join(dir, "dist/main.js")] : ["--conditions=@svc/source", "--import", TSX, join(dir, "src/main.ts")];
}

/** Whether `workspace`'s build (and @svc/protocol's, which it imports) is newer than every source it is built from. */
export function buildIsCurrent(workspace: "server" | "daemon"): boolean {
  return !STALE.has(`packages/${workspace}`) && !STALE.has("packages/protocol");
}

/** Node's arguments that run `svc` (the server's entry point), from its build when current. */
export const SVC_ENTRY = entryOf("server");

/** Node's arguments that run `svcd`, from its build when current. */
export const SVCD_ENTRY = entryOf("daemon");

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

export function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

/** How long a started svc may take to answer /readyz: generous, since a loaded CI machine is slow to start one. */
export const READY_TIMEOUT_MS = 150_000;
const TAIL_CHARS = 4000;
const tails = new WeakMap<ChildProcess, { text: string }>();

/**
 * The end of what `child` printed since the first call, read for as long as it runs (an unread pipe
 * would block its logging); empty for output it does not pipe.
 */
export function outputTail(child: ChildProcess): string {
  let tail = tails.get(child);
  if (!tail) {
    const kept = { text: "" };
    const keep = (chunk: Buffer) => (kept.text = (kept.text + chunk.toString("utf8")).slice(-TAIL_CHARS));
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    tails.set(child, kept);
    tail = kept;
  }
  return tail.text;
}

/**
 * Waits until `url` answers /readyz with 200, for at most READY_TIMEOUT_MS. Given the svc `child`, it fails
 * at once when the child exits, and either failure says how its output ended.
 */
export async function ready(url: string, child?: ChildProcess): Promise<void> {
  if (child) outputTail(child);
  const said = () => (child ? `; its output ended with:\n${outputTail(child) || "(nothing)"}` : "");
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child && (child.exitCode !== null || child.signalCode !== null)) {
      throw new Error(`svc exited (${child.exitCode ?? child.signalCode}) before it was ready at ${url}${said()}`);
    }
    try {
      if ((await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(10_000) })).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`svc did not become ready at ${url} within ${READY_TIMEOUT_MS / 1000} s${said()}`);
}

/** An IPv4 address of this machine that is not loopback (undefined on a machine without a network). */
export function externalAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((a) => a !== undefined && a.family === "IPv4" && !a.internal)?.address;
}
