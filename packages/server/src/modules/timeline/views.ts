import { Type, type Static } from "typebox";
import { encodeId } from "../../platform/ids.js";
import { Id, iso, Page, Timestamp } from "../../platform/http/schemas.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { ContentBlockMetadata, MediaRefContentBlock, StructuredDataContentBlock, TextContentBlock } from "../artifacts/schemas.js";
import { eventsAfter, eventsBefore, type EventRecord, type ToolCallRow, type TurnRow } from "./store.js";
import { component } from "../../platform/http/components.js";

/*
 * The public shape of an agent's timeline: events (a union on `event_kind`), turns, tool calls and the
 * live-only stream frames, plus the projection from rows to it. The schemas serialize and document the
 * list responses; the view functions build objects in the schemas' property order, so the SSE stream,
 * which writes JSON directly, sends byte for byte what the list routes send.
 */

const strict = { additionalProperties: false } as const;

export const TAG = "Events";

/** A saved event's position in its agent's timeline: dense, from 1. */
const Sequence = component("AgentSequence", Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }));
/** A paging boundary: a sequence, or 0 for "none yet". */
const SequenceCursor = component("AgentSequenceCursor", Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }));
const Count = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });

export const ToolCallType = component("ToolCallType", Type.Enum(["built_in", "custom", "mcp"]));
export const ToolCallState = component("ToolCallState", Type.Enum(["awaiting_authorization", "awaiting_permission", "ready", "running", "waiting", "completed"]));
export const ToolCallOutcome = component("ToolCallOutcome", Type.Enum(["succeeded", "failed", "denied", "canceled"]));
const ToolInput = component("ToolInput", Type.Object({}, { additionalProperties: true }));

// Content blocks are returned as stored. Text, media_ref and structured_data blocks are the artifacts
// module's (shared with inputs and tool results); the model's own blocks are defined here.
const blockMetadata = { metadata: Type.Optional(ContentBlockMetadata) };
const ReasoningBlock = component("ReasoningContentBlock", Type.Object({ type: Type.Literal("reasoning"), text: Type.String(), ...blockMetadata }, strict));
const ToolCallBlock = component("ModelToolCallContentBlock", Type.Object(
  { type: Type.Literal("tool_call"), tool_call_id: Id("toolCall"), tool_type: ToolCallType, name: Type.String(), input: ToolInput, ...blockMetadata },
  strict,
));
const ErrorBlock = component("ErrorContentBlock", Type.Object({ type: Type.Literal("error"), text: Type.String(), ...blockMetadata }, strict));

const byType = { discriminator: { propertyName: "type" } };
const AgentInputContentBlock = component("AgentInputContentBlock", Type.Union([TextContentBlock, MediaRefContentBlock], byType));
const ModelOutputContentBlock = component("ModelOutputContentBlock", Type.Union([TextContentBlock, MediaRefContentBlock, ReasoningBlock, ToolCallBlock, ErrorBlock], byType));
const ToolResultContentBlock = component("ToolResultContentBlock", Type.Union([TextContentBlock, MediaRefContentBlock, StructuredDataContentBlock], byType));

const eventHead = {
  id: Id("event"),
  org_id: Id("org"),
  project_id: Id("project"),
  agent_id: Id("agent"),
  turn_id: Id("turn"),
  turn_sequence: Sequence,
};

export const AgentInputEvent = component("AgentInputEvent", Type.Object(
  {
    ...eventHead,
    is_opening_event: Type.Boolean(),
    sequence: Sequence,
    event_kind: Type.Literal("agent_input"),
    agent_input_id: Id("agentInput"),
    input_kind: Type.Enum(["content", "control", "interaction_response", "config_change"]),
    actor_id: Type.Optional(Id("actor")),
    input_idempotency_key: Type.Optional(Type.String()),
    control_type: Type.Optional(Type.Enum(["cancel_current"])),
    interaction_id: Type.Optional(Id("interaction")),
    agent_config_id: Type.Optional(Id("agentConfig")),
    content_blocks: Type.Array(AgentInputContentBlock),
    created_at: Timestamp,
  },
  strict,
));

