/**
 * Benchmark: the usage read (`GET /orgs/{orgID}/usage`) over a month of 100,000 model calls' daily rollups,
 * against the least any read of those rows costs.
 */
import { performance } from "node:perf_hooks";
import { decodeId } from "../packages/server/src/platform/ids.js";
import { rawAccess } from "./append.js";
import { benchProject, progress, summary, type BenchResult, type BenchServer } from "./lib.js";

const CALLS = 100_000;
const AGENTS = 500;
const PROJECTS = 10;
const DAYS = 30;
const FROM = "2026-06-01";
const TO = "2026-07-01";

/**
 * Fills `usage_daily` as 100,000 recorded calls in June 2026 would: 500 agents in 10 projects, half of them
 * from one of 20 profiles, each agent talking with two actors, three models, calls spread over 30 days.
 * Calls of one key and day add up in one row, as the record statement's upsert adds them.
 */
export async function fillRollups(server: BenchServer, orgId: string, from = FROM, days = DAYS): Promise<number> {
  const raw = await rawAccess(server, 1);
  const ids = (kind: string, n: number) => `(SELECT array_agg(md5('${kind}' || g)::uuid ORDER BY g) AS ids FROM generate_series(0, ${n - 1}) g)`;
  await raw.query(
    `INSERT INTO usage_daily (org_id, day, project_id, agent_id, agent_profile_id, actor_id, configured_model_id, model_calls,
       input_tokens, output_tokens, cache_read_input_tokens, cache_write_input_tokens, reasoning_output_tokens, cost_micro_usd)
     SELECT '${orgId}'::uuid, day, projects.ids[agent % ${PROJECTS} + 1], agents.ids[agent + 1], CASE WHEN agent % 2 = 0 THEN profiles.ids[agent % 20 + 1] END,
       actors.ids[agent * 2 + actor + 1], models.ids[agent % 3 + 1], count(*), sum(1200), sum(300), sum(800), sum(50), 0, sum(4500)
     FROM (SELECT i % ${AGENTS} AS agent, (i / ${AGENTS}) % 2 AS actor, DATE '${from}' + (i * 7) % ${days} AS day FROM generate_series(0, ${CALLS - 1}) i) calls,
       ${ids("project", PROJECTS)} projects, ${ids("agent", AGENTS)} agents, ${ids("profile", 20)} profiles,
       ${ids("actor", AGENTS * 2)} actors, ${ids("model", 3)} models
     GROUP BY 1, 2, 3, 4, 5, 6, 7`,
    [],
  );
  const [{ n }] = await raw.query(`SELECT count(*)::int AS n FROM usage_daily WHERE org_id = '${orgId}'`, []);
  await raw.close();
  return Number(n);
}

export async function usageReads(server: BenchServer, providerUrl: string, reads: number): Promise<BenchResult> {
  const project = await benchProject(server.api, providerUrl);
  const orgId = decodeId("org", project.orgId)!;
  const rows = await fillRollups(server, orgId);
  progress(`usage: ${rows} rollup rows for ${CALLS} calls`);
  const range = `from=${FROM}T00:00:00Z&to=${TO}T00:00:00Z`;
  const path = (groupBy: string) => `/api/v1/orgs/${project.orgId}/usage?${range}${groupBy ? `&group_by=${groupBy}` : ""}&limit=100`;
  const raw = await rawAccess(server, 1);
  const floor = `SELECT count(*), sum(model_calls), sum(cost_micro_usd) FROM usage_daily WHERE org_id = $1 AND day >= $2::date AND day < $3::date`;

  const timeApi = async (groupBy: string) => {
    const times: number[] = [];
    for (let i = 0; i < reads + 5; i++) {
      const t = performance.now();
      const reply = await server.timed.send("GET", path(groupBy), project.token);
      if (reply.status !== 200 || !reply.text.includes(`"model_calls":${CALLS}`)) throw new Error(`usage read failed: ${reply.status} ${reply.text.slice(0, 300)}`);
      if (i >= 5) times.push(performance.now() - t);
    }
    return summary(times);
  };
  const baseTimes: number[] = [];
  for (let i = 0; i < reads + 5; i++) {
    const t = performance.now();
    await raw.query(floor, [orgId, FROM, TO], "bench_usage_floor");
    if (i >= 5) baseTimes.push(performance.now() - t);
  }
  await raw.close();
  const base = summary(baseTimes);
  const totals = await timeApi("");
  const byProjectDay = await timeApi("project,day");
  const byAgentActor = await timeApi("agent,actor");
  return {
    id: "usage",
    title: `Usage reads over a month of ${CALLS.toLocaleString("en")} model calls`,
    measured:
      `\`GET /orgs/{orgID}/usage\` for June 2026 after ${CALLS.toLocaleString("en")} calls' rollups (${rows.toLocaleString("en")} daily rows: ` +
      `${AGENTS} agents in ${PROJECTS} projects, two actors each, three models, ${DAYS} days), ${reads} sequential requests each: ` +
      "without group_by (totals), group_by=project,day (300 groups, a page of 100) and group_by=agent,actor (1,000 groups, a page of " +
      "100). Includes HTTP, bearer auth, the org access check, the one statement that sums the page and the totals, and JSON.",
    baseline: "The least any read of those rows costs: `count(*)` and two sums over the org's rows of the month, raw, as a prepared statement.",
    rows: [
      { metric: "totals p50", baseline: base.p50, svc: totals.p50, unit: "ms" },
      { metric: "by project,day p50", baseline: base.p50, svc: byProjectDay.p50, unit: "ms" },
      { metric: "by agent,actor p50", baseline: base.p50, svc: byAgentActor.p50, unit: "ms" },
      { metric: "by agent,actor p99", baseline: base.p99, svc: byAgentActor.p99, unit: "ms" },
    ],
  };
}
