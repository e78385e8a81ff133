import { invalidRequest } from "../../platform/errors.js";
import { Type } from "typebox";
import type { HttpApp } from "../../platform/http/app.js";
import { Cursor, DEFAULT_PAGE_SIZE, Limit } from "../../platform/http/lists.js";
import { pathId, projectPath } from "../../platform/http/params.js";
import { ErrorEnvelope, errorResponses, Id, writtenByViews } from "../../platform/http/schemas.js";
import { AgentParams, TAG as AGENTS_TAG } from "../agents/schemas.js";
import { EVENT_PAGE, TURN_PAGE, type TimelineService } from "./service.js";
import type { EventStreams } from "./stream.js";
import { AgentSnapshot } from "./snapshot.js";
import * as v from "./views.js";
import { accessCheck } from "../../platform/http/access-watch.js";

const strict = { additionalProperties: false } as const;

const Boundary = (description: string) => Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description });
const EventLimit = Type.Integer({ minimum: 1, maximum: EVENT_PAGE.max, default: EVENT_PAGE.default, description: "Events per page." });

const ListEventsQuery = Type.Object(
  {
    after_sequence: Type.Optional(Boundary("Read forward from here (exclusive); 0, the default, is the beginning.")),
    before_sequence: Type.Optional(Boundary("Read backward from here (exclusive); 0 is the newest event. Wins over after_sequence.")),
    limit: Type.Optional(EventLimit),
  },
  strict,
);

const ListTurnsQuery = Type.Object(
  {
    before_turn_sequence: Type.Optional(Boundary("Turns older than this one (exclusive); 0 or absent: the newest.")),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: TURN_PAGE.max, default: TURN_PAGE.default, description: "Turns per page." })),
  },
  strict,
);

const TurnEventsQuery = Type.Object(
  {
    before_sequence: Type.Optional(Boundary("Events older than this sequence (exclusive); 0 or absent: the turn's newest.")),
    limit: Type.Optional(EventLimit),
  },
  strict,
);

const TurnParams = Type.Object({ orgID: Id("org"), projectID: Id("project"), agentID: Id("agent"), turnID: Id("turn") }, strict);

const ListToolCallsQuery = Type.Object(
  { state: Type.Optional(v.ToolCallState), type: Type.Optional(v.ToolCallType), limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) },
  strict,
);

const StreamQuery = Type.Object(
  {
    after_sequence: Type.Optional(Boundary("Send saved events after this sequence; the Last-Event-ID header wins when both are given.")),
    snapshot: Type.Optional(
      Type.Boolean({
        description:
          "Send the agent's present first, as an `event: snapshot` frame without an id (AgentSnapshot: status, open interactions, " +
          "pending tool calls, backlog_count, last_sequence), on a fresh connection and on a resumed one alike (default false). " +
          "The frames after it are the same as without it.",
      }),
    ),
    stream_deltas: Type.Optional(
      Type.Boolean({
        description:
          "Also send `model_output_delta` previews while a model responds (default false). Previews are not saved and never " +
          "replayed; the `model_output` event with the same model_call_context_id replaces them.",
      }),
    ),
  },
  strict,
);

const StreamHeaders = Type.Object({
  "last-event-id": Type.Optional(Boundary("The last saved sequence the client processed; resumes after it.")),
});

const StreamFrame = Type.Union([v.AgentEvent, v.ToolCallUpdate, v.ModelOutputDelta, AgentSnapshot, ErrorEnvelope]);

