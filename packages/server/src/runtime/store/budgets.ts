import { sql, type SQL } from "drizzle-orm";
import { epochMs } from "../../db/schema/columns.js";
import { rawRows, type Tx } from "../../platform/db/index.js";
import { newUuid } from "../../platform/ids.js";
import { notifyIn } from "../signals.js";

/*
 * Budgets as the engine sees them (docs/usage-and-budgets.md, "Enforcement"): what a budget has spent in its
 * current period, read from the scope rollup (`usage_scope_daily`) by the database clock, and the statements of the
 * rare paths (a threshold crossed, a call refused). The check itself rides inside the claim's turn summary
 * (store/claim.ts), so a step costs no statement more with budgets in force.
 */

/**
 * A budget's current period by the database clock, in UTC, as a lateral of `budgets b`: `start_utc` and
 * `end_utc` (null for `total`) are UTC timestamps without zone. Weeks start on Monday (date_trunc's ISO week).
 * A `total` budget counts from the UTC day it was created.
 */
export const budgetWindowSql = sql`CROSS JOIN LATERAL (
    SELECT CASE b.period WHEN 'day' THEN date_trunc('day', n.t) WHEN 'week' THEN date_trunc('week', n.t)
        WHEN 'month' THEN date_trunc('month', n.t) ELSE date_trunc('day', b.created_at AT TIME ZONE 'UTC') END AS start_utc,
      CASE b.period WHEN 'day' THEN date_trunc('day', n.t) + interval '1 day' WHEN 'week' THEN date_trunc('week', n.t) + interval '7 days'
        WHEN 'month' THEN date_trunc('month', n.t) + interval '1 month' END AS end_utc
    FROM (SELECT statement_timestamp() AT TIME ZONE 'UTC' AS t) n
  ) w`;

/**
 * What `budgets b` spent in window `w`, as a lateral: the scope rollup's rows of the budget's scope over the
 * period's days (the rollup is per UTC day and every period starts at a midnight), at most one per shard a day, found by
 * a range of its key whatever the organization's size. An org budget's scope id is the org's. Tokens are input
 * plus output tokens.
 */
export const budgetSpentSql = sql`CROSS JOIN LATERAL (
    SELECT coalesce(sum(u.cost_micro_usd), 0)::float8 AS spent_micro_usd, coalesce(sum(u.input_tokens + u.output_tokens), 0)::float8 AS spent_tokens
    FROM usage_scope_daily u
    WHERE u.org_id = b.org_id AND u.scope_kind = b.scope_kind AND u.scope_id = coalesce(b.scope_id, b.org_id)
      AND u.day >= w.start_utc::date AND (w.end_utc IS NULL OR u.day < w.end_utc::date)
  ) s`;

/** The budget has reached one of its limits (a budget is exceeded once spent reaches the limit). */
export const budgetExceededSql = sql`((b.limit_micro_usd IS NOT NULL AND s.spent_micro_usd >= b.limit_micro_usd)
    OR (b.limit_tokens IS NOT NULL AND s.spent_tokens >= b.limit_tokens))`;

/** The columns every measured budget answers with (epoch milliseconds for times). */
export const budgetMeasureColumns = sql`s.spent_micro_usd, s.spent_tokens, ${epochMs(sql`(w.start_utc AT TIME ZONE 'UTC')`)} AS period_start_ms,
    ${epochMs(sql`(w.end_utc AT TIME ZONE 'UTC')`)} AS period_end_ms, ${budgetExceededSql} AS exceeded,
    (SELECT max(n.percent) FROM budget_notifications n WHERE n.budget_id = b.id AND n.period_start = w.start_utc AT TIME ZONE 'UTC') AS notified_percent`;

/** The agent a claim has locked, as the budget check needs it. */
export interface BudgetedAgent {
  id: string;
  orgId: string;
  projectId: string;
  agentProfileId: string | null;
}

/**
 * The `budget_state` CTE of the claim's summary: every budget that applies to the agent (its org, project,
 * profile, itself) and every actor budget of the actors whose inputs the claim may run next (the latest turn's
 * opener, the waiting inputs' senders), measured. An org without budgets costs one probe of the budgets index.
 */
