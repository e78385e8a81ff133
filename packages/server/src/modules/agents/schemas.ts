import { Type } from "typebox";
import { Id, IdempotencyKeyHeader, Timestamp } from "../../platform/http/schemas.js";
import { namedPageQuery, ResourceSort } from "../../platform/http/lists.js";
import { ExternalActorParams } from "../actors/schemas.js";
import { LaunchSubscription } from "../integrations/schemas.js";
import { component } from "../../platform/http/components.js";
import { ACTIVITY_STATUSES, AgentActivity } from "./activity.js";

const strict = { additionalProperties: false } as const;
export const TAG = "Agents";

export const ProjectParams = Type.Object({ orgID: Id("org"), projectID: Id("project") }, strict);
export const AgentParams = Type.Object({ orgID: Id("org"), projectID: Id("project"), agentID: Id("agent") }, strict);
export { IdempotencyKeyHeader };

export const AgentName = component("AgentName", Type.String({ maxLength: 64, description: "Up to 64 characters; empty means unnamed." }));

export const Agent = component("Agent", Type.Object(
  {
    id: Id("agent"),
    org_id: Id("org"),
    project_id: Id("project"),
    agent_profile_id: Type.Optional(Id("agentProfile")),
    state: Type.Enum(["active", "archived"]),
    name: AgentName,
    current_config_id: Id("agentConfig"),
    parent_agent_id: Type.Union([Id("agent"), Type.Null()], { description: "The coordinator that launched this agent with `delegate`; null for a top-level agent." }),
    root_agent_id: Type.Union([Id("agent"), Type.Null()], { description: "The top-level agent of this agent's delegation tree; null for a top-level agent." }),
    model: Type.Object({ provider_config: Type.String(), name: Type.String() }, strict),
    created_at: Timestamp,
    updated_at: Timestamp,
    archived_at: Type.Optional(Timestamp),
    activity: AgentActivity,
  },
  strict,
));

export const CurrentAgentResponse = component("CurrentAgentResponse", Type.Object({ agent: Agent }, strict));

export const GetAgentResponse = component("GetAgentResponse", Type.Object(
  {
    agent: Agent,
    machine_ids: Type.Array(Type.String(), { description: "Machines attached to the agent; always empty until machines exist." }),
    mcp_connections: Type.Array(Type.Object({}, { additionalProperties: true }), {
      description: "The agent's MCP server connections; always empty until MCP servers are supported.",
    }),
  },
  strict,
));

export const CreateAgentRequest = component("CreateAgentRequest", Type.Object(
  {
    config: Type.Optional(Id("agentConfig")),
    profile: Type.Optional(Id("agentProfile")),
    name: Type.Optional(AgentName),
    message: Type.Optional(Type.String({ minLength: 1, description: "An opening message, sent as the first queued input." })),
    subscriptions: Type.Optional(
      Type.Array(LaunchSubscription, {
        maxItems: 16,
        description:
          "Integration subscriptions committed with the agent, before its first step (project manage). They derive no config; " +
          "the same rules as POST …/integrations/{integrationID}/subscriptions apply.",
      }),
    ),
  },
  strict,
));

export const ListAgentsQuery = Type.Object(
  {
    ...namedPageQuery,
    sort: Type.Optional(ResourceSort),
    agent_profile_id: Type.Optional(Id("agentProfile")),
    parent_agent_id: Type.Optional(Id("agent")),
    state: Type.Optional(Type.Enum(["active", "archived"], { description: "Active agents (the default) or archived ones." })),
    activity: Type.Optional(
      Type.String({
        pattern: `^(${ACTIVITY_STATUSES.join("|")})(,(${ACTIVITY_STATUSES.join("|")}))*$`,
        description: "Only agents whose activity status is one of these, comma-separated (running, retrying, waiting, idle, failed, cancelled, archived). `archived` alone lists archived agents.",
      }),
    ),
  },
  strict,
);

export const CancelAgentRequest = component("CancelAgentRequest", Type.Object({ actor: Type.Optional(ExternalActorParams) }, strict));
