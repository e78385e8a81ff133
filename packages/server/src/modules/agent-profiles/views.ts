import { iso } from "../../platform/http/schemas.js";
import { encodeId } from "../../platform/ids.js";
import type { AgentConfigRow } from "../agent-configs/service.js";
import { agentConfigView } from "../agent-configs/views.js";
import type { ProfileRow } from "./store.js";

/** A profile as the API shows it: with the config it points at. */
export interface ProfileWithConfig {
  profile: ProfileRow;
  config: AgentConfigRow;
}

export function agentProfileView({ profile, config }: ProfileWithConfig) {
  return {
    id: encodeId("agentProfile", profile.id),
    org_id: encodeId("org", profile.orgId),
    project_id: encodeId("project", profile.projectId),
    name: profile.name,
    current_config_id: encodeId("agentConfig", profile.currentConfigId),
    current_generation: profile.currentGeneration,
    current_config: agentConfigView(config),
    description: profile.description,
    mcp_tool: profile.mcpTool,
    created_at: iso(profile.createdAt),
    updated_at: iso(profile.updatedAt),
  };
}