const TokenTotal = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
export const ModelCallUsage = component("ModelCallUsage", Type.Object(
  {
    input_tokens: { ...TokenTotal, description: "The whole prompt, cache reads and writes included." },
    output_tokens: { ...TokenTotal, description: "Reasoning tokens included." },
    cache_read_input_tokens: TokenTotal,
    cache_write_input_tokens: TokenTotal,
    reasoning_output_tokens: TokenTotal,
    cost_micro_usd: {
      ...TokenTotal,
      description: "Millionths of a US dollar, from the pricing of the model revision the call used; 0 without pricing (docs/usage-and-budgets.md).",
    },
  },
  { additionalProperties: false, description: "The model call's token usage as the provider reported it, and its cost." },
));

export const ModelOutputEvent = component("ModelOutputEvent", Type.Object(
  {
    ...eventHead,
    is_opening_event: Type.Literal(false),
    sequence: Sequence,
    event_kind: Type.Literal("model_output"),
    model_call_context_id: Id("modelCallContext"),
    stop_reason: Type.Enum(["end_turn", "tool_use", "max_tokens", "refusal", "content_filter", "error"]),
    content_blocks: Type.Array(ModelOutputContentBlock),
    usage: ModelCallUsage,
    created_at: Timestamp,
  },
  strict,
));

export const ToolResultEvent = component("ToolResultEvent", Type.Object(
  {
    ...eventHead,
    is_opening_event: Type.Literal(false),
    sequence: Sequence,
    event_kind: Type.Literal("tool_result"),
    tool_call_id: Id("toolCall"),
    outcome: ToolCallOutcome,
    content_blocks: Type.Array(ToolResultContentBlock),
    created_at: Timestamp,
  },
  strict,
));

export const ContextCheckpointEvent = component("ContextCheckpointEvent", Type.Object(
  {
    ...eventHead,
    is_opening_event: Type.Literal(false),
    sequence: Sequence,
    event_kind: Type.Literal("context_checkpoint"),
    context_checkpoint_id: Id("contextCheckpoint"),
    summarized_through_event_sequence: Sequence,
    summary: Type.String(),
    created_at: Timestamp,
  },
  strict,
));

const Micros = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });

export const BudgetExceededEvent = component("BudgetExceededEvent", Type.Object(
  {
    ...eventHead,
    is_opening_event: Type.Literal(false),
    sequence: Sequence,
    event_kind: Type.Literal("budget_exceeded"),
    budget_id: Id("budget"),
    spent_micro_usd: Micros,
    limit_micro_usd: Type.Union([Micros, Type.Null()]),
    spent_tokens: Micros,
    limit_tokens: Type.Union([Micros, Type.Null()]),
    period_end: Type.Union([Timestamp, Type.Null()], { description: "When the budget's period ends and the agent resumes by itself; null for a total budget." }),
    created_at: Timestamp,
  },
  {
    ...strict,
    description:
      "A model call an exceeded pause budget refused: the turn ends here, and inputs wait in the backlog until the period ends or " +
      "the budget is raised or deleted (docs/usage-and-budgets.md).",
  },
));

export const AgentEvent = component("AgentEvent", Type.Union([AgentInputEvent, ModelOutputEvent, ToolResultEvent, ContextCheckpointEvent, BudgetExceededEvent], {
  discriminator: { propertyName: "event_kind" },
}));
export type AgentEventView = Static<typeof AgentEvent>;

export const AgentTurn = component("AgentTurn", Type.Object(
  {
    id: Id("turn"),
    agent_id: Id("agent"),
    turn_sequence: Sequence,
    event_count: Count,
    opening_events: Type.Array(AgentEvent),
    latest_event: Type.Optional(AgentEvent),
    latest_semantic_event: Type.Optional(AgentEvent),
    started_at: Timestamp,
    updated_at: Timestamp,
  },
  strict,
));
export type AgentTurnView = Static<typeof AgentTurn>;

