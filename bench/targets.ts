/**
 * The targets of issues 8, 9 and 34 (where issue 34 tightened one of issue 8's, its bound), checked against the
 * measured numbers of each database kind. Bounds are PostgreSQL's; PGlite's are 1.5× looser (times and ratios
 * × 1.5, rates ÷ 1.5), except statement counts and the load and memory targets, which the issues set for the
 * embedded mode itself.
 */
import { fmt, ratio, type BenchResult, type DbKind } from "./lib.js";
import { STEP_MEDIAN } from "./orchestration.js";

export interface Target {
  name: string;
  /** PostgreSQL's bound. */
  bound: number;
  unit: string;
  /** "at most": the measured value must not exceed the bound; "at least": it must reach it. */
  kind: "at most" | "at least";
  /**
   * Not loosened for PGlite: exact counts (a statement is a statement on either database), and bounds
   * an issue sets for the embedded mode itself.
   */
  exact?: boolean;
  /** How a value is shown, when the unit's usual precision does not fit (a count of failures). */
  format?: (value: number) => string;
  measure(results: BenchResult[]): number | undefined;
}

const rowOf = (results: BenchResult[], id: string, metric: string) => results.find((r) => r.id === id)?.rows.find((row) => row.metric === metric);

export const TARGETS: Target[] = [
  {
    name: "plain model step: SQL statements (warm worker)",
    bound: 6,
    unit: "",
    kind: "at most",
    exact: true,
    measure: (results) => results.find((r) => r.id === "conversation")?.facts?.["maxWarmStatementsPerStep"],
  },
  {
    name: "plain model step: transactions (warm worker)",
    bound: 2,
    unit: "",
    kind: "at most",
    exact: true,
    measure: (results) => results.find((r) => r.id === "conversation")?.facts?.["maxWarmTransactionsPerStep"],
  },
  {
    name: "model step overhead, median (1 agent, AI SDK client): step − bare call (issue 34)",
    bound: 3,
    unit: "ms",
    kind: "at most",
    measure: (results) => {
      const row = rowOf(results, "orchestration", STEP_MEDIAN);
      return row ? row.svc - row.baseline : undefined;
    },
  },
  {
    name: "step time from 10 to 1,000 events in the conversation, warm worker, p50 ratio (issue 34)",
    bound: 1.2,
    unit: "×",
    kind: "at most",
    measure: (results) => {
      const small = rowOf(results, "conversation", "10 events: step, warm worker (p50 of 20)")?.svc;
      const large = rowOf(results, "conversation", "1000 events: step, warm worker (p50 of 20)")?.svc;
      return small && large ? large / small : undefined;
    },
  },
  { name: "steps/s at 100 agents on one worker (issue 34)", bound: 400, unit: "/s", kind: "at least", measure: (results) => rowOf(results, "orchestration", "100 agents: steps/s")?.svc },
  { name: "append latency p50 (one client) (issue 34)", bound: 2, unit: "ms", kind: "at most", measure: (results) => rowOf(results, "append", "sequential latency p50")?.svc },
  { name: "appends/s with 8 clients", bound: 600, unit: "/s", kind: "at least", measure: (results) => rowOf(results, "append", "8 concurrent: appends/s")?.svc },
  {
    name: "event page (100 events) p50, worst cursor measured",
    bound: 4,
    unit: "ms",
    kind: "at most",
    measure: (results) => {
      const p50s = results.find((r) => r.id === "reads")?.rows.filter((row) => row.metric.startsWith("latency p50")).map((row) => row.svc) ?? [];
      return p50s.length ? Math.max(...p50s) : undefined;
    },
  },
  {
    name: "commit → SSE frame, 1,000 subscribers, p50 ÷ bare Fastify broadcast",
    bound: 1.25,
    unit: "×",
    kind: "at most",
    measure: (results) => sseRatio(results, "per-subscriber latency p50"),
  },
  {
    name: "commit → SSE frame, 1,000 subscribers, p99 ÷ bare Fastify broadcast",
    bound: 1.25,
    unit: "×",
    kind: "at most",
    measure: (results) => sseRatio(results, "per-subscriber latency p99"),
  },
  {
    name: "request p99 under the load of 200 clients (issue 34)",
    bound: 500,
    unit: "ms",
    kind: "at most",
    exact: true,
    measure: (results) => loadFact(results, "p99"),
  },
  {
    name: "/healthz p99 under the load of 200 clients, new connection per probe (issues 9 and 34)",
    bound: 50,
    unit: "ms",
    kind: "at most",
    exact: true,
    measure: (results) => loadFact(results, "healthzP99"),
  },
  {
    name: "requests timed out (10 s) under the load of 200 clients (issue 9)",
    bound: 0,
    unit: "",
    kind: "at most",
    exact: true,
    format: (value) => value.toFixed(0),
    measure: (results) => loadFact(results, "timeouts"),
  },
  {
    name: "RSS of a fresh svc serve at idle, no agent (issue 34)",
    bound: 400,
    unit: "MB",
    kind: "at most",
    exact: true,
    measure: (results) => results.find((r) => r.id === "memory")?.facts?.["rssIdleMb"],
  },
  {
    name: "RSS right after the load of 200 clients (issue 34)",
    bound: 600,
    unit: "MB",
    kind: "at most",
    exact: true,
    measure: (results) => memoryFact(results, "rssAfterMb"),
  },
  {
    name: "RSS within 60 s of the load's end ÷ idle (issue 34)",
    bound: 1.2,
    unit: "×",
    kind: "at most",
    exact: true,
    measure: (results) => {
      const settled = memoryFact(results, "rssSettledMb");
      const idle = memoryFact(results, "rssIdleMb");
      return settled !== undefined && idle !== undefined ? settled / idle : undefined;
    },
  },
];

