import { iso } from "../../platform/http/schemas.js";
import { encodeId } from "../../platform/ids.js";
import type { TriggerRow } from "./store.js";

export function cronTriggerView(row: TriggerRow) {
  return {
    id: encodeId("cronTrigger", row.id),
    org_id: encodeId("org", row.orgId),
    project_id: encodeId("project", row.projectId),
    name: row.name,
    target: targetView(row),
    cron: row.cron,
    timezone: row.timezone,
    message_template: row.messageTemplate,
    enabled: row.enabled,
    last_fired_at: row.lastFiredAt ? iso(row.lastFiredAt) : null,
    next_fire_at: row.nextFireAt ? iso(row.nextFireAt) : null,
    failure_report: row.failureReport ?? null,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

function targetView(row: TriggerRow) {
  if (row.targetKind === "agent") return { type: "agent" as const, agent_id: encodeId("agent", row.agentId!) };
  if (row.targetKind === "profile") return { type: "profile" as const, agent_profile_id: encodeId("agentProfile", row.agentProfileId!) };
  return { type: "integration" as const, integration_id: encodeId("integration", row.integrationId!), settings: row.settings! };
}