export function budgetStateCte(agent: BudgetedAgent): SQL {
  return sql`budget_state AS (
    SELECT b.id, b.scope_kind, b.scope_id, b.period, b.action, b.limit_micro_usd::float8 AS limit_micro_usd, b.limit_tokens::float8 AS limit_tokens,
      b.notify_at_percent, ${budgetMeasureColumns}
    FROM budgets b ${budgetWindowSql} ${budgetSpentSql}
    WHERE b.org_id = ${agent.orgId} AND (b.scope_kind = 'org'
      OR (b.scope_kind = 'project' AND b.scope_id = ${agent.projectId})
      OR (b.scope_kind = 'agent_profile' AND b.scope_id = ${agent.agentProfileId}::uuid)
      OR (b.scope_kind = 'agent' AND b.scope_id = ${agent.id})
      OR (b.scope_kind = 'actor' AND b.scope_id IN (
        SELECT i.actor_id FROM agent_inputs i WHERE i.agent_id = ${agent.id} AND i.state = 'received' AND i.input_kind = 'content'
        UNION ALL
        (SELECT i.actor_id FROM agent_turns t JOIN agent_events e ON e.turn_id = t.id AND e.is_opening_event JOIN agent_inputs i ON i.id = e.agent_input_id
          WHERE t.agent_id = ${agent.id} ORDER BY t.turn_sequence DESC, e.sequence LIMIT 1))))
  )`;
}

/** A waiting input `i` whose sender has an exceeded `pause` budget: it waits in the backlog, in order. */
export const inputOfPausedActorSql = sql`EXISTS (SELECT 1 FROM budget_state bs
    WHERE bs.scope_kind = 'actor' AND bs.action = 'pause' AND bs.exceeded AND bs.scope_id = i.actor_id)`;

/** The summary's budget columns: the measured budgets (null when none applies) and the latest turn's opener. */
export function budgetSummaryColumns(turnId: SQL): SQL {
  return sql`,
        (SELECT json_agg(json_build_object('id', bs.id, 'scope_kind', bs.scope_kind, 'scope_id', bs.scope_id, 'period', bs.period, 'action', bs.action,
          'limit_micro_usd', bs.limit_micro_usd, 'limit_tokens', bs.limit_tokens, 'notify_at_percent', bs.notify_at_percent,
          'spent_micro_usd', bs.spent_micro_usd, 'spent_tokens', bs.spent_tokens, 'period_start_ms', bs.period_start_ms, 'period_end_ms', bs.period_end_ms,
          'exceeded', bs.exceeded, 'notified_percent', bs.notified_percent)) FROM budget_state bs) AS budgets,
        CASE WHEN EXISTS (SELECT 1 FROM budget_state) THEN (SELECT i.actor_id FROM agent_events e JOIN agent_inputs i ON i.id = e.agent_input_id
          WHERE e.turn_id = ${turnId} AND e.is_opening_event ORDER BY e.sequence LIMIT 1) END AS turn_actor_id`;
}

/** A budget measured by the claim: spent in its current period, and the thresholds already notified in it. */
export interface MeasuredBudget {
  id: string;
  scopeKind: string;
  scopeId: string | null;
  period: string;
  action: "pause" | "notify";
  limitMicroUsd: number | null;
  limitTokens: number | null;
  notifyAtPercent: number[];
  spentMicroUsd: number;
  spentTokens: number;
  periodStart: Date;
  periodEnd: Date | null;
  exceeded: boolean;
  notifiedPercent: number | null;
}

export interface MeasuredBudgetRow {
  id: string;
  scope_kind: string;
  scope_id: string | null;
  period: string;
  action: "pause" | "notify";
  limit_micro_usd: number | null;
  limit_tokens: number | null;
  notify_at_percent: number[];
  spent_micro_usd: number;
  spent_tokens: number;
  period_start_ms: number;
  period_end_ms: number | null;
  exceeded: boolean;
  notified_percent: number | null;
}

export function measuredBudget(r: MeasuredBudgetRow): MeasuredBudget {
  return {
    id: r.id,
    scopeKind: r.scope_kind,
    scopeId: r.scope_id,
    period: r.period,
    action: r.action,
    limitMicroUsd: r.limit_micro_usd,
    limitTokens: r.limit_tokens,
    notifyAtPercent: r.notify_at_percent ?? [],
    spentMicroUsd: r.spent_micro_usd,
    spentTokens: r.spent_tokens,
    periodStart: new Date(r.period_start_ms),
    periodEnd: r.period_end_ms === null ? null : new Date(r.period_end_ms),
    exceeded: r.exceeded,
    notifiedPercent: r.notified_percent,
  };
}

/** A threshold crossing to record: `percent` of a limit reached in the budget's current period. */
export interface BudgetCrossing {
  budget: MeasuredBudget;
  percent: number;
}