/** A fact of the memory benchmark after the load, when it ran with the 200 clients. */
function memoryFact(results: BenchResult[], fact: string): number | undefined {
  const facts = results.find((r) => r.id === "memory")?.facts;
  return facts && (facts["clients"] ?? 0) >= 200 ? facts[fact] : undefined;
}

/** A fact of the load benchmark, when it ran with the 200 clients (a quick check with fewer is no measurement). */
function loadFact(results: BenchResult[], fact: string): number | undefined {
  const facts = results.find((r) => r.id === "load")?.facts;
  return facts && (facts["clients"] ?? 0) >= 200 ? facts[fact] : undefined;
}

function sseRatio(results: BenchResult[], metric: string): number | undefined {
  const row = rowOf(results, "sse-fanout", metric);
  return row ? ratio(row) : undefined;
}

/** The bound a target has on `kind`. */
export function boundOn(target: Target, kind: DbKind): number {
  if (kind === "postgres" || target.exact) return target.bound;
  return target.kind === "at most" ? target.bound * 1.5 : target.bound / 1.5;
}

export function met(target: Target, kind: DbKind, value: number): boolean {
  const bound = boundOn(target, kind);
  return target.kind === "at most" ? value <= bound : value >= bound;
}

/** Counts keep one decimal (an average per step); times, rates and ratios use the page's usual precision. */
const show = (value: number, unit: string) => (unit === "×" ? `${fmt(value)}×` : unit ? `${fmt(value)} ${unit}` : value.toFixed(1));
const shown = (target: Target, value: number) => (target.format ? target.format(value) : show(value, target.unit));

/** One cell pair per kind: the bound, then the measured value and whether it meets the bound. */
export function targetCells(target: Target, kind: DbKind, results: BenchResult[] | undefined): [string, string] {
  const bound = `${target.kind === "at most" ? "≤" : "≥"} ${shown(target, boundOn(target, kind))}`;
  const value = results ? target.measure(results) : undefined;
  if (value === undefined || !Number.isFinite(value)) return [bound, "not measured"];
  return [bound, `${shown(target, value)} — ${met(target, kind, value) ? "**met**" : "**not met**"}`];
}
