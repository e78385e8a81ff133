import { encodeId } from "../../platform/ids.js";
import { iso } from "../../platform/http/schemas.js";
import type { AgentWithModel } from "./store.js";

export function agentView({ agent, providerConfig, modelName }: AgentWithModel) {
  return {
    id: encodeId("agent", agent.id),
    org_id: encodeId("org", agent.orgId),
    project_id: encodeId("project", agent.projectId),
    ...(agent.agentProfileId ? { agent_profile_id: encodeId("agentProfile", agent.agentProfileId) } : {}),
    state: agent.state as "active" | "archived",
    name: agent.name,
    current_config_id: encodeId("agentConfig", agent.currentConfigId),
    model: { provider_config: providerConfig, name: modelName },
    created_at: iso(agent.createdAt),
    updated_at: iso(agent.updatedAt),
    ...(agent.archivedAt ? { archived_at: iso(agent.archivedAt) } : {}),
  };
}
