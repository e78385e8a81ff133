import { Type } from "typebox";
import type { HttpApp } from "../../platform/http/app.js";
import { DEFAULT_PAGE_SIZE } from "../../platform/http/lists.js";
import { pathId, projectPath } from "../../platform/http/params.js";
import { errorResponses, IdempotencyKeyHeader, OkResponse, Page } from "../../platform/http/schemas.js";
import { CONTENT_BODY_LIMIT } from "../artifacts/service.js";
import { AgentParams } from "../agents/schemas.js";
import * as s from "./schemas.js";
import type { InputsService } from "./service.js";
import { agentInputView } from "./views.js";

export function inputRoutes(app: HttpApp, deps: { inputs: InputsService }) {
  const { inputs } = deps;
  const target = (params: { orgID: string; projectID: string; agentID: string; inputID: string }) =>
    [...projectPath(params), pathId("agent", params.agentID), pathId("agentInput", params.inputID)] as const;

  app.post(
    "/orgs/:orgID/projects/:projectID/agents/:agentID/inputs",
    {
      bodyLimit: CONTENT_BODY_LIMIT,
      schema: {
        tags: [s.TAG],
        operationId: "createAgentInput",
        summary: "Send an input to an agent",
        description:
          "Sends the agent an input (agent.operate). `queued` inputs wait until the current turn ends and open one turn each, in " +
          "backlog order; `steering` inputs join at the next model call. With an Idempotency-Key, the same request again " +
          "answers 200 with the stored input and a different request with that key 409 idempotency_key_conflict. Requests " +
          "made as a user are attributed to the user's svc actor; org keys may name an external `actor`.",
        headers: IdempotencyKeyHeader,
        params: AgentParams,
        body: s.CreateAgentInputRequest,
        response: { 200: s.AgentInputEnvelope, 201: s.AgentInputEnvelope, ...errorResponses(409, 413) },
      },
    },
    async (request, reply) => {
      const { input, created } = await inputs.sendInput(
        request.principal!,
        ...projectPath(request.params),
        pathId("agent", request.params.agentID),
        request.body,
        request.headers["idempotency-key"],
      );
      return reply.status(created ? 201 : 200).send({ agent_input: agentInputView(input) });
    },
  );

  app.get(
    "/orgs/:orgID/projects/:projectID/agents/:agentID/inputs/backlog",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listQueuedBacklogInputs",
        summary: "List an agent's waiting inputs",
        description:
          "Inputs waiting to be taken by the agent (agent.read): steering inputs first, then queued inputs, each group ordered " +
          "by input rank, then queued_at ascending, then id ascending.",
        params: AgentParams,
        querystring: s.BacklogQuery,
        response: { 200: Page(s.AgentInput), ...errorResponses() },
      },
    },
    async (request) => {
      const page = { limit: request.query.limit ?? DEFAULT_PAGE_SIZE, cursor: request.query.cursor };
      const { rows, nextCursor } = await inputs.backlog(request.principal!, ...projectPath(request.params), pathId("agent", request.params.agentID), page);
      return { data: rows.map(agentInputView), next_cursor: nextCursor };
    },
  );

  const waitingInputNote = " Only an input still waiting in the backlog can change; once the agent has taken it: 409.";

  app.post(
    "/orgs/:orgID/projects/:projectID/agents/:agentID/inputs/:inputID/cancel",
    {
      schema: {
        tags: [s.TAG],
        operationId: "cancelQueuedBacklogInput",
        summary: "Withdraw a waiting input",
        description: "Withdraws a waiting input (agent.operate)." + waitingInputNote,
        params: s.AgentInputParams,
        response: { 200: OkResponse, ...errorResponses(409) },
      },
    },
    async (request) => {
      await inputs.cancelInput(request.principal!, ...target(request.params));
      return { ok: true as const };
    },
  );

  app.post(
    "/orgs/:orgID/projects/:projectID/agents/:agentID/inputs/:inputID/move",
    {
      schema: {
        tags: [s.TAG],
        operationId: "moveQueuedBacklogInput",
        summary: "Reorder a waiting input",
        description:
          "Reorders a waiting input within its group (agent.operate): to the `front` or `back`, or `before`/`after` another " +
          "waiting input of the same group given as anchor_input_id." + waitingInputNote,
        params: s.AgentInputParams,
        body: s.MoveQueuedBacklogInputRequest,
        response: { 200: OkResponse, ...errorResponses(409) },
      },
    },
    async (request) => {
      const anchorId = request.body.anchor_input_id === undefined ? undefined : pathId("agentInput", request.body.anchor_input_id);
      await inputs.moveInput(request.principal!, ...target(request.params), { position: request.body.position, anchorId });
      return { ok: true as const };
    },
  );

  app.post(
    "/orgs/:orgID/projects/:projectID/agents/:agentID/inputs/:inputID/promote_to_steering",
    {
      schema: {
        tags: [s.TAG],
        operationId: "promoteQueuedInputToSteering",
        summary: "Promote a queued input to steering",
        description:
          "Makes a waiting queued input steering, at the end of the steering group (agent.operate). With " +
          "cancel_open_interactions, open interactions of the current turn's unfinished tool calls are canceled in the same " +
          "transaction and their tool calls complete as canceled; the turn, the runtime and unrelated tool calls are kept." +
          waitingInputNote,
        params: s.AgentInputParams,
        body: Type.Optional(s.PromoteQueuedInputToSteeringRequest),
        response: { 200: OkResponse, ...errorResponses(409) },
      },
    },
    async (request) => {
      await inputs.promoteToSteering(request.principal!, ...target(request.params), {
        cancelOpenInteractions: request.body?.cancel_open_interactions ?? false,
      });
      return { ok: true as const };
    },
  );

  app.post(
    "/orgs/:orgID/projects/:projectID/agents/:agentID/inputs/:inputID/demote_to_queued",
    {
      schema: {
        tags: [s.TAG],
        operationId: "demoteSteeringInputToQueued",
        summary: "Demote a steering input to queued",
        description: "Makes a waiting steering input queued, at the end of the queued group (agent.operate)." + waitingInputNote,
        params: s.AgentInputParams,
        response: { 200: OkResponse, ...errorResponses(409) },
      },
    },
    async (request) => {
      await inputs.demoteToQueued(request.principal!, ...target(request.params));
      return { ok: true as const };
    },
  );
}
