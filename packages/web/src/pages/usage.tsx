import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { api, call, type Schemas } from "../api/client";
import { keys } from "../query";
import { ErrorNotice, Field, Page } from "../ui";
import { Table } from "../widgets";
import { apiKeyGroup, useGroupNames, type GroupKey, type GroupRef } from "./usage-names";

/*
 * What the organization's agents cost (GET /orgs/{id}/usage, docs/usage-and-budgets.md): a stacked bar per
 * UTC day of cost or tokens, one colour per project, agent, actor or model, and the same sums as a table,
 * each group by its name (usage-names.ts). The chart is a small hand-drawn SVG: no charting library in the
 * first load.
 */

type Metric = "cost" | "tokens";
type Row = Schemas["UsageGroup"];

const GROUPS: Array<{ key: GroupKey; label: string }> = [
  { key: "project", label: "Project" },
  { key: "agent", label: "Agent" },
  { key: "actor", label: "Actor" },
  { key: "model", label: "Model" },
];
/** What the usage API groups by: agents and actors with their project, which looking up their names needs. */
const GROUP_BY: Record<GroupKey, string> = { project: "day,project", agent: "day,project,agent", actor: "day,project,actor", model: "day,model" };
const RANGES = [7, 30, 90];
/** The most series drawn apart; the rest are summed as "others". */
const SERIES = 6;
/** The most groups the table lists (each one's name is looked up); the rest are summed in one row. */
const TABLE_ROWS = 50;
const OTHERS = "others";
const COLOURS = ["#2563eb", "#16a34a", "#d97706", "#db2777", "#7c3aed", "#0891b2", "#6b7280"];
/** A bounded read: at most this many pages of 100 groups. */
const MAX_PAGES = 20;
/** The least height of a non-zero bar, in the chart's units (its height is 200): too small to see is not nothing. */
const MIN_BAR = 2;

