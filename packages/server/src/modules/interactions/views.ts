import { encodeId } from "../../platform/ids.js";
import { iso } from "../../platform/http/schemas.js";
import type { AgentRow } from "../../runtime/store/journal.js";
import type { InteractionForm, InteractionRow } from "../../runtime/store/interactions.js";

export function interactionView(agent: Pick<AgentRow, "orgId" | "projectId">, row: InteractionRow) {
  return {
    id: encodeId("interaction", row.id),
    org_id: encodeId("org", agent.orgId),
    project_id: encodeId("project", agent.projectId),
    agent_id: encodeId("agent", row.agentId),
    interaction_kind: row.interactionKind as "permission" | "question",
    state: row.state as "open" | "resolved" | "canceled",
    request: row.request as unknown as InteractionForm,
    ...(row.resolution ? { resolution: row.resolution as { answers: Array<{ option_indices: number[]; text?: string }> } } : {}),
    ...(row.resolvedByInputId ? { resolved_by_input_id: encodeId("agentInput", row.resolvedByInputId) } : {}),
    created_at: iso(row.createdAt),
    ...(row.resolvedAt ? { resolved_at: iso(row.resolvedAt) } : {}),
  };
}
