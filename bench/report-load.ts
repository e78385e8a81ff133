/**
 * The load benchmark's section of docs/performance.md: both databases side by side, since the point of
 * issue 9's load test is the embedded mode's envelope next to PostgreSQL's.
 */
import { fmt, ratio, type BenchResult, type DbKind, type Machine } from "./lib.js";
import type { KindResults } from "./run.js";

const LABEL: Record<DbKind, string> = { postgres: "PostgreSQL", pglite: "embedded (PGlite)" };

interface Measured {
  kind: DbKind;
  at: string;
  machine: Machine;
  result: BenchResult;
}

export function renderLoad(all: KindResults[]): string[] {
  const runs: Measured[] = [];
  for (const kind of ["postgres", "pglite"] as DbKind[]) {
    const run = all.find((r) => r.kind === kind);
    const result = run?.results.find((r) => r.id === "load");
    if (run && result) runs.push({ kind, at: result.run?.at ?? run.at, machine: result.run?.machine ?? run.machine, result });
  }
  const first = runs[0];
  if (!first) return [];
  const out = [`## Load (${first.result.facts?.["clients"] ?? "?"} clients)`, ""];
  out.push(`**Measured:** ${first.result.measured}`, "", `**Baseline:** ${first.result.baseline}`, "");
  for (const run of runs) {
    out.push(`- ${LABEL[run.kind]}: run at ${run.at} on ${run.machine.cpus} CPUs (${run.machine.cpuModel}), Node ${run.machine.node}.`);
  }
  out.push("", ...envelope(runs), ...sideBySide(runs));
  for (const run of runs) {
    const table = run.result.table;
    out.push(`### ${LABEL[run.kind]}: per request kind`, "");
    if (table) {
      out.push(`| ${table.columns.join(" | ")} |`, `|---|${table.columns.slice(1).map(() => "---:").join("|")}|`);
      for (const row of table.rows) out.push(`| ${row.join(" | ")} |`);
      out.push("");
    }
    for (const note of run.result.notes ?? []) out.push(`- ${note}`);
    out.push("");
  }
  return out;
}

/** The envelope the issue asks for: what one `svc serve` carried, and at what cost in memory. */
function envelope(runs: Measured[]): string[] {
  const lines: Array<[string, (f: Record<string, number>) => string]> = [
    ["clients / agents / seconds", (f) => `${f["clients"]} / ${f["agents"]} / ${f["seconds"]}`],
    ["svc serve survived the load", (f) => (f["crashed"] ? "**no: it exited** (see the notes)" : "yes")],
    ["requests/s (reads and inputs)", (f) => fmt(f["rps"]!)],
    ["request latency p50 / p99", (f) => `${fmt(f["p50"]!)} / ${fmt(f["p99"]!)} ms`],
    ["model steps/s (while serving the requests)", (f) => fmt(f["stepsPerSecond"]!)],
    ["/healthz p50 / p99 / max (new connection each)", (f) => `${fmt(f["healthzP50"]!)} / ${fmt(f["healthzP99"]!)} / ${fmt(f["healthzMax"]!)} ms`],
    ["/healthz p50 / p99 (one kept-alive connection)", (f) => `${fmt(f["healthzKeepAliveP50"]!)} / ${fmt(f["healthzKeepAliveP99"]!)} ms`],
    ["connections waiting to be accepted, peak (svc / bare Fastify)", (f) => `${f["acceptQueuePeak"]} / ${f["bareAcceptQueuePeak"]}`],
    ["requests timed out (10 s) / all errors", (f) => `${f["timeouts"]} / ${f["errors"]}`],
    ["SSE frames / reconnects / id gaps", (f) => `${f["streamFrames"]} / ${f["reconnects"]} / ${f["gaps"]}`],
    ["RSS idle / before load / peak / after", (f) => `${fmt(f["rssIdleMb"]!)} / ${fmt(f["rssBeforeMb"]!)} / ${fmt(f["rssPeakMb"]!)} / ${fmt(f["rssAfterMb"]!)} MB`],
    ["bare Fastify: requests/s / RSS peak", (f) => `${fmt(f["bareRps"]!)} / ${fmt(f["bareRssMb"]!)} MB`],
  ];
  const out = [`| envelope | ${runs.map((r) => LABEL[r.kind]).join(" | ")} |`, `|---|${runs.map(() => "---:").join("|")}|`];
  for (const [label, cell] of lines) out.push(`| ${label} | ${runs.map((r) => cell(r.result.facts ?? {})).join(" | ")} |`);
  return [...out, ""];
}

/** The rows of each run beside its own baseline (measured in the same run), matched by metric. */
function sideBySide(runs: Measured[]): string[] {
  const head = runs.flatMap((r) => [`${LABEL[r.kind]}: baseline`, "svc", "× slower"]);
  const out = [`| metric | ${head.join(" | ")} |`, `|---|${head.map(() => "---:").join("|")}|`];
  for (const row of runs[0]!.result.rows) {
    const cells = runs.flatMap((run) => {
      const mine = run.result.rows.find((r) => r.metric === row.metric);
      return mine ? [`${fmt(mine.baseline)} ${mine.unit}`, `${fmt(mine.svc)} ${mine.unit}`, fmt(ratio(mine))] : ["–", "–", "–"];
    });
    out.push(`| ${row.metric} | ${cells.join(" | ")} |`);
  }
  return [...out, ""];
}
