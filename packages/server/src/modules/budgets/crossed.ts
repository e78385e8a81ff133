import type { Tx } from "../../platform/db/index.js";
import { encodeId } from "../../platform/ids.js";
import type { BudgetCrossing } from "../../runtime/store/budgets.js";
import { enqueueWebhookEvents } from "../webhooks/enqueue.js";
import { SCOPE_ID_KINDS } from "./views.js";
import type { ScopeKind } from "./schemas.js";

/** A budget threshold crossed in its current period, recorded once (`budget_notifications`). */
export interface BudgetCrossedNotice extends BudgetCrossing {
  orgId: string;
  /** The project of the agent whose claim noticed it: webhook endpoints limited to projects select on it. */
  projectId: string;
  /** The agent whose claim noticed it (the one about to spend more). */
  agentId: string;
}

/**
 * The one place a budget's crossing is emitted, inside the transaction that recorded it (once per budget,
 * period and percent; percent 100 is the limit itself): `budget.warning` for a `notify_at_percent`
 * threshold below 100 and `budget.exceeded` for 100, written to the webhook outbox with `tx` so the
 * delivery commits with the crossing (docs/webhooks.md). An org-wide budget's event goes to endpoints that
 * are not limited to projects.
 */
export async function budgetCrossed(tx: Tx, notice: BudgetCrossedNotice): Promise<void> {
  const { budget, percent } = notice;
  const kind = budget.scopeKind as ScopeKind;
  await enqueueWebhookEvents(tx, {
    orgId: notice.orgId,
    projectId: kind === "org" ? null : notice.projectId,
    type: percent >= 100 ? "budget.exceeded" : "budget.warning",
    data: {
      budget_id: encodeId("budget", budget.id),
      scope: kind === "org" ? { kind } : { kind, id: encodeId(SCOPE_ID_KINDS[kind], budget.scopeId!) },
      period_end: budget.periodEnd?.toISOString() ?? null,
      spent_micro_usd: budget.spentMicroUsd,
      limit_micro_usd: budget.limitMicroUsd,
      spent_tokens: budget.spentTokens,
      limit_tokens: budget.limitTokens,
      percent,
      agent_id: encodeId("agent", notice.agentId),
    },
  });
}
