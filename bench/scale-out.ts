/**
 * Issue 34, item 4: svc scaled out on one PostgreSQL. For each shape (workers × APIs), one `svc maintenance`,
 * the `svc api` processes behind HAProxy and the `svc worker` processes, all built and each its own process;
 * agents kept busy with queued inputs and readers, all through the balancer, for a fixed time. Measured: model
 * steps per second (from the database), request latency by kind, PostgreSQL connections and CPU by process
 * group (scale-usage.ts). The kill run (scale-kill.ts) kills an API and a worker under load.
 */
import { cpus } from "node:os";
import { performance } from "node:perf_hooks";
import { fmt, progress, summary, type BenchResult, type Row } from "./lib.js";
import { Connections, Recorder, Steps, TIMEOUT_MS, type RequestKind } from "./load-clients.js";
import { setUp, track } from "./load.js";
import { AGENTS_PER_SENDER, drive, launchSteps, modelOutputs, type Busy } from "./scale-load.js";
import { buildServer, startProviderProcess } from "./processes.js";
import { haproxyVersion } from "./haproxy.js";
import { killRun, killResult } from "./scale-kill.js";
import { parseShapes, shapeName, startDeployment, type Shape } from "./scale-deployment.js";
import { UsageSampler, type CpuPart, type Usage } from "./scale-usage.js";

export interface ScaleOptions {
  shapes: Shape[];
  /** Agents kept busy with queued inputs. */
  agents: number;
  /** Length of each shape's measurement window. */
  seconds: number;
  /** Closed-loop readers (a page of agents, an agent's events, /healthz), beside the input senders. */
  readers: number;
  /** Whether to run the kill run (2 workers × 2 APIs, one of each killed with SIGKILL under load). */
  kill: boolean;
}

export const SCALE_DEFAULTS = { shapes: "1x1,2x1,4x1,1x2,2x2,4x2", agents: 100, seconds: 30, readers: 20 };
export const READ_KINDS: RequestKind[] = ["list agents", "events page", "healthz"];

export function scaleOptions(args: Map<string, string>): ScaleOptions {
  const count = (flag: string, fallback: number, least: number) => {
    const value = Number(args.get(flag) ?? fallback);
    if (!Number.isInteger(value) || value < least) throw new Error(`--${flag}: a whole number of at least ${least}, not "${args.get(flag)}"`);
    return value;
  };
  return {
    shapes: parseShapes(args.get("shapes") ?? SCALE_DEFAULTS.shapes),
    agents: count("scale-agents", SCALE_DEFAULTS.agents, 1),
    seconds: count("scale-seconds", SCALE_DEFAULTS.seconds, 1),
    readers: count("scale-readers", SCALE_DEFAULTS.readers, 0),
    kill: args.get("scale-kill") !== "no",
  };
}

/** The shapes, then the kill run; nothing (one line said) without DATABASE_URL or haproxy. */
export async function scaleOut(options: ScaleOptions): Promise<BenchResult[]> {
  const server = process.env["DATABASE_URL"];
  const haproxy = haproxyVersion();
  if (!server || !haproxy) {
    console.log(`scale-out: skipped: ${!server ? "it runs on PostgreSQL only (set DATABASE_URL)" : "haproxy is not installed (apt-get install haproxy)"}`);
    return [];
  }
  buildServer();
  const provider = await startProviderProcess();
  try {
    const runs: ShapeRun[] = [];
    for (const shape of options.shapes) runs.push(await runShape(server, provider, shape, options));
    const results = runs.length > 0 ? [shapeResult(options, runs, haproxy)] : [];
    if (options.kill) results.push(killResult(await killRun(server, provider.url, options)));
    return results;
  } finally {
    await provider.stop();
  }
}

export interface ShapeRun {
  shape: Shape;
  steps: number;
  clients: Recorder;
  usage: Usage;
  backlog: number;
  /** Failures of the step-counting streams. */
  bookkeeping: Recorder;
}