export function timelineRoutes(app: HttpApp, deps: { timeline: TimelineService; streams: EventStreams }) {
  const { timeline, streams } = deps;
  const agentPath = (params: { orgID: string; projectID: string; agentID: string }) => [...projectPath(params), pathId("agent", params.agentID)] as const;

  // Open streams would otherwise keep `close()` waiting for their connections forever.
  app.addHook("preClose", () => streams.closeAll());

  app.get(
    "/orgs/:orgID/projects/:projectID/agents/:agentID/events",
    {
      ...writtenByViews,
      schema: {
        tags: [v.TAG],
        operationId: "listEvents",
        summary: "List an agent's events",
        description:
          "A page of the agent's saved events, oldest first within the page (agent.read). Forward: pass each next_after_sequence " +
          "as after_sequence until has_more is false. Backward: start with before_sequence=0 (the newest) and pass each " +
          "next_before_sequence as before_sequence; on a backward page has_more says whether older events remain, and " +
          "next_before_sequence is null once the first event was returned.",
        params: AgentParams,
        querystring: ListEventsQuery,
        response: { 200: v.ListAgentEventsResponse, ...errorResponses(503) },
      },
    },
    async (request) =>
      timeline.listEvents(request.principal!, ...agentPath(request.params), {
        after: request.query.after_sequence,
        before: request.query.before_sequence,
        limit: request.query.limit ?? EVENT_PAGE.default,
      }),
  );

  app.get(
    "/orgs/:orgID/projects/:projectID/agents/:agentID/events/stream",
    {
      config: { longLived: true },
      schema: {
        tags: [v.TAG],
        operationId: "streamEvents",
        summary: "Stream an agent's events",
        description:
          "Follows the agent's timeline as Server-Sent Events (agent.read). Every saved event after the cursor is sent first, then " +
          "new ones as they are saved; the SSE event name is the event_kind and the SSE id its sequence. `tool_call_update` " +
          "({tool_call_id, state}) and `model_output_delta` frames are live-only and carry no id. Comment lines (`: ok`, " +
          "`: heartbeat`) keep the connection open. An `error` frame ({error, code}) ends the stream; reconnect with Last-Event-ID. " +
          "The caller's access is checked again while the stream is open (SVC_STREAM_ACCESS_RECHECK_MS): when it is gone (a " +
          "revoked key, an ended session, a removed member) the `error` frame's code is `unauthorized` or `forbidden`.",
        params: AgentParams,
        querystring: StreamQuery,
        headers: StreamHeaders,
        response: { 200: { description: "An event stream.", content: { "text/event-stream": { schema: StreamFrame } } }, ...errorResponses(503) },
      },
    },
    async (request, reply) => {
      const after = request.headers["last-event-id"] ?? request.query.after_sequence ?? 0;
      const agent = await timeline.streamTarget(request.principal!, ...agentPath(request.params));
      // A cursor past the newest event cannot come from this agent's timeline (issue 9, F9): say so
      // rather than wait for events that would be skipped.
      const newest = agent.nextEventSequence - 1;
      if (after > newest) throw invalidRequest(`the resume cursor ${after} is past the agent's newest event (${newest})`);
      const snapshot = request.query.snapshot ? () => timeline.snapshot(request.principal!, ...agentPath(request.params)) : undefined;
      const access = accessCheck(() => app.principalAgain(request), (principal) => timeline.streamTarget(principal, ...agentPath(request.params)));
      await streams.follow(reply, agent, { after, deltas: request.query.stream_deltas ?? false, access, ...(snapshot ? { snapshot } : {}) });
    },
  );

  app.get(
    "/orgs/:orgID/projects/:projectID/agents/:agentID/turns",
    {
      ...writtenByViews,
      schema: {
        tags: [v.TAG],
        operationId: "listTurns",
        summary: "List an agent's turns",
        description:
          "The agent's turns, newest first (agent.read), each with the events that opened it and its latest events. Pass " +
          "next_before_turn_sequence as before_turn_sequence for older turns; it is null once turn 1 was returned.",
        params: AgentParams,
        querystring: ListTurnsQuery,
        response: { 200: v.ListAgentTurnsResponse, ...errorResponses(503) },
      },
    },
    async (request) =>
      timeline.listTurns(request.principal!, ...agentPath(request.params), {
        before: request.query.before_turn_sequence,
        limit: request.query.limit ?? TURN_PAGE.default,
      }),
  );

  app.get(
    "/orgs/:orgID/projects/:projectID/agents/:agentID/turns/:turnID/events",
    {
      ...writtenByViews,
      schema: {
        tags: [v.TAG],
        operationId: "listTurnEvents",
        summary: "List a turn's events",
        description:
          "One turn's events, paged backward from its newest and oldest first within a page (agent.read). Pass " +
          "next_before_sequence as before_sequence until it is null.",
        params: TurnParams,
        querystring: TurnEventsQuery,
        response: { 200: v.ListTurnEventsResponse, ...errorResponses(503) },
      },
    },
    async (request) =>
      timeline.listTurnEvents(request.principal!, ...agentPath(request.params), pathId("turn", request.params.turnID), {
        before: request.query.before_sequence,
        limit: request.query.limit ?? EVENT_PAGE.default,
      }),
  );

  app.get(
    "/orgs/:orgID/projects/:projectID/agents/:agentID/tool-calls",
    {
      schema: {
        tags: [AGENTS_TAG],
        operationId: "listToolCalls",
        summary: "List an agent's tool calls",
        description:
          "The agent's tool calls with their current state (agent.read), ordered by created_at ascending, then id ascending. " +
          "`state=ready&type=custom` lists the calls waiting for a result from the client. Query this after (re)connecting to " +
          "the event stream: tool_call_update frames are not replayed.",
        params: AgentParams,
        querystring: ListToolCallsQuery,
        response: { 200: v.ListToolCallsResponse, ...errorResponses(503) },
      },
    },
    async (request) =>
      timeline.listToolCalls(
        request.principal!,
        ...agentPath(request.params),
        { state: request.query.state, type: request.query.type },
        { limit: request.query.limit ?? DEFAULT_PAGE_SIZE, cursor: request.query.cursor },
      ),
  );
}
