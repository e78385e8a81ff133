import { sql } from "drizzle-orm";
import type { Tx } from "../platform/db/index.js";
import { encodeId } from "../platform/ids.js";
import { budgetCrossed } from "../modules/budgets/crossed.js";
import { appendEvent, type AgentRow } from "./store/journal.js";
import { BUDGET_WAIT, insertCrossings, latestBudgetStop, remeasureBudget, type BudgetCrossing, type MeasuredBudget } from "./store/budgets.js";
import type { TurnSummary } from "./store/claim.js";
import { markWakeup, scheduleWakeup } from "./wakeups.js";

/*
 * Budget enforcement in the claim (docs/usage-and-budgets.md, "Enforcement"). The summary the claim reads
 * anyway measures the budgets that apply; these functions decide on it and, only on the rare paths (a call
 * refused, a threshold crossed), write.
 */

/** How long an agent held by a `total` budget waits before its claim looks again by itself (a change wakes it at once). */
const TOTAL_RECHECK_MS = 24 * 3_600_000;

/**
 * The exceeded `pause` budget that refuses the model call the claim would start, if any: one of the agent's
 * own (org, project, profile, agent), or, for a call of a running turn, one of the turn's actor. A new turn
 * admits only inputs whose senders are not held (the summary skipped the others).
 */
export function refusingBudget(summary: TurnSummary, continuingTurn: boolean): MeasuredBudget | undefined {
  return summary.budgets.find(
    (b) => b.action === "pause" && b.exceeded && (b.scopeKind !== "actor" || (continuingTurn && b.scopeId !== null && b.scopeId === summary.turnActorId)),
  );
}

/** The first exceeded `pause` budget of an actor, for an agent whose only waiting inputs are held. */
export function holdingActorBudget(summary: TurnSummary): MeasuredBudget | undefined {
  return summary.budgets.find((b) => b.action === "pause" && b.exceeded && b.scopeKind === "actor");
}

/** Thresholds reached in the current period and not yet recorded: each `notify_at_percent`, and 100 (the limit). */
export function newCrossings(budgets: MeasuredBudget[]): BudgetCrossing[] {
  const crossings: BudgetCrossing[] = [];
  for (const budget of budgets) {
    const thresholds = [...new Set([...budget.notifyAtPercent, 100])].sort((a, b) => a - b);
    for (const percent of thresholds) {
      if (percent <= (budget.notifiedPercent ?? 0)) continue;
      if (reached(budget.spentMicroUsd, budget.limitMicroUsd, percent) || reached(budget.spentTokens, budget.limitTokens, percent)) crossings.push({ budget, percent });
    }
  }
  return crossings;
}

/** spent ≥ percent % of limit, in integers (spent × 100 ≥ percent × limit). */
function reached(spent: number, limit: number | null, percent: number): boolean {
  return limit !== null && spent * 100 >= percent * limit;
}

/** Records the crossings once each and hands each new one to `budgetCrossed`; the ones recorded now come back. */
export async function recordCrossings(tx: Tx, agent: AgentRow, crossings: BudgetCrossing[]): Promise<BudgetCrossing[]> {
  if (crossings.length === 0) return [];
  const recorded = await insertCrossings(tx, agent.orgId, agent.id, crossings);
  for (const crossing of recorded) await budgetCrossed(tx, { orgId: agent.orgId, projectId: agent.projectId, agentId: agent.id, ...crossing });
  return recorded;
}

/** The `budget_exceeded` event's payload (its schema: modules/timeline/views.ts). */
export function stopPayload(budget: MeasuredBudget): Record<string, unknown> {
  return {
    budget_id: encodeId("budget", budget.id),
    spent_micro_usd: budget.spentMicroUsd,
    limit_micro_usd: budget.limitMicroUsd,
    spent_tokens: budget.spentTokens,
    limit_tokens: budget.limitTokens,
    period_end: budget.periodEnd?.toISOString() ?? null,
  };
}

/**
 * The budget that refused, as it stands now (store/budgets.ts, `remeasureBudget`): still a reason to stop,
 * or, when a change raised or deleted it since the claim's summary, nothing, and the agent's wakeup is kept
 * ready so that the next claim decides anew (a refusal on what the summary read would lose that change's wake).
 */
async function stillRefusing(tx: Tx, agentId: string, budget: MeasuredBudget): Promise<MeasuredBudget | undefined> {
  const current = await remeasureBudget(tx, budget.id);
  if (current?.action === "pause" && current.exceeded) return current;
  await markWakeup(tx, agentId, "budget_changed");
  return undefined;
}

/**
 * A running turn's next call is refused: the turn ends with a `budget_exceeded` event (the turn's stop
 * boundary, so it asks for no more model work), and the agent waits for the budget. Inputs of other actors
 * that may run go on at once (the claimed wakeup stays ready).
 */
export async function endTurnForBudget(tx: Tx, agent: AgentRow, turnId: string, refusing: MeasuredBudget, othersMayRun: boolean): Promise<void> {
  const budget = await stillRefusing(tx, agent.id, refusing);
  if (!budget) return;
  await appendEvent(tx, agent, { turnId, kind: "budget_exceeded", payload: stopPayload(budget), semantic: true, marks: "stop" });
  if (!othersMayRun) await waitForBudget(tx, agent, budget);
}

/**
 * Inputs wait for a budget: the agent sleeps until the period ends (a `total` budget: a day; any change to
 * the org's budgets wakes it at once). The timeline says so once per budget, period and limits: a
 * `budget_exceeded` event on the latest turn, unless the agent's latest such event already says the same.
 */
export async function holdForBudget(tx: Tx, agent: AgentRow, latestTurnId: string | null, holding: MeasuredBudget): Promise<void> {
  const budget = await stillRefusing(tx, agent.id, holding);
  if (!budget) return;
  const payload = stopPayload(budget);
  const previous = await latestBudgetStop(tx, agent.id);
  const same = previous !== undefined && (["budget_id", "limit_micro_usd", "limit_tokens", "period_end"] as const).every((k) => previous[k] === payload[k]);
  if (!same && latestTurnId !== null) await appendEvent(tx, agent, { turnId: latestTurnId, kind: "budget_exceeded", payload, semantic: true, marks: "stop" });
  await waitForBudget(tx, agent, budget);
}

async function waitForBudget(tx: Tx, agent: AgentRow, budget: MeasuredBudget): Promise<void> {
  const at = budget.periodEnd ?? (await dbClockPlus(tx, TOTAL_RECHECK_MS));
  await scheduleWakeup(tx, agent.id, at, BUDGET_WAIT);
  // A delegate held by a budget wakes its coordinator, whose waiting delegation calls then say so (docs/delegation.md).
  if (agent.parentAgentId) await markWakeup(tx, agent.parentAgentId, "delegate_paused");
}

async function dbClockPlus(tx: Tx, ms: number): Promise<Date> {
  const result = (await tx.execute(sql`SELECT (extract(epoch from statement_timestamp()) * 1000)::float8 + ${ms}::float8 AS at`)) as unknown as { rows: Array<{ at: number }> };
  return new Date(result.rows[0]!.at);
}