export const ListAgentEventsResponse = component("ListAgentEventsResponse", Type.Object(
  {
    data: Type.Array(AgentEvent),
    next_after_sequence: SequenceCursor,
    next_before_sequence: Type.Optional(Type.Union([SequenceCursor, Type.Null()])),
    has_more: Type.Boolean(),
  },
  strict,
));

export const ListAgentTurnsResponse = component("ListAgentTurnsResponse", Type.Object(
  { data: Type.Array(AgentTurn), next_before_turn_sequence: Type.Union([SequenceCursor, Type.Null()]) },
  strict,
));

export const ListTurnEventsResponse = component("ListTurnEventsResponse", Type.Object(
  { data: Type.Array(AgentEvent), next_before_sequence: Type.Union([SequenceCursor, Type.Null()]) },
  strict,
));

export const ToolCall = component("ToolCall", Type.Object(
  {
    id: Id("toolCall"),
    agent_id: Id("agent"),
    turn_id: Id("turn"),
    provider_call_id: Type.String(),
    name: Type.String(),
    input: ToolInput,
    type: ToolCallType,
    state: ToolCallState,
    outcome: Type.Optional(ToolCallOutcome),
    completed_at: Type.Optional(Timestamp),
    created_at: Timestamp,
  },
  strict,
));
export type ToolCallView = Static<typeof ToolCall>;

export const ListToolCallsResponse = component("ListToolCallsResponse", Page(ToolCall));

// Live-only frames of the stream; documented here, written by stream.ts.
export const ToolCallUpdate = component("ToolCallUpdate", Type.Object({ tool_call_id: Id("toolCall"), state: ToolCallState }, strict));

export const ModelOutputDelta = component("ModelOutputDelta", Type.Object(
  {
    turn_id: Id("turn"),
    model_call_context_id: Id("modelCallContext"),
    seq: Sequence,
    source_seq_start: Sequence,
    source_seq_end: Sequence,
    coalesced_count: Count,
    event: Type.Object(
      {
        kind: Type.Enum(["block_start", "text_delta", "thinking_delta", "tool_arguments_delta", "block_stop", "message_stop", "error"]),
      },
      {
        additionalProperties: true,
        description:
          "One preview step. `block_start` carries `block_index` and `block` ({kind: text | thinking | tool_use, tool_call_id?, " +
          "tool_name?}); `text_delta`, `thinking_delta` and `tool_arguments_delta` carry `block_index` and `delta`; `block_stop` " +
          "carries `block_index`; `message_stop` carries `stop` ({reason, usage}, usage with cost_micro_usd); `error` carries `error` ({message}).",
      },
    ),
  },
  strict,
));

/** What an agent contributes to each of its events: the ids every event repeats. */
export interface AgentScope {
  id: string;
  orgId: string;
  projectId: string;
}

type EventOf<K extends AgentEventView["event_kind"]> = Extract<AgentEventView, { event_kind: K }>;

/** The encoded ids every event of one agent repeats; encoded once per page, not once per event. */
interface EncodedScope {
  org_id: string;
  project_id: string;
  agent_id: string;
}

function encodeScope(agent: AgentScope): EncodedScope {
  return { org_id: encodeId("org", agent.orgId), project_id: encodeId("project", agent.projectId), agent_id: encodeId("agent", agent.id) };
}

/**
 * One agent's saved events as the API shows them, in the order given. Content blocks are stored in
 * their public shape (ids already encoded) and are returned as stored. A payload an event points at
 * must exist: the timeline's writers create both in one transaction, so a missing one is a bug,
 * reported as such.
 */
export function eventViews(agent: AgentScope, rows: EventRecord[]): AgentEventView[] {
  const scope = encodeScope(agent);
  return rows.map((row) => viewOf(scope, row));
}

/*
 * Views here are object literals with their optional members added in schema order, never spread in:
 * V8 builds a spread (`...head`, `...(cond ? {…} : {})`) through a generic copy, which made a page of
 * 100 events cost about 1.2 ms of CPU more than these literals (issue 8's event page target).
 */