async function runShape(server: string, provider: { url: string; pid: number }, shape: Shape, options: ScaleOptions): Promise<ShapeRun> {
  const deployment = await startDeployment(server, shape);
  const connections = new Connections(deployment.url);
  const stopTracking = new AbortController();
  const stopped = new Promise<void>((resolve) => stopTracking.signal.addEventListener("abort", () => resolve(), { once: true }));
  const bookkeeping = new Recorder();
  let trackers: Array<Promise<void>> = [];
  try {
    const { project, ids, target } = await setUp(deployment.url, provider.url, options.agents);
    const steps = new Steps(ids.length);
    trackers = ids.map((id, agent) => track(bookkeeping, connections.open(true), target, `${project.base}/agents/${id}/events/stream`, stopped, () => steps.stepped(agent)));
    await launchSteps(steps, ids.length);
    const busy: Busy = { deployment, connections, target, base: project.base, ids, steps };
    progress(`scale-out ${shapeName(shape)}: ${ids.length} agents ready; ${options.seconds} s of load`);
    const sampler = new UsageSampler(deployment, cpus().length, { haproxy: deployment.balancer.pid, provider: provider.pid });
    const before = await modelOutputs(deployment);
    await sampler.start();
    const clients = new Recorder();
    let usage: Usage;
    try {
      await Promise.all(drive(busy, clients, performance.now() + options.seconds * 1000, options.readers));
    } finally {
      usage = await sampler.stop();
    }
    const recorded = (await modelOutputs(deployment)) - before;
    progress(`scale-out ${shapeName(shape)}: ${recorded} steps in ${usage.seconds.toFixed(1)} s`);
    return { shape, steps: recorded, clients, usage, backlog: steps.backlog(), bookkeeping };
  } finally {
    stopTracking.abort();
    await Promise.all(trackers);
    await connections.close();
    await deployment.close();
  }
}

/* ---------- the result ---------- */

/** Latencies of `kind`, each timed-out request counted as TIMEOUT_MS (a lower bound, as the load benchmark does). */
const latencies = (recorder: Recorder, kind: RequestKind) => [...(recorder.latencies.get(kind) ?? []), ...Array.from({ length: recorder.failed(kind, "timeout") }, () => TIMEOUT_MS)];
const pct = (share: number | undefined) => (share === undefined ? "–" : `${(share * 100).toFixed(0)}%`);

function shapeResult(options: ScaleOptions, runs: ShapeRun[], haproxy: string): BenchResult {
  const baseline = runs.find((r) => r.shape.workers === 1 && r.shape.apis === 1) ?? runs[0]!;
  const rate = (run: ShapeRun) => run.steps / run.usage.seconds;
  const rows: Row[] = [];
  const facts: Record<string, number> = { agents: options.agents, seconds: options.seconds, readers: options.readers };
  for (const run of runs) {
    const name = shapeName(run.shape);
    if (run !== baseline) rows.push({ metric: `steps/s, ${run.shape.workers} worker × ${run.shape.apis} api`, baseline: rate(baseline), svc: rate(run), unit: "/s", higherIsBetter: true });
    facts[`${name}:stepsPerSecond`] = rate(run);
    facts[`${name}:connections`] = run.usage.connections.total;
    if (run.usage.machineBusy !== undefined) facts[`${name}:machineBusy`] = run.usage.machineBusy;
    for (const [part, share] of Object.entries(run.usage.cpu)) facts[`${name}:cpu:${part}`] = share ?? 0;
    for (const kind of ["list agents", "events page", "input"] as RequestKind[]) {
      const s = summary(latencies(run.clients, kind));
      facts[`${name}:${kind}:p50`] = s.p50;
      facts[`${name}:${kind}:p99`] = s.p99;
    }
    facts[`${name}:errors`] = run.clients.failed();
  }
  for (const run of runs) {
    if (run === baseline) continue;
    const p99 = (r: ShapeRun) => summary([...READ_KINDS, "input" as const].flatMap((k) => latencies(r.clients, k))).p99;
    rows.push({ metric: `request p99 (all kinds), ${run.shape.workers} worker × ${run.shape.apis} api`, baseline: p99(baseline), svc: p99(run), unit: "ms" });
  }
  return {
    id: "scale-out",
    title: `Scale-out: ${runs.map((r) => shapeName(r.shape)).join(", ")} (workers × APIs) on one PostgreSQL`,
    measured: measured(options, haproxy),
    baseline: `The ${shapeName(baseline.shape)} shape (${baseline.shape.workers} worker, ${baseline.shape.apis} API) measured in the same run, with the same agents and clients.`,
    rows,
    table: latencyTable(runs, baseline),
    facts,
    notes: runs.map((run) => `${shapeName(run.shape)}: ${saturation(run.usage)}; ${run.backlog} inputs still queued at the end; ${errorsOf(run)}`),
  };
}

