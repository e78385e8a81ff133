import type { Static } from "typebox";
import { encodeId } from "../../platform/ids.js";
import { iso } from "../../platform/http/schemas.js";
import type { Agent } from "./schemas.js";
import type { AgentWithModel } from "./store.js";
import { activityView } from "./activity.js";

type AgentView = Static<typeof Agent>;

/** Optional members are assigned, not spread in (see timeline/views.ts on V8 and spreads). */
export function agentView({ agent, providerConfig, modelName, activity }: AgentWithModel): AgentView {
  const view = {
    id: encodeId("agent", agent.id),
    org_id: encodeId("org", agent.orgId),
    project_id: encodeId("project", agent.projectId),
    state: agent.state as AgentView["state"],
    name: agent.name,
    current_config_id: encodeId("agentConfig", agent.currentConfigId),
    parent_agent_id: agent.parentAgentId ? encodeId("agent", agent.parentAgentId) : null,
    root_agent_id: agent.rootAgentId ? encodeId("agent", agent.rootAgentId) : null,
    model: { provider_config: providerConfig, name: modelName },
    created_at: iso(agent.createdAt),
    updated_at: iso(agent.updatedAt),
    activity: activityView(activity),
  } as AgentView;
  if (agent.agentProfileId) view.agent_profile_id = encodeId("agentProfile", agent.agentProfileId);
  if (agent.archivedAt) view.archived_at = iso(agent.archivedAt);
  return view;
}