export function Usage({ org }: { org: string }) {
  const [group, setGroup] = useState<GroupKey>("project");
  const [metric, setMetric] = useState<Metric>("cost");
  const [days, setDays] = useState(30);
  const usage = useQuery({
    queryKey: keys.org(org, "usage", group, days),
    queryFn: () => loadUsage(org, group, days),
  });
  const rows = usage.data?.rows ?? [];
  const sums = sumsByGroup(rows, group);
  const listed = sums.slice(0, TABLE_ROWS);
  // The chart's series rank by the metric shown, which may bring in a group the table (by cost) leaves out.
  const nameOf = useGroupNames(org, group, [...new Set([...listed, ...ranked(sums, metric).slice(0, SERIES)])]);
  const rest = sumOf(sums.slice(TABLE_ROWS));
  return (
    <Page title="Usage">
      <p className="muted">
        Model calls of this organization{"'"}s agents, priced from each model{"'"}s pricing at the time of the call. A turn{"'"}s calls count for
        whoever sent the input that opened it.
      </p>
      <div className="flex flex-wrap gap-4">
        <Field label="Group by" id="usage-group">
          <select id="usage-group" value={group} onChange={(e) => setGroup(e.target.value as GroupKey)}>
            {GROUPS.map((g) => (
              <option key={g.key} value={g.key}>
                {g.label}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Show" id="usage-metric">
          <select id="usage-metric" value={metric} onChange={(e) => setMetric(e.target.value as Metric)}>
            <option value="cost">Cost (USD)</option>
            <option value="tokens">Tokens (input + output)</option>
          </select>
        </Field>
        <Field label="Range" id="usage-range">
          <select id="usage-range" value={days} onChange={(e) => setDays(Number(e.target.value))}>
            {RANGES.map((n) => (
              <option key={n} value={n}>
                Last {n} days
              </option>
            ))}
          </select>
        </Field>
      </div>
      <ErrorNotice error={usage.error} />
      {usage.data ? (
        <>
          <p>
            Total: <strong data-testid="usage-total-cost">{dollars(usage.data.totals.cost_micro_usd)}</strong>, {counted(usage.data.totals.model_calls, "model call")},{" "}
            {counted(usage.data.totals.input_tokens + usage.data.totals.output_tokens, "token")}.
          </p>
          <UsageChart rows={rows} sums={sums} group={group} metric={metric} firstDay={usage.data.firstDay} days={days} nameOf={nameOf} />
          <Table
            label="Usage by group"
            head={[GROUPS.find((g) => g.key === group)!.label, "Model calls", "Input tokens", "Output tokens", "Cost"]}
            empty="No model calls in this range."
            rows={[
              ...listed.map((s) => sumCells(nameOf(s.id), s)),
              ...(rest.calls > 0 ? [sumCells(counted(sums.length - TABLE_ROWS, "other"), rest)] : []),
            ]}
          />
        </>
      ) : null}
    </Page>
  );
}

async function loadUsage(org: string, group: GroupKey, days: number) {
  const now = new Date();
  const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
  const from = new Date(to.getTime() - days * 86_400_000);
  const rows: Row[] = [];
  let cursor: string | undefined;
  let totals: Schemas["UsageTotals"] | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const reply = await call(
      api.GET("/api/v1/orgs/{orgID}/usage", {
        params: { path: { orgID: org }, query: { from: from.toISOString(), to: to.toISOString(), group_by: GROUP_BY[group], limit: 100, ...(cursor ? { cursor } : {}) } },
      }),
    );
    rows.push(...reply.data);
    totals = reply.totals;
    if (!reply.next_cursor) break;
    cursor = reply.next_cursor;
  }
  return { rows, totals: totals!, firstDay: from.toISOString().slice(0, 10) };
}

/** A group's id: a key's group is `key:<id>` (no actor named), nobody's is "". */
function groupOf(row: Row, group: GroupKey): string {
  switch (group) {
    case "project":
      return row.project_id ?? "";
    case "agent":
      return row.agent_id ?? "";
    case "model":
      return row.model_id ?? "";
    case "actor":
      return row.actor_id ?? (row.api_key_id ? apiKeyGroup(row.api_key_id) : "");
  }
}

interface Totals {
  calls: number;
  input: number;
  output: number;
  cost: number;
}

/** One group's totals over the range. */
interface Sum extends GroupRef, Totals {}

function sumOf(rows: Totals[]): Totals {
  const sum: Totals = { calls: 0, input: 0, output: 0, cost: 0 };
  for (const row of rows) {
    sum.calls += row.calls;
    sum.input += row.input;
    sum.output += row.output;
    sum.cost += row.cost;
  }
  return sum;
}

/** Each group's sums over the range, the costliest first. */
function sumsByGroup(rows: Row[], group: GroupKey): Sum[] {
  const sums = new Map<string, Sum>();
  for (const row of rows) {
    const id = groupOf(row, group);
    const s = sums.get(id) ?? { id, project: row.project_id ?? "", calls: 0, input: 0, output: 0, cost: 0 };
    s.calls += row.model_calls;
    s.input += row.input_tokens;
    s.output += row.output_tokens;
    s.cost += row.cost_micro_usd;
    sums.set(id, s);
  }
  return [...sums.values()].sort((a, b) => b.cost - a.cost || b.input + b.output - (a.input + a.output));
}

/** The groups, the largest in `metric` first. */
function ranked(sums: Sum[], metric: Metric): Sum[] {
  const total = (s: Sum) => (metric === "cost" ? s.cost : s.input + s.output);
  return [...sums].sort((a, b) => total(b) - total(a));
}

function sumCells(name: string, s: Totals): string[] {
  return [name, s.calls.toLocaleString(), s.input.toLocaleString(), s.output.toLocaleString(), dollars(s.cost)];
}

/** "1 model call", "2 model calls". */
export function counted(n: number, noun: string): string {
  return `${n.toLocaleString()} ${noun}${n === 1 ? "" : "s"}`;
}

const valueOf = (row: Row, metric: Metric) => (metric === "cost" ? row.cost_micro_usd : row.input_tokens + row.output_tokens);

/** Stacked bars, one per UTC day of the range, one colour per series (the largest `SERIES`, then "others"). */
function UsageChart(props: { rows: Row[]; sums: Sum[]; group: GroupKey; metric: Metric; firstDay: string; days: number; nameOf: (id: string) => string }) {
  const { rows, group, metric, firstDay, days } = props;
  const groups = ranked(props.sums, metric);
  const series = groups.slice(0, SERIES).map((s) => s.id);
  const seriesOf = (id: string) => (series.includes(id) ? id : OTHERS);
  const ids = groups.length > SERIES ? [...series, OTHERS] : series;
  const nameOf = (id: string) => (id === OTHERS ? OTHERS : props.nameOf(id));
  const dayList = Array.from({ length: days }, (_, i) => new Date(Date.parse(`${firstDay}T00:00:00Z`) + i * 86_400_000).toISOString().slice(0, 10));
  const stacks = new Map<string, Map<string, number>>(dayList.map((d) => [d, new Map()]));
  for (const row of rows) {
    const stack = stacks.get(row.day ?? "");
    if (!stack) continue;
    const id = seriesOf(groupOf(row, group));
    stack.set(id, (stack.get(id) ?? 0) + valueOf(row, metric));
  }
  const highest = Math.max(1, ...[...stacks.values()].map((s) => [...s.values()].reduce((a, b) => a + b, 0)));
  const width = 640;
  const height = 200;
  const left = 56;
  const bottom = 20;
  const slot = (width - left) / days;
  const bar = Math.max(1, slot * 0.7);
  const y = (v: number) => ((height - bottom) * v) / highest;
  const format = metric === "cost" ? dollars : (v: number) => Math.round(v).toLocaleString();
  return (
    <figure className="card">
      <svg
        role="img"
        aria-label={`${metric === "cost" ? "Cost" : "Tokens"} per day by ${group}`}
        viewBox={`0 0 ${width} ${height}`}
        className="w-full"
        data-testid="usage-chart"
      >
        <line x1={left} y1={height - bottom} x2={width} y2={height - bottom} stroke="currentColor" strokeOpacity={0.3} />
        <text x={left - 4} y={10} textAnchor="end" fontSize={10} fill="currentColor">
          {format(highest)}
        </text>
        <text x={left - 4} y={height - bottom} textAnchor="end" fontSize={10} fill="currentColor">
          0
        </text>
        {dayList.map((day, i) => {
          let top = height - bottom;
          const stack = stacks.get(day)!;
          return (
            <g key={day}>
              {ids.map((id, n) => {
                const value = stack.get(id) ?? 0;
                if (value === 0) return null;
                const h = Math.max(MIN_BAR, y(value));
                top -= h;
                return (
                  <rect key={id} data-series={id} x={left + i * slot + (slot - bar) / 2} y={top} width={bar} height={h} fill={COLOURS[n % COLOURS.length]}>
                    <title>{`${day} · ${nameOf(id)}: ${format(value)}`}</title>
                  </rect>
                );
              })}
              {i % Math.ceil(days / 8) === 0 ? (
                <text x={left + i * slot + slot / 2} y={height - 4} textAnchor="middle" fontSize={10} fill="currentColor">
                  {day.slice(5)}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
      <figcaption className="flex flex-wrap gap-3 small">
        {ids.map((id, n) => (
          <span key={id} className="inline-flex items-center gap-1">
            <span aria-hidden="true" style={{ background: COLOURS[n % COLOURS.length] }} className="inline-block h-3 w-3 rounded-sm" />
            {nameOf(id)}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}

/** Millionths of a dollar as dollars: cents for sums above a dollar, more digits below. */
export function dollars(microUsd: number): string {
  const usd = microUsd / 1_000_000;
  return `$${usd.toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: usd < 1 ? 6 : 2 })}`;
}
