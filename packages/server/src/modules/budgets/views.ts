import { iso } from "../../platform/http/schemas.js";
import { encodeId, type IdKind } from "../../platform/ids.js";
import type { ScopeKind } from "./schemas.js";
import type { MeasuredBudgetRecord } from "./service.js";

export const SCOPE_ID_KINDS: Record<Exclude<ScopeKind, "org">, IdKind> = { project: "project", agent_profile: "agentProfile", agent: "agent", actor: "actor" };

export function budgetView({ row, measure }: MeasuredBudgetRecord) {
  const kind = row.scopeKind as ScopeKind;
  return {
    id: encodeId("budget", row.id),
    org_id: encodeId("org", row.orgId),
    name: row.name,
    scope: kind === "org" ? { kind } : { kind, id: encodeId(SCOPE_ID_KINDS[kind], row.scopeId!) },
    period: row.period as "day" | "week" | "month" | "total",
    limit_micro_usd: row.limitMicroUsd,
    limit_tokens: row.limitTokens,
    action: row.action as "pause" | "notify",
    notify_at_percent: row.notifyAtPercent,
    spent_micro_usd: measure.spentMicroUsd,
    spent_tokens: measure.spentTokens,
    period_start: iso(measure.periodStart),
    period_end: measure.periodEnd ? iso(measure.periodEnd) : null,
    state: stateOf({ row, measure }),
    notifications: measure.notifications.map((n) => ({ percent: n.percent, spent_micro_usd: n.spentMicroUsd, spent_tokens: n.spentTokens, created_at: iso(n.createdAt) })),
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/** exceeded at a limit; warning at any notify_at_percent threshold of a limit; ok below. */
function stateOf({ row, measure }: MeasuredBudgetRecord): "ok" | "warning" | "exceeded" {
  if (measure.exceeded) return "exceeded";
  const reached = (spent: number, limit: number | null, percent: number) => limit !== null && spent * 100 >= percent * limit;
  const warned = row.notifyAtPercent.some((p) => reached(measure.spentMicroUsd, row.limitMicroUsd, p) || reached(measure.spentTokens, row.limitTokens, p));
  return warned ? "warning" : "ok";
}