/**
 * Records crossings once per budget, period and percent (the table's unique key); the ones recorded now
 * (not by a concurrent claim of another agent) come back.
 */
export async function insertCrossings(tx: Tx, orgId: string, agentId: string, crossings: BudgetCrossing[]): Promise<BudgetCrossing[]> {
  const rows = crossings.map((c) => ({
    id: newUuid(),
    budget_id: c.budget.id,
    period_start: c.budget.periodStart.toISOString(),
    percent: c.percent,
    spent_micro_usd: c.budget.spentMicroUsd,
    spent_tokens: c.budget.spentTokens,
  }));
  const inserted = await rawRows<{ budget_id: string; percent: number }>(
    tx,
    sql`INSERT INTO budget_notifications (id, org_id, budget_id, period_start, percent, spent_micro_usd, spent_tokens, agent_id)
      SELECT r.id, ${orgId}::uuid, r.budget_id, r.period_start, r.percent, r.spent_micro_usd, r.spent_tokens, ${agentId}::uuid
      FROM json_to_recordset(${JSON.stringify(rows)}::json) AS r(id uuid, budget_id uuid, period_start timestamptz, percent integer, spent_micro_usd bigint, spent_tokens bigint)
      ON CONFLICT ON CONSTRAINT budget_notifications_once DO NOTHING
      RETURNING budget_id, percent`,
  );
  return crossings.filter((c) => inserted.some((i) => i.budget_id === c.budget.id && i.percent === c.percent));
}

/** The payload of the agent's latest `budget_exceeded` event, if any (a partial index holds only those events). */
export async function latestBudgetStop(tx: Tx, agentId: string): Promise<Record<string, unknown> | undefined> {
  const [row] = await rawRows<{ payload: Record<string, unknown> }>(
    tx,
    sql`SELECT payload FROM agent_events WHERE agent_id = ${agentId} AND event_kind = 'budget_exceeded' ORDER BY sequence DESC LIMIT 1`,
  );
  return row?.payload;
}

/**
 * The budget as it stands once every change to it in flight has committed, measured afresh; undefined when
 * it was deleted. A claim decides on its summary, read before it takes this lock: a budget raised or deleted
 * in between committed its wake (`wakeBudgetWaiters`) while the agent's wakeup did not say `budget_wait` yet,
 * so the claim must not put the agent to sleep on what it read. Locking the row (FOR SHARE) orders the two:
 * a change already made is waited for and seen by the next statement (a fresh snapshot under READ
 * COMMITTED); a change made after waits for this claim's commit, and its wake then finds the wakeup.
 */
export async function remeasureBudget(tx: Tx, budgetId: string): Promise<MeasuredBudget | undefined> {
  const locked = await rawRows<{ id: string }>(tx, sql`SELECT id FROM budgets WHERE id = ${budgetId} FOR SHARE`);
  if (locked.length === 0) return undefined;
  const [row] = await rawRows<MeasuredBudgetRow>(
    tx,
    sql`SELECT b.id, b.scope_kind, b.scope_id, b.period, b.action, b.limit_micro_usd::float8 AS limit_micro_usd, b.limit_tokens::float8 AS limit_tokens,
      b.notify_at_percent, ${budgetMeasureColumns}
    FROM budgets b ${budgetWindowSql} ${budgetSpentSql} WHERE b.id = ${budgetId}`,
  );
  return row ? measuredBudget(row) : undefined;
}

/**
 * Wakes the org's agents that wait on a budget (their wakeup's reason is `budget_wait`), after a budget was
 * raised, changed or deleted: each claim checks its budgets anew. One hint wakes a worker slot; a claim that
 * sees more agents ready wakes more.
 */
export async function wakeBudgetWaiters(tx: Tx, orgId: string): Promise<number> {
  const rows = await rawRows<{ agent_id: string }>(
    tx,
    sql`UPDATE agent_wakeups w SET ready_at = date_trunc('milliseconds', statement_timestamp()), updated_at = date_trunc('milliseconds', statement_timestamp())
      FROM agents a WHERE a.id = w.agent_id AND a.org_id = ${orgId} AND w.reason = ${BUDGET_WAIT}
      RETURNING w.agent_id, ${notifyIn.wakeupOf(sql`w.agent_id`)}`,
  );
  return rows.length;
}

/** The wakeup reason of an agent whose next model call waits for a budget's period to end (or a budget change). */
export const BUDGET_WAIT = "budget_wait";