function viewOf(scope: EncodedScope, row: EventRecord): AgentEventView {
  switch (row.eventKind) {
    case "agent_input":
      return inputView(scope, row, present(row.input, row));
    case "model_output": {
      const output = present(row.output, row);
      const event: EventOf<"model_output"> = {
        id: encodeId("event", row.id),
        org_id: scope.org_id,
        project_id: scope.project_id,
        agent_id: scope.agent_id,
        turn_id: encodeId("turn", row.turnId),
        turn_sequence: row.turnSequence,
        is_opening_event: false,
        sequence: row.sequence,
        event_kind: "model_output",
        model_call_context_id: encodeId("modelCallContext", output.modelCallContextId),
        stop_reason: output.stopReason as EventOf<"model_output">["stop_reason"],
        content_blocks: output.contentBlocks as EventOf<"model_output">["content_blocks"],
        usage: usageView(row.usage),
        created_at: iso(row.createdAt),
      };
      return event;
    }
    case "tool_result": {
      const result = present(row.result, row);
      const event: EventOf<"tool_result"> = {
        id: encodeId("event", row.id),
        org_id: scope.org_id,
        project_id: scope.project_id,
        agent_id: scope.agent_id,
        turn_id: encodeId("turn", row.turnId),
        turn_sequence: row.turnSequence,
        is_opening_event: false,
        sequence: row.sequence,
        event_kind: "tool_result",
        tool_call_id: encodeId("toolCall", result.toolCallId),
        outcome: result.outcome as EventOf<"tool_result">["outcome"],
        content_blocks: result.contentBlocks as EventOf<"tool_result">["content_blocks"],
        created_at: iso(row.createdAt),
      };
      return event;
    }
    case "context_checkpoint": {
      const checkpoint = present(row.checkpoint, row);
      const event: EventOf<"context_checkpoint"> = {
        id: encodeId("event", row.id),
        org_id: scope.org_id,
        project_id: scope.project_id,
        agent_id: scope.agent_id,
        turn_id: encodeId("turn", row.turnId),
        turn_sequence: row.turnSequence,
        is_opening_event: false,
        sequence: row.sequence,
        event_kind: "context_checkpoint",
        context_checkpoint_id: encodeId("contextCheckpoint", checkpoint.id),
        summarized_through_event_sequence: checkpoint.summarizedThroughEventSequence,
        summary: checkpoint.summary,
        created_at: iso(row.createdAt),
      };
      return event;
    }
    case "budget_exceeded": {
      const payload = present(row.payload, row) as BudgetStopPayload;
      const event: EventOf<"budget_exceeded"> = {
        id: encodeId("event", row.id),
        org_id: scope.org_id,
        project_id: scope.project_id,
        agent_id: scope.agent_id,
        turn_id: encodeId("turn", row.turnId),
        turn_sequence: row.turnSequence,
        is_opening_event: false,
        sequence: row.sequence,
        event_kind: "budget_exceeded",
        budget_id: payload.budget_id,
        spent_micro_usd: payload.spent_micro_usd,
        limit_micro_usd: payload.limit_micro_usd,
        spent_tokens: payload.spent_tokens,
        limit_tokens: payload.limit_tokens,
        period_end: payload.period_end,
        created_at: iso(row.createdAt),
      };
      return event;
    }
    default:
      throw new Error(`event ${row.id} has an unknown kind "${row.eventKind}"`);
  }
}

/** A `budget_exceeded` event's stored payload: its public fields, ids already encoded (runtime/budgets.ts). */
type BudgetStopPayload = Pick<EventOf<"budget_exceeded">, "budget_id" | "spent_micro_usd" | "limit_micro_usd" | "spent_tokens" | "limit_tokens" | "period_end">;

function usageView(usage: EventRecord["usage"]): EventOf<"model_output">["usage"] {
  return {
    input_tokens: usage?.inputTokens ?? 0,
    output_tokens: usage?.outputTokens ?? 0,
    cache_read_input_tokens: usage?.cacheReadTokens ?? 0,
    cache_write_input_tokens: usage?.cacheWriteTokens ?? 0,
    reasoning_output_tokens: usage?.reasoningTokens ?? 0,
    cost_micro_usd: usage?.costMicroUsd ?? 0,
  };
}

