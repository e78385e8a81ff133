/**
 * The scale-out benchmark's section of docs/performance.md (issue 34, item 4): each shape beside the 1 worker ×
 * 1 API baseline, what each used, a sizing table derived from the shapes measured, and the kill run's checks.
 */
import { fmt, ratio, type BenchResult, type Machine } from "./lib.js";
import type { KindResults } from "./run.js";

export const SCALE_IDS = ["scale-out", "scale-out-kill"];
const STEP_RATES = [10, 25, 50, 100, 200, 400, 800];
const CPU_COLUMNS: Array<[string, string]> = [
  ["postgres", "PostgreSQL backends"],
  ["api", "svc api"],
  ["worker", "svc worker"],
  ["maintenance", "svc maintenance"],
  ["haproxy", "HAProxy"],
  ["provider", "fake provider"],
  ["generator", "load generator"],
  ["other", "other"],
];

export function renderScale(all: KindResults[]): string[] {
  const run = all.find((r) => r.kind === "postgres");
  const shapes = run?.results.find((r) => r.id === "scale-out");
  const kill = run?.results.find((r) => r.id === "scale-out-kill");
  if (!run || (!shapes && !kill)) return [];
  const out = ["## Scale-out (several processes on one PostgreSQL)", ""];
  out.push(
    "`svc api`, `svc worker` and `svc maintenance` as separate processes behind HAProxy, on PostgreSQL only (issue 34, item 4); how",
    "to run the same shape in production is in [operations.md](operations.md#running-several-processes). A full run takes about",
    "5 minutes on a quiet 2-core machine (6 shapes of about 45 s each: starting the processes one by one, 100 agents' launch",
    "steps, 30 s of load; then the kill run, about 40 s):",
    "",
    "```sh",
    "sudo apt-get install haproxy   # the bench starts its own haproxy; without it the benchmark says so and is skipped",
    "DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench -- --db=postgres --only=scale-out",
    "npm run bench -- --db=postgres --only=scale-out --shapes=1x1,2x1 --scale-agents=10 --scale-seconds=5 --scale-kill=no   # a quick check",
    "```",
    "",
    "Flags: `--shapes` (workers×APIs, default `1x1,2x1,4x1,1x2,2x2,4x2`), `--scale-agents` (100), `--scale-seconds` (30),",
    "`--scale-readers` (20), `--scale-kill=no` to leave out the kill run.",
    "",
  );
  if (shapes) out.push(...renderShapes(shapes, when(run, shapes)));
  if (kill) out.push(...renderKill(kill, when(run, kill)));
  return out;
}

function when(run: KindResults, result: BenchResult): string {
  const machine: Machine = result.run?.machine ?? run.machine;
  return `Run at ${result.run?.at ?? run.at} on ${machine.cpus} CPUs (${machine.cpuModel}), Node ${machine.node}.`;
}

function shapeNames(facts: Record<string, number>): string[] {
  return Object.keys(facts)
    .filter((k) => k.endsWith(":stepsPerSecond"))
    .map((k) => k.split(":")[0]!);
}

function renderShapes(result: BenchResult, ran: string): string[] {
  const facts = result.facts ?? {};
  const out = [`### ${result.title}`, "", ran, "", `**Measured:** ${result.measured}`, "", `**Baseline:** ${result.baseline}`, ""];
  if (facts["seconds"] !== undefined && facts["seconds"] < 30) {
    out.push(`**A short run** (${facts["agents"]} agents, ${facts["seconds"]} s per shape), not the measurement: see the command above.`, "");
  }
  if (result.table) {
    out.push(`| ${result.table.columns.join(" | ")} |`, `|---|${result.table.columns.slice(1).map(() => "---:").join("|")}|`);
    for (const row of result.table.rows) out.push(`| ${row.join(" | ")} |`);
    out.push("");
  }
  out.push("| metric | baseline | shape | ratio (× slower) |", "|---|---:|---:|---:|");
  for (const row of result.rows) out.push(`| ${row.metric} | ${fmt(row.baseline)} ${row.unit} | ${fmt(row.svc)} ${row.unit} | ${fmt(ratio(row))} |`);
  out.push("", ...resources(facts), ...sizing(facts));
  for (const note of result.notes ?? []) out.push(`- ${note}`);
  return [...out, ""];
}

/** PostgreSQL connections and CPU by process group, per shape, as shares of all the machine's CPUs. */
function resources(facts: Record<string, number>): string[] {
  const pct = (v: number | undefined) => (v === undefined ? "–" : `${(v * 100).toFixed(0)}%`);
  const out = [
    "What each shape used: the most PostgreSQL connections at once, and CPU over the window as a share of all the machine's CPUs.",
    "",
    `| workers × APIs | PostgreSQL connections (max) | machine busy | ${CPU_COLUMNS.map(([, label]) => label).join(" | ")} |`,
    `|---|${["", "", ...CPU_COLUMNS].map(() => "---:").join("|")}|`,
  ];
  for (const name of shapeNames(facts)) {
    const cpu = CPU_COLUMNS.map(([part]) => pct(facts[`${name}:cpu:${part}`]));
    out.push(`| ${name} | ${facts[`${name}:connections`]} | ${pct(facts[`${name}:machineBusy`])} | ${cpu.join(" | ")} |`);
  }
  return [...out, ""];
}

/**
 * The sizing table: for N agents each stepping once a second (N steps/s), the smallest shape measured that carried
 * it, by processes, then connections. Derived from this run only: on another machine the figures move.
 */
function sizing(facts: Record<string, number>): string[] {
  const shapes = shapeNames(facts)
    .map((name) => {
      const [workers, apis] = name.split("x").map(Number) as [number, number];
      return { name, workers, apis, rate: facts[`${name}:stepsPerSecond`]!, connections: facts[`${name}:connections`]! };
    })
    .sort((a, b) => a.workers + a.apis - (b.workers + b.apis) || a.connections - b.connections);
  const out = [
    "Sizing, derived from the shapes above (this run, this machine): the smallest shape that carried N agents each stepping",
    "once a second (N model steps/s) with the readers above beside them.",
    "",
    "| agents stepping once a second | smallest shape measured (workers × APIs) | its steps/s | its PostgreSQL connections (max) |",
    "|---:|---|---:|---:|",
  ];
  for (const n of STEP_RATES) {
    const fit = shapes.find((s) => s.rate >= n);
    out.push(fit ? `| ${n} | ${fit.workers} × ${fit.apis} | ${fmt(fit.rate)} | ${fit.connections} |` : `| ${n} | none measured carried it | – | – |`);
  }
  return [...out, ""];
}

function renderKill(result: BenchResult, ran: string): string[] {
  const out = [`### ${result.title}`, "", ran, "", `**Measured:** ${result.measured}`, "", `**Baseline:** ${result.baseline}`, ""];
  if (result.table) {
    out.push(`| ${result.table.columns.join(" | ")} |`, "|---|---:|");
    for (const row of result.table.rows) out.push(`| ${row.join(" | ")} |`);
    out.push("");
  }
  for (const note of result.notes ?? []) out.push(`- ${note}`);
  return [...out, ""];
}
