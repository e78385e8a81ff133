import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { exited, freePort, outputTail, ready } from "../support/process.js";
import { seedEmbeddedDataDir } from "../support/process-database.js";
import { staleWorkspaces } from "../../../../scripts/build-state.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../../..");
const scratch = mkdtempSync(join(tmpdir(), "svc-npm-start-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * `npm start` in the repository, as a newcomer runs it, on the embedded database in `dataDir`. `terminal`
 * gives it a process group of its own, as a shell does for a foreground job, so that a test can signal
 * the whole group as Ctrl-C does.
 */
function npmStart(dataDir: string, port: number, options: { terminal?: boolean; logLevel?: string } = {}): ChildProcess {
  const child = spawn("npm", ["start"], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: "", PORT: String(port), HOST: "127.0.0.1", SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: options.logLevel ?? "warn", SVC_LOG_FORMAT: "json" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: options.terminal === true,
  });
  // Ended with the test, passed or not: a child left running would hold its data directory.
  onTestFinished(() => void child.kill("SIGKILL"));
  return child;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits, for a bounded time, until process `pid` is gone; false if it is still there. */
async function gone(pid: number): Promise<boolean> {
  for (let tries = 0; tries < 300 && alive(pid); tries++) await new Promise((resolve) => setTimeout(resolve, 100));
  return !alive(pid);
}

/** Starts `npm start`, waits until svc answers, and gives the pid of the process holding the data directory. */
async function started(name: string, options: { terminal?: boolean; logLevel?: string } = {}) {
  const dataDir = join(scratch, name);
  // Migrated beforehand: a first start that migrates is the serve and quickstart tests' part, not this one's.
  if (!existsSync(dataDir)) seedEmbeddedDataDir(dataDir);
  const port = await freePort();
  const buildWasCurrent = staleWorkspaces(ROOT).length === 0;
  const npm = npmStart(dataDir, port, options);
  await ready(`http://127.0.0.1:${port}`, npm);
  const server = Number(readFileSync(join(dataDir, "svc.pid"), "utf8"));
  expect(server).toBeGreaterThan(0);
  // A build that was current is not run again; one that was not is.
  expect(outputTail(npm).includes("svc: building"), outputTail(npm)).toBe(!buildWasCurrent);
  return { dataDir, npm, server };
}

// svc on the embedded database whatever database the suite runs on: the PostgreSQL run would repeat this unchanged.
describe.skipIf(process.env["DATABASE_URL"])("npm start", () => {
  it("stops svc when it is sent SIGTERM, releasing the data directory", async () => {
    const { dataDir, npm, server } = await started("sigterm");
    npm.kill("SIGTERM");
    await exited(npm);
    expect(await gone(server)).toBe(true);
    expect(existsSync(join(dataDir, "svc.pid"))).toBe(false);
  });

  it("stops svc cleanly on Ctrl-C, every time: SIGINT to the whole process group", { timeout: 600_000 }, async () => {
    for (let round = 1; round <= 3; round++) {
      // The same data directory each round: a round that left it locked would fail the next one's start.
      const { dataDir, npm, server } = await started("ctrl-c", { terminal: true, logLevel: "info" });
      const piped = new Promise((resolve) => npm.stdout!.once("close", resolve));
      process.kill(-npm.pid!, "SIGINT");
      await exited(npm);
      expect(await gone(server), `round ${round}: svc still runs`).toBe(true);
      await piped;
      const output = outputTail(npm);
      expect(output, `round ${round}`).toContain('"msg":"svc stopped"');
      expect(existsSync(join(dataDir, "svc.pid")), `round ${round}: the pid file is left`).toBe(false);
    }
  });

  it("stops svc when npm itself is killed and cannot pass a signal on", async () => {
    const { dataDir, npm, server } = await started("sigkill");
    npm.kill("SIGKILL");
    await exited(npm);
    expect(await gone(server)).toBe(true);
    expect(existsSync(join(dataDir, "svc.pid"))).toBe(false);
  });
});

describe("the build check of npm start", () => {
  /** A repository of one workspace, built at `builtAt` from a source last changed at `changedAt` (seconds). */
  function repository(name: string, times: { builtAt?: number; changedAt: number }) {
    const root = join(scratch, name);
    const workspace = join(root, "packages/one");
    mkdirSync(join(workspace, "src"), { recursive: true });
    writeFileSync(join(root, "package.json"), JSON.stringify({ workspaces: ["packages/one"] }));
    writeFileSync(join(root, "tsconfig.base.json"), "{}");
    writeFileSync(join(workspace, "package.json"), JSON.stringify({ scripts: { build: "tsc" } }));
    writeFileSync(join(workspace, "src/main.ts"), "");
    for (const file of ["package.json", "tsconfig.base.json", "packages/one/package.json", "packages/one/src/main.ts"]) {
      utimesSync(join(root, file), 1000, 1000);
    }
    utimesSync(join(workspace, "src/main.ts"), times.changedAt, times.changedAt);
    if (times.builtAt !== undefined) {
      mkdirSync(join(workspace, "dist"));
      writeFileSync(join(workspace, "dist/main.js"), "");
      utimesSync(join(workspace, "dist/main.js"), times.builtAt, times.builtAt);
    }
    // Tests are no part of the build: a newer one does not make it stale.
    mkdirSync(join(workspace, "test"));
    writeFileSync(join(workspace, "test/main.test.ts"), "");
    return root;
  }

  it("builds a workspace that was never built or whose sources changed since, and nothing else", () => {
    expect(staleWorkspaces(repository("unbuilt", { changedAt: 2000 }))).toEqual(["packages/one"]);
    expect(staleWorkspaces(repository("changed", { builtAt: 2000, changedAt: 3000 }))).toEqual(["packages/one"]);
    expect(staleWorkspaces(repository("current", { builtAt: 3000, changedAt: 2000 }))).toEqual([]);
  });
});