type InputEvent = EventOf<"agent_input">;

function inputView(scope: EncodedScope, row: EventRecord, input: NonNullable<EventRecord["input"]>): InputEvent {
  // The members before the optional ones; content_blocks and created_at follow them (schema order).
  const event = {
    id: encodeId("event", row.id),
    org_id: scope.org_id,
    project_id: scope.project_id,
    agent_id: scope.agent_id,
    turn_id: encodeId("turn", row.turnId),
    turn_sequence: row.turnSequence,
    is_opening_event: row.isOpeningEvent,
    sequence: row.sequence,
    event_kind: "agent_input",
    agent_input_id: encodeId("agentInput", input.id),
    input_kind: input.inputKind as InputEvent["input_kind"],
  } as InputEvent;
  if (input.actorId !== null) event.actor_id = encodeId("actor", input.actorId);
  if (input.inputIdempotencyKey !== null) event.input_idempotency_key = input.inputIdempotencyKey;
  if (input.controlType !== null) event.control_type = input.controlType as NonNullable<InputEvent["control_type"]>;
  if (input.interactionId !== null) event.interaction_id = encodeId("interaction", input.interactionId);
  if (input.agentConfigId !== null) event.agent_config_id = encodeId("agentConfig", input.agentConfigId);
  event.content_blocks = input.contentBlocks as InputEvent["content_blocks"];
  event.created_at = iso(row.createdAt);
  return event;
}

function present<T>(payload: T | null, row: EventRecord): T {
  if (payload === null) throw new Error(`${row.eventKind} event ${row.id} has no payload`);
  return payload;
}

/**
 * Which events to load: forward after a sequence, or backward before one (null: from the newest),
 * optionally within one turn. Either way the result is oldest first.
 */
export type SequenceRange = { after: number; limit: number } | { before: number | null; limit: number; turnId?: string };

/** An agent's event rows in `range`, oldest first. One query whatever the range. */
export async function loadEventRows(db: Tx | AppDb, agentId: string, range: SequenceRange): Promise<EventRecord[]> {
  return "after" in range
    ? eventsAfter(db, agentId, range.after, range.limit)
    : (await eventsBefore(db, agentId, range.before, range.limit, range.turnId)).reverse();
}

/** An agent's events in `range`, as the API shows them, oldest first. */
export async function loadEventsBySequence(db: Tx | AppDb, agent: AgentScope, range: SequenceRange): Promise<AgentEventView[]> {
  return eventViews(agent, await loadEventRows(db, agent.id, range));
}

/** The events a turn shows without being opened: what started it, and its newest events. */
export interface TurnBoundary {
  opening: AgentEventView[];
  latest?: AgentEventView;
  latestSemantic?: AgentEventView;
}

export function turnView(agent: AgentScope, turn: TurnRow, boundary: TurnBoundary): AgentTurnView {
  const view = {
    id: encodeId("turn", turn.id),
    agent_id: encodeId("agent", agent.id),
    turn_sequence: turn.turnSequence,
    event_count: turn.eventCount,
    opening_events: boundary.opening,
  } as AgentTurnView;
  if (boundary.latest) view.latest_event = boundary.latest;
  if (boundary.latestSemantic) view.latest_semantic_event = boundary.latestSemantic;
  view.started_at = iso(turn.startedAt);
  view.updated_at = iso(turn.updatedAt);
  return view;
}

export function toolCallView(row: ToolCallRow): ToolCallView {
  const view = {
    id: encodeId("toolCall", row.id),
    agent_id: encodeId("agent", row.agentId),
    turn_id: encodeId("turn", row.turnId),
    provider_call_id: row.providerCallId,
    name: row.name,
    input: row.input,
    type: row.type as ToolCallView["type"],
    state: row.state as ToolCallView["state"],
  } as ToolCallView;
  if (row.outcome !== null) view.outcome = row.outcome as NonNullable<ToolCallView["outcome"]>;
  if (row.completedAt !== null) view.completed_at = iso(row.completedAt);
  view.created_at = iso(row.createdAt);
  return view;
}
