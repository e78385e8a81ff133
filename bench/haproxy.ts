/**
 * HAProxy (Debian's package) in front of the scale-out benchmark's `svc api` processes, started by the bench as its
 * own child with a config written to a temporary directory: never the system service.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../packages/server/test/support/process.js";
import { sleep } from "./lib.js";
import { stopChild } from "./processes.js";

const READY_TIMEOUT_MS = 30_000;

export interface Balancer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** "HAProxy 2.6.12-1+deb12u4", or undefined when haproxy is not installed. */
export function haproxyVersion(): string | undefined {
  const run = spawnSync("haproxy", ["-v"], { encoding: "utf8" });
  if (run.error || run.status !== 0) return undefined;
  return `HAProxy ${/version (\S+)/.exec(run.stdout)?.[1] ?? "(version unknown)"}`;
}

/**
 * The config the bench runs, and the one docs/operations.md shows: round robin over the APIs, each checked on
 * /readyz. An event stream is a plain HTTP response that stays open, so the client and server inactivity
 * timeouts apply to it (not only `timeout tunnel`, which covers upgraded connections): all three are an hour,
 * well above svc's 25 s heartbeat. A request whose connection to a dead API is refused is sent to another one
 * (`retries`, `option redispatch`): safe, since the dead API never saw it.
 */
export function haproxyConfig(port: number, backends: string[]): string {
  return [
    "global",
    // One thread: the bench shares a small machine; one thread forwards tens of thousands of requests a second.
    "  nbthread 1",
    "  maxconn 4096",
    "defaults",
    "  mode http",
    "  option http-keep-alive",
    // The client's address for svc's rate limits, read only with SVC_TRUST_PROXY=true (left unset by the bench).
    "  option forwardfor",
    "  timeout connect 5s",
    "  timeout http-request 10s",
    "  timeout http-keep-alive 30s",
    "  timeout client 1h",
    "  timeout server 1h",
    "  timeout tunnel 1h",
    "  retries 2",
    "  option redispatch",
    "frontend svc",
    `  bind 127.0.0.1:${port}`,
    "  default_backend svc_api",
    "backend svc_api",
    "  balance roundrobin",
    "  option httpchk GET /readyz",
    "  http-check expect status 200",
    "  default-server inter 500ms fall 2 rise 2",
    ...backends.map((address, i) => `  server api${i + 1} ${address} check`),
    "",
  ].join("\n");
}

/** `haproxy -f <cfg> -db` (foreground) on loopback `port` (a free one by default); ready once /readyz answers 200 through it. */
export async function startBalancer(backends: string[], port?: number): Promise<Balancer> {
  port ??= await freePort();
  const dir = mkdtempSync(join(tmpdir(), "svc-haproxy-"));
  const file = join(dir, "haproxy.cfg");
  writeFileSync(file, haproxyConfig(port, backends));
  const child = spawn("haproxy", ["-f", file, "-db"], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (chunk: Buffer) => (output = (output + chunk.toString("utf8")).slice(-4000));
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await untilServing(url, child, () => output);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, pid: child.pid!, stop };
}

async function untilServing(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`haproxy exited (${child.exitCode ?? child.signalCode}):\n${output()}`);
    try {
      if ((await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) })).status === 200) return;
    } catch {
      // not listening yet, or no API marked up yet
    }
    await sleep(100);
  }
  throw new Error(`haproxy did not serve /readyz within ${READY_TIMEOUT_MS / 1000} s:\n${output()}`);
}