function latencyTable(runs: ShapeRun[], baseline: ShapeRun): BenchResult["table"] {
  const rate = (run: ShapeRun) => run.steps / run.usage.seconds;
  const cell = (run: ShapeRun, kind: RequestKind) => {
    const s = summary(latencies(run.clients, kind));
    return `${fmt(s.p50)} / ${fmt(s.p99)}`;
  };
  const answered = (run: ShapeRun) => [...READ_KINDS, "input" as const].reduce((n, k) => n + (run.clients.latencies.get(k)?.length ?? 0), 0);
  return {
    columns: ["workers × APIs", "steps/s", "× baseline", "requests/s", "list agents p50 / p99 ms", "events page p50 / p99 ms", "input p50 / p99 ms", "/healthz p50 / p99 ms", "errors"],
    rows: runs.map((run) => [
      shapeName(run.shape),
      fmt(rate(run)),
      fmt(rate(run) / rate(baseline)),
      fmt(answered(run) / run.usage.seconds),
      cell(run, "list agents"),
      cell(run, "events page"),
      cell(run, "input"),
      cell(run, "healthz"),
      String(run.clients.failed()),
    ]),
  };
}

const PART_NAMES: Record<CpuPart, string> = {
  postgres: "PostgreSQL backends",
  api: "svc api",
  worker: "svc worker",
  maintenance: "svc maintenance",
  haproxy: "HAProxy",
  provider: "fake provider",
  generator: "load generator",
  other: "other",
};

/**
 * Which resource ran out first. On a machine whose CPUs are busy nearly all the time, that is the CPU, whoever
 * takes it; the parts say who. Otherwise the limit is elsewhere (latency of a step, connections).
 */
export function saturation(usage: Usage): string {
  const parts = (Object.entries(usage.cpu) as Array<[CpuPart, number]>).sort((a, b) => b[1] - a[1]);
  const shares = parts.map(([part, share]) => `${PART_NAMES[part]} ${pct(share)}`).join(", ");
  if (usage.machineBusy === undefined) return `CPU not measured (no /proc); ${usage.connections.total} connections at most`;
  const busy = `the machine's ${usage.cpus} CPUs were ${pct(usage.machineBusy)} busy (${shares})`;
  if (usage.machineBusy >= 0.9) return `**CPU saturated first**: ${busy}`;
  return `CPU not saturated: ${busy}; ${usage.connections.total} PostgreSQL connections at most`;
}

function errorsOf(run: ShapeRun): string {
  const failures = [...run.clients.failures, ...run.bookkeeping.failures].flatMap(([kind, reasons]) => [...reasons].map(([reason, n]) => `${kind}: ${n} × ${reason}`));
  return failures.length ? `errors: ${failures.join("; ")}` : "no errors";
}

function measured(options: ScaleOptions, haproxy: string): string {
  const senders = Math.max(1, Math.ceil(options.agents / AGENTS_PER_SENDER));
  return (
    "For each shape, on a new PostgreSQL database: one `svc maintenance`, the `svc api` processes (no worker in them) " +
    `behind ${haproxy} (round robin, health check on /readyz, started by the bench with its own config), ` +
    "and the `svc worker` processes, each built and started as `node packages/server/dist/main.js <role>`, settings at their " +
    "defaults (SVC_LOG_LEVEL=warn; each process's pool holds up to 10 connections, plus one for LISTEN). Through the balancer: a " +
    `project, an org API key and ${options.agents} agents on the fake provider (its own process, answering at once), one SSE stream ` +
    `per agent counting its steps; then for ${options.seconds} s, ${senders} senders of queued inputs (each keeping its agents at ` +
    `most 2 inputs ahead of their steps) and ${options.readers} closed-loop readers (a page of 20 agents 40%, an agent's newest 50 ` +
    "events 40%, `/healthz` 20%). Steps/s: `model_output` events added to the database over the window. Connections: " +
    "pg_stat_activity of the database, sampled every 0.5 s, the most at once. CPU: each process's user + system time (/proc) " +
    "over the window (PostgreSQL: the backends serving the database, sampled), as a share of all the machine's CPUs; " +
    "\"other\" is the machine's busy time no measured process accounts for (PostgreSQL's background processes, other jobs). " +
    "Everything runs on the same machine: svc, PostgreSQL, HAProxy, the provider and the load generator share its CPUs."
  );
}
