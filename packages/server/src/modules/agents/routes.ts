import { Type } from "typebox";
import type { AppDb } from "../../platform/db/index.js";
import type { HttpApp } from "../../platform/http/app.js";
import { pageOf, sortValue, toPage } from "../../platform/http/lists.js";
import { pathId, projectPath } from "../../platform/http/params.js";
import { errorResponses, Id, IdempotencyKeyHeader, Page } from "../../platform/http/schemas.js";
import { encodeId } from "../../platform/ids.js";
import { AgentConfig, AgentConfigSource } from "../agent-configs/schemas.js";
import { agentConfigView } from "../agent-configs/views.js";
import { bindingView } from "../machines/bindings.js";
import { AgentMachineBinding } from "../machines/schemas.js";
import { AgentInput } from "../inputs/schemas.js";
import { agentInputView } from "../inputs/views.js";
import { AgentEvent, loadEventsBySequence } from "../timeline/views.js";
import * as s from "./schemas.js";
import type { AgentsService } from "./service.js";
import { agentView } from "./views.js";
import type { ActivityStatus } from "./activity.js";
import type { ActivityStreams } from "./activity-stream.js";
import { accessCheck } from "../../platform/http/access-watch.js";

const strict = { additionalProperties: false } as const;

const LaunchAgentResponse = Type.Object(
  { agent: s.Agent, agent_config: AgentConfig, machine_bindings: Type.Array(AgentMachineBinding), agent_input: Type.Optional(AgentInput) },
  strict,
);
const UpdateAgentConfigRequest = Type.Object({ ...AgentConfigSource.properties, expected_current_config_id: Type.Optional(Id("agentConfig")) }, strict);
const UpdateAgentConfigResponse = Type.Object({ agent_config: AgentConfig, agent_input: AgentInput, event_id: Id("event") }, strict);
const CancelAgentResponse = Type.Object(
  {
    event: Type.Union([AgentEvent, Type.Null()]),
    runtime_cancel_requested: Type.Boolean(),
    affected: Type.Boolean(),
    actor_id: Type.Optional(Id("actor")),
  },
  strict,
);

