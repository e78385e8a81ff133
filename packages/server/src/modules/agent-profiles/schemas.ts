import { Type } from "typebox";
import { Cursor, Limit, NameFilter, ResourceSort } from "../../platform/http/lists.js";
import { Id, ResourceName, Timestamp } from "../../platform/http/schemas.js";
import { AgentConfig } from "../agent-configs/schemas.js";
import { component } from "../../platform/http/components.js";

const strict = { additionalProperties: false } as const;

export const ProfileDescription = component("AgentProfileDescription", Type.String({
  maxLength: 1024,
  description: "What the profile's agents are for, up to 1024 characters; empty by default. The MCP endpoint shows it as the profile's tool description.",
}));

export const McpToolSwitch = component("AgentProfileMCPTool", Type.Boolean({
  description:
    "Offered as a tool by the project's MCP endpoint (POST /api/v1/orgs/{orgID}/projects/{projectID}/mcp; docs/mcp.md). False by default.",
}));

export const AgentProfile = component("AgentProfile", Type.Object(
  {
    id: Id("agentProfile"),
    org_id: Id("org"),
    project_id: Id("project"),
    name: ResourceName,
    current_config_id: Id("agentConfig"),
    current_generation: Type.Integer({ format: "int32", description: "Starts at 1; each change of config adds one." }),
    current_config: AgentConfig,
    description: ProfileDescription,
    mcp_tool: McpToolSwitch,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { ...strict, description: "A named, versioned pointer to a config, to launch agents from." },
));

export const CreateAgentProfileRequest = component("CreateAgentProfileRequest", Type.Object(
  { name: ResourceName, config: Id("agentConfig"), description: Type.Optional(ProfileDescription), mcp_tool: Type.Optional(McpToolSwitch) },
  { ...strict, description: "Names are unique in the project (409). The config must belong to the project." },
));

export const RenameAgentProfileRequest = component("RenameAgentProfileRequest", Type.Object(
  { name: Type.Optional(ResourceName), description: Type.Optional(ProfileDescription), mcp_tool: Type.Optional(McpToolSwitch) },
  { ...strict, minProperties: 1, description: "The members to change; at least one. Names are unique in the project (409)." },
));

export const UpdateAgentProfileRequest = component("UpdateAgentProfileRequest", Type.Object(
  { config: Id("agentConfig"), expected_current_config_id: Id("agentConfig") },
  {
    ...strict,
    description:
      "Points the profile at another config of the project as its next generation. expected_current_config_id must be the " +
      "profile's current config (409 conflict otherwise); asking for the config it already has changes nothing.",
  },
));

export const ListAgentProfilesQuery = Type.Object(
  {
    name: Type.Optional(NameFilter),
    sort: Type.Optional(ResourceSort),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
  },
  strict,
);

export const AgentProfileParams = Type.Object({ orgID: Id("org"), projectID: Id("project"), agentProfileID: Id("agentProfile") });
