import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect } from "vitest";
import { staleWorkspaces } from "../../../scripts/build-state.mjs";

/*
 * The built `svc` binary run as a child process, as people run it, against a real svc in the test's process.
 * CI builds before it tests; a build older than its sources is rebuilt here first, so a test never runs a
 * stale binary.
 */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../..");
const BIN = join(ROOT, "packages/cli/bin/svc.js");

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface SvcOptions {
  env?: Record<string, string>;
  input?: string;
  cwd?: string;
  onStderr?: (text: string) => void;
  onStdout?: (text: string) => void;
}

/** Runs `svc` against `server` (read when called): builds what is stale first, removes its directories after. */
export function useCli(server: { readonly url: string }) {
  beforeAll(() => {
    // In the root's order: the server's build reads @svc/protocol's, the CLI's the SDK's; the command
    // `svc machines connect` prints installs the svcd package svcd's build makes. Not the console's, which its own tests build (two builds of
    // one workspace at once would write over each other).
    const needed = ["packages/protocol", "packages/sdk", "packages/cli", "packages/daemon", "packages/server"];
    const stale = staleWorkspaces(ROOT).filter((w) => needed.includes(w));
    for (const workspace of stale) execFileSync("npm", ["run", "build", "-w", workspace], { cwd: ROOT, stdio: "ignore" });
  });
  const made: string[] = [];
  afterAll(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });

  /** A new temporary directory, removed after the file's tests. */
  function tempDir(prefix: string): string {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    made.push(dir);
    return dir;
  }

  /** A fresh config directory per user of the CLI, so no test sees another's login. */
  const configDir = () => tempDir("svc-cli-");

  function svc(args: string[], options: SvcOptions = {}): Promise<Run> {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env: { PATH: process.env["PATH"] ?? "", HOME: tmpdir(), SVC_URL: server.url, SVC_CONFIG_DIR: configDir(), ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      options.onStdout?.(stdout);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      options.onStderr?.(stderr);
    });
    child.stdin.end(options.input ?? "");
    return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
  }

  return { svc, tempDir, configDir };
}

/** The JSON a successful `--json` run printed. */
export const json = (run: Run) => {
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout);
};

/** The device code `svc login` printed, once it has. */
export const userCodeIn = (text: string) => /shows the code ([0-9A-F]{5}-[0-9A-F]{5})/.exec(text)?.[1];