export function agentRoutes(app: HttpApp, deps: { agents: AgentsService; activity: ActivityStreams; db: AppDb }) {
  const { agents, activity, db } = deps;
  // Open streams would otherwise keep `close()` waiting for their connections forever.
  app.addHook("preClose", () => activity.closeAll());
  const agentPath = (params: { orgID: string; projectID: string; agentID: string }) => [...projectPath(params), pathId("agent", params.agentID)] as const;

  app.post(
    "/orgs/:orgID/projects/:projectID/agents",
    {
      schema: {
        tags: [s.TAG],
        operationId: "createAgent",
        summary: "Launch an agent",
        description:
          "Launches an agent (agent.operate) from a config, or from a profile's current config (with both, the config is used " +
          "and the profile is recorded). The config becomes event 1, the opening event of turn 1; an optional `message` is " +
          "queued as the first input. With an Idempotency-Key, a repeat returns 200 with the agent launched the first time, " +
          "even if the repeat's body differs.",
        headers: IdempotencyKeyHeader,
        params: s.ProjectParams,
        body: s.CreateAgentRequest,
        response: { 200: s.CurrentAgentResponse, 201: LaunchAgentResponse, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const launched = await agents.launch(
        request.principal!,
        ...projectPath(request.params),
        {
          ...body,
          ...(body.config ? { config: pathId("agentConfig", body.config) } : {}),
          ...(body.profile ? { profile: pathId("agentProfile", body.profile) } : {}),
        },
        request.headers["idempotency-key"],
      );
      if (!launched.created) return reply.status(200).send({ agent: agentView(launched.agent) });
      return reply.status(201).send({
        agent: agentView(launched.agent),
        agent_config: agentConfigView(launched.config),
        machine_bindings: launched.bindings.map(bindingView),
        ...(launched.input ? { agent_input: agentInputView(launched.input) } : {}),
      });
    },
  );

  app.get(
    "/orgs/:orgID/projects/:projectID/agents",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listAgents",
        summary: "List agents",
        description:
          "Active agents of the project (agent.read); archived agents leave the list unless `state=archived`. Each carries its " +
          "`activity` (what it is doing now), which the `activity` filter matches. Newest first by default. " +
          "`parent_agent_id` lists the delegates a coordinator launched (docs/delegation.md).",
        params: s.ProjectParams,
        querystring: s.ListAgentsQuery,
        response: { 200: Page(s.Agent), ...errorResponses() },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      const profileId = request.query.agent_profile_id === undefined ? undefined : pathId("agentProfile", request.query.agent_profile_id);
      const parentAgentId = request.query.parent_agent_id === undefined ? undefined : pathId("agent", request.query.parent_agent_id);
      const activity = request.query.activity === undefined ? undefined : [...new Set(request.query.activity.split(","))] as ActivityStatus[];
      // Archived agents have no other activity: asking only for them lists the archived ones.
      const state = request.query.state ?? (activity?.every((a) => a === "archived") ? "archived" : "active");
      const rows = await agents.list(request.principal!, ...projectPath(request.params), { name: request.query.name, profileId, parentAgentId, state, ...(activity ? { activity } : {}), page });
      return toPage(rows, page.limit, page.sort, (r) => ({ value: sortValue(page.sort, r.agent), id: r.agent.id }), agentView);
    },
  );

  app.get(
    "/orgs/:orgID/projects/:projectID/activity/stream",
    {
      config: { longLived: true },
      schema: {
        tags: [s.TAG],
        operationId: "streamProjectActivity",
        summary: "Follow the project's agents",
        description:
          "Server-Sent Events (agent.read): an `agent` frame, the agent as the list shows it (its `activity` included), whenever " +
          "one of the project's agents changes what it is doing, is launched or archived; changes close together arrive as one " +
          "frame per agent. The stream carries changes only: read the list when connecting, and again on a `resync` frame (hints " +
          "may have been lost). Comment lines (`: ok`, `: heartbeat`) keep the connection open. Frames have no id: a reconnect " +
          "reads the list again. The caller's access is checked again while the stream is open (SVC_STREAM_ACCESS_RECHECK_MS); " +
          "when it is gone (a revoked key, an ended session, a removed member) an `error` frame ({error, code}) ends the stream.",
        params: s.ProjectParams,
        response: { 200: { description: "An event stream of `agent` and `resync` frames.", content: { "text/event-stream": { schema: s.Agent } } }, ...errorResponses(503) },
      },
    },
    async (request, reply) => {
      const path = projectPath(request.params);
      const scope = await agents.streamScope(request.principal!, ...path);
      await activity.follow(reply, scope, accessCheck(() => app.principalAgain(request), (principal) => agents.streamScope(principal, ...path)));
    },
  );

  app.get(
    "/orgs/:orgID/projects/:projectID/agents/:agentID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "getAgent",
        summary: "Get an agent",
        description: "One agent (agent.read), archived ones included.",
        params: s.AgentParams,
        response: { 200: s.GetAgentResponse, ...errorResponses() },
      },
    },
    async (request) => ({ agent: agentView(await agents.get(request.principal!, ...agentPath(request.params))), machine_ids: [], mcp_connections: [] }),
  );

  app.post(
    "/orgs/:orgID/projects/:projectID/agents/:agentID/archive",
    {
      schema: {
        tags: [s.TAG],
        operationId: "archiveAgent",
        summary: "Archive an agent",
        description:
          "Archives the agent (agent.operate): stops its current work like cancel, drops its waiting inputs and its wakeup. The " +
          "agent and its timeline stay readable by id; it leaves the list. Archiving an archived agent returns it unchanged.",
        params: s.AgentParams,
        response: { 200: s.CurrentAgentResponse, ...errorResponses() },
      },
    },
    async (request) => ({ agent: agentView(await agents.archive(request.principal!, ...agentPath(request.params))) }),
  );

  app.post(
    "/orgs/:orgID/projects/:projectID/agents/:agentID/config",
    {
      // The compiler reports NUL in a source with its line and column.
      config: { checksOwnText: ["/source"] },
      schema: {
        tags: [s.TAG],
        operationId: "updateAgentConfig",
        summary: "Change an agent's config",
        description:
          "Changes the agent's config mid-conversation (agent.operate). The source is compiled like POST /agent-configs; a " +
          "`config_change` input is recorded in the running turn (or opens a new one) and the new config applies from the " +
          "next model call. expected_current_config_id guards against a concurrent change (409).",
        headers: IdempotencyKeyHeader,
        params: s.AgentParams,
        body: UpdateAgentConfigRequest,
        response: { 200: UpdateAgentConfigResponse, ...errorResponses(409) },
      },
    },
    async (request) => {
      const expected = request.body.expected_current_config_id;
      const result = await agents.changeConfig(
        request.principal!,
        ...agentPath(request.params),
        {
          source: request.body.source,
          sourceFormat: request.body.source_format,
          ...(expected ? { expectedCurrentConfigId: pathId("agentConfig", expected) } : {}),
        },
        request.headers["idempotency-key"],
      );
      return { agent_config: agentConfigView(result.config), agent_input: agentInputView(result.input), event_id: encodeId("event", result.eventId) };
    },
  );

  app.post(
    "/orgs/:orgID/projects/:projectID/agents/:agentID/cancel",
    {
      schema: {
        tags: [s.TAG],
        operationId: "cancelAgent",
        summary: "Cancel an agent's current work",
        description:
          "Stops the agent's current work (agent.operate): the running model call, open interactions and unfinished tool calls " +
          "of the current turn (which complete as canceled), and waiting steering inputs; queued inputs stay. The cancel is " +
          "recorded as an agent_input event. When the agent is idle nothing changes: `affected` is false and `event` null.",
        params: s.AgentParams,
        body: Type.Optional(s.CancelAgentRequest),
        response: { 200: CancelAgentResponse, ...errorResponses() },
      },
    },
    async (request) => {
      const result = await agents.cancel(request.principal!, ...agentPath(request.params), request.body?.actor);
      return {
        event: result.event ? ((await loadEventsBySequence(db, result.agent, { after: result.event.sequence - 1, limit: 1 }))[0] ?? null) : null,
        runtime_cancel_requested: result.runtimeCancelRequested,
        affected: result.affected,
        ...(result.actorId ? { actor_id: encodeId("actor", result.actorId) } : {}),
      };
    },
  );
}
