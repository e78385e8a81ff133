import { sql } from "drizzle-orm";
import { bigint, boolean, check, foreignKey, index, integer, jsonb, pgTable, text, unique, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { createdAt, idColumn, optionalTime, requiredTime, updatedAt } from "./columns.js";
import { agentInputs, agents } from "./agents.js";

/*
 * One agent's durable timeline and the execution records behind it. Every table carries agent_id and
 * cascades with the agent. Content blocks are stored as a JSON array on the row that owns them (input,
 * model output, tool result): they are written once, always read with their owner, and never queried
 * on their own.
 */

export const agentTurns = pgTable(
  "agent_turns",
  {
    id: idColumn(),
    agentId: uuid("agent_id").notNull().references(() => agents.id, { onDelete: "cascade" }),
    turnSequence: integer("turn_sequence").notNull(),
    eventCount: integer("event_count").notNull().default(0),
    latestEventId: uuid("latest_event_id"),
    latestSemanticEventId: uuid("latest_semantic_event_id"),
    /** Highest sequence of an event that asks the model to answer (content input, tool result, checkpoint). */
    latestPromptSequence: bigint("latest_prompt_sequence", { mode: "number" }).notNull().default(0),
    /** Sequence of the turn's latest cancel (`cancel_current`): nothing before it asks for model work. */
    stopSequence: bigint("stop_sequence", { mode: "number" }).notNull().default(0),
    startedAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [unique("agent_turns_sequence").on(t.agentId, t.turnSequence), check("agent_turns_sequence_positive", sql`${t.turnSequence} >= 1`)],
);

/** Immutable. Exactly one payload reference, matching the kind. */
export const agentEvents = pgTable(
  "agent_events",
  {
    id: idColumn(),
    agentId: uuid("agent_id").notNull().references(() => agents.id, { onDelete: "cascade" }),
    turnId: uuid("turn_id").notNull().references(() => agentTurns.id, { onDelete: "cascade" }),
    sequence: bigint("sequence", { mode: "number" }).notNull(),
    eventKind: text("event_kind").notNull(),
    isOpeningEvent: boolean("is_opening_event").notNull().default(false),
    agentInputId: uuid("agent_input_id").references(() => agentInputs.id, { onDelete: "cascade" }),
    modelOutputId: uuid("model_output_id"),
    toolCallId: uuid("tool_call_id"),
    contextCheckpointId: uuid("context_checkpoint_id"),
    /**
     * The event's own payload for kinds that point at no other row: a `budget_exceeded` event's
     * `{budget_id, spent_micro_usd, limit_micro_usd, spent_tokens, limit_tokens, period_end}` (ids encoded).
     */
    payload: jsonb("payload"),
    idempotencyKey: text("idempotency_key"),
    createdAt: createdAt(),
  },
  (t) => [
    unique("agent_events_sequence").on(t.agentId, t.sequence),
    unique("agent_events_idempotency_key").on(t.agentId, t.idempotencyKey),
    check("agent_events_sequence_positive", sql`${t.sequence} >= 1`),
    check(
      "agent_events_payload",
      sql`(${t.eventKind} = 'agent_input' AND ${t.agentInputId} IS NOT NULL AND num_nonnulls(${t.modelOutputId}, ${t.toolCallId}, ${t.contextCheckpointId}) = 0)
        OR (${t.eventKind} = 'model_output' AND ${t.modelOutputId} IS NOT NULL AND num_nonnulls(${t.agentInputId}, ${t.toolCallId}, ${t.contextCheckpointId}) = 0)
        OR (${t.eventKind} = 'tool_result' AND ${t.toolCallId} IS NOT NULL AND num_nonnulls(${t.agentInputId}, ${t.modelOutputId}, ${t.contextCheckpointId}) = 0)
        OR (${t.eventKind} = 'context_checkpoint' AND ${t.contextCheckpointId} IS NOT NULL AND num_nonnulls(${t.agentInputId}, ${t.modelOutputId}, ${t.toolCallId}) = 0)
        OR (${t.eventKind} = 'budget_exceeded' AND ${t.payload} IS NOT NULL AND num_nonnulls(${t.agentInputId}, ${t.modelOutputId}, ${t.toolCallId}, ${t.contextCheckpointId}) = 0)`,
    ),
    check("agent_events_opening", sql`NOT ${t.isOpeningEvent} OR ${t.eventKind} = 'agent_input'`),
    index("agent_events_turn_idx").on(t.turnId, t.sequence),
    // The claim's look-up of an agent's latest budget stop (runtime/store/budgets.ts); a handful of rows.
    index("agent_events_budget_idx").on(t.agentId, t.sequence).where(sql`${t.eventKind} = 'budget_exceeded'`),
  ],
);

/**
 * One row per model attempt. `input_event_sequence` is the timeline watermark the call saw. A failed
 * attempt with `recovery_kind = 'retry'` is the durable retry: the worker picks it up at `retry_at`.
 */
export const modelCallContexts = pgTable(
  "model_call_contexts",
  {
    id: idColumn(),
    agentId: uuid("agent_id").notNull().references(() => agents.id, { onDelete: "cascade" }),
    turnId: uuid("turn_id").notNull().references(() => agentTurns.id, { onDelete: "cascade" }),
    operationKind: text("operation_kind").notNull().default("normal"),
    attemptNumber: integer("attempt_number").notNull(),
    agentConfigId: uuid("agent_config_id").notNull(),
    inputEventSequence: bigint("input_event_sequence", { mode: "number" }).notNull(),
    sourceEventSequenceEnd: bigint("source_event_sequence_end", { mode: "number" }),
    runtimeLockId: uuid("runtime_lock_id"),
    state: text("state").notNull().default("started"),
    recoveryKind: text("recovery_kind"),
    retryAt: optionalTime("retry_at"),
    errorKind: text("error_kind"),
    errorMessage: text("error_message"),
    providerResponseId: text("provider_response_id"),
    inputTokens: integer("input_tokens"),
    outputTokens: integer("output_tokens"),
    cacheReadTokens: integer("cache_read_tokens"),
    cacheWriteTokens: integer("cache_write_tokens"),
    reasoningTokens: integer("reasoning_tokens"),
    /** Millionths of a US dollar, from the pricing of the model revision the call used; 0 without pricing. */
    costMicroUsd: bigint("cost_micro_usd", { mode: "number" }),
    createdAt: createdAt(),
    completedAt: optionalTime("completed_at"),
  },
  (t) => [
    check("model_call_contexts_operation", sql`${t.operationKind} IN ('normal', 'compaction')`),
    check("model_call_contexts_state", sql`${t.state} IN ('started', 'succeeded', 'failed', 'canceled')`),
    check(
      "model_call_contexts_recovery",
      sql`(${t.recoveryKind} IS NULL OR (${t.state} = 'failed' AND ${t.recoveryKind} IN ('retry', 'compact')))
        AND ((${t.recoveryKind} = 'retry') = (${t.retryAt} IS NOT NULL))`,
    ),
    check("model_call_contexts_attempt", sql`${t.attemptNumber} >= 1`),
    uniqueIndex("model_call_contexts_one_started").on(t.agentId).where(sql`${t.state} = 'started'`),
    index("model_call_contexts_turn_idx").on(t.turnId, t.createdAt),
  ],
);

/** A completed response, or the terminal error of one (`stop_reason = 'error'`). */
export const modelOutputs = pgTable(
  "model_outputs",
  {
    id: idColumn(),
    agentId: uuid("agent_id").notNull().references(() => agents.id, { onDelete: "cascade" }),
    modelCallContextId: uuid("model_call_context_id")
      .notNull()
      .unique()
      .references(() => modelCallContexts.id, { onDelete: "cascade" }),
    stopReason: text("stop_reason").notNull(),
    servedModel: text("served_model"),
    contentBlocks: jsonb("content_blocks").$type<unknown[]>().notNull(),
    /** Provider data to send back with each block, index-aligned with `content_blocks`; only for the same provider and model. */
    providerReplay: jsonb("provider_replay").$type<unknown[]>().notNull().default([]),
    replayScope: text("replay_scope"),
    createdAt: createdAt(),
  },
  (t) => [
    check(
      "model_outputs_stop_reason",
      sql`${t.stopReason} IN ('end_turn', 'tool_use', 'max_tokens', 'refusal', 'content_filter', 'error')`,
    ),
  ],
);

export const contextCheckpoints = pgTable(
  "context_checkpoints",
  {
    id: idColumn(),
    agentId: uuid("agent_id").notNull().references(() => agents.id, { onDelete: "cascade" }),
    modelCallContextId: uuid("model_call_context_id").notNull(),
    summarizedThroughEventSequence: bigint("summarized_through_event_sequence", { mode: "number" }).notNull(),
    summary: text("summary").notNull(),
    createdAt: createdAt(),
  },
  (t) => [unique("context_checkpoints_through").on(t.agentId, t.summarizedThroughEventSequence)],
);

export const toolCalls = pgTable(
  "tool_calls",
  {
    id: idColumn(),
    agentId: uuid("agent_id").notNull().references(() => agents.id, { onDelete: "cascade" }),
    turnId: uuid("turn_id").notNull().references(() => agentTurns.id, { onDelete: "cascade" }),
    modelOutputId: uuid("model_output_id")
      .notNull()
      .references(() => modelOutputs.id, { onDelete: "cascade" }),
    providerCallId: text("provider_call_id").notNull(),
    name: text("name").notNull(),
    input: jsonb("input").$type<Record<string, unknown>>().notNull(),
    type: text("type").notNull(),
    state: text("state").notNull().default("awaiting_authorization"),
    outcome: text("outcome"),
    runtimeLockId: uuid("runtime_lock_id"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    completedAt: optionalTime("completed_at"),
  },
  (t) => [
    unique("tool_calls_provider_call").on(t.modelOutputId, t.providerCallId),
    check("tool_calls_type", sql`${t.type} IN ('built_in', 'custom', 'mcp')`),
    check(
      "tool_calls_state",
      sql`${t.state} IN ('awaiting_authorization', 'awaiting_permission', 'ready', 'running', 'waiting', 'completed')`,
    ),
    check(
      "tool_calls_completion",
      sql`(${t.state} = 'completed') = (${t.outcome} IS NOT NULL AND ${t.completedAt} IS NOT NULL)
        AND (${t.outcome} IS NULL OR ${t.outcome} IN ('succeeded', 'failed', 'denied', 'canceled'))`,
    ),
    // A running call belongs to the runtime executing it; no other state has an owner.
    check("tool_calls_running_owner", sql`(${t.state} = 'running') = (${t.runtimeLockId} IS NOT NULL)`),
    index("tool_calls_agent_created_idx").on(t.agentId, t.createdAt, t.id),
    index("tool_calls_turn_idx").on(t.turnId),
  ],
);

/** One per completed tool call; its `tool_result` event is written in the same transaction. */
export const toolCallResults = pgTable("tool_call_results", {
  toolCallId: uuid("tool_call_id")
    .primaryKey()
    .references(() => toolCalls.id, { onDelete: "cascade" }),
  agentId: uuid("agent_id").notNull().references(() => agents.id, { onDelete: "cascade" }),
  outcome: text("outcome").notNull(),
  contentBlocks: jsonb("content_blocks").$type<unknown[]>().notNull(),
  createdAt: createdAt(),
});

export const agentInteractions = pgTable(
  "agent_interactions",
  {
    id: idColumn(),
    agentId: uuid("agent_id").notNull().references(() => agents.id, { onDelete: "cascade" }),
    turnId: uuid("turn_id").notNull().references(() => agentTurns.id, { onDelete: "cascade" }),
    toolCallId: uuid("tool_call_id")
      .notNull()
      .references(() => toolCalls.id, { onDelete: "cascade" }),
    interactionKind: text("interaction_kind").notNull(),
    state: text("state").notNull().default("open"),
    request: jsonb("request").$type<Record<string, unknown>>().notNull(),
    resolution: jsonb("resolution").$type<Record<string, unknown>>(),
    resolvedByInputId: uuid("resolved_by_input_id"),
    createdAt: createdAt(),
    resolvedAt: optionalTime("resolved_at"),
  },
  (t) => [
    unique("agent_interactions_tool_call_kind").on(t.toolCallId, t.interactionKind),
    check("agent_interactions_kind", sql`${t.interactionKind} IN ('permission', 'question')`),
    check("agent_interactions_state", sql`${t.state} IN ('open', 'resolved', 'canceled')`),
    check("agent_interactions_resolved", sql`(${t.state} = 'open') = (${t.resolvedAt} IS NULL)`),
    index("agent_interactions_agent_created_idx").on(t.agentId, t.createdAt, t.id),
  ],
);

/** Files referenced from content blocks as `media_ref`. The bytes live in the blob store under `storage_key`. */
export const artifacts = pgTable(
  "artifacts",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    projectId: uuid("project_id").notNull(),
    agentId: uuid("agent_id").notNull(),
    contentType: text("content_type").notNull(),
    filename: text("filename"),
    digest: text("digest").notNull(),
    sizeBytes: bigint("size_bytes", { mode: "number" }).notNull(),
    storageKey: text("storage_key").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    foreignKey({ columns: [t.orgId, t.agentId], foreignColumns: [agents.orgId, agents.id] }).onDelete("cascade"),
    index("artifacts_agent_idx").on(t.agentId),
  ],
);

/** The work queue: at most one row per agent, ready at `ready_at`. */
export const agentWakeups = pgTable(
  "agent_wakeups",
  {
    agentId: uuid("agent_id")
      .primaryKey()
      .references(() => agents.id, { onDelete: "cascade" }),
    readyAt: requiredTime("ready_at"),
    reason: text("reason").notNull(),
    updatedAt: updatedAt(),
  },
  (t) => [index("agent_wakeups_ready_idx").on(t.readyAt)],
);

/** The per-agent execution lease. A worker that stops renewing loses it to maintenance. */
export const agentRuntimeLocks = pgTable(
  "agent_runtime_locks",
  {
    id: idColumn(),
    agentId: uuid("agent_id")
      .notNull()
      .unique()
      .references(() => agents.id, { onDelete: "cascade" }),
    workerId: text("worker_id").notNull(),
    startedAt: createdAt(),
    renewedAt: requiredTime("renewed_at"),
    leaseExpiresAt: requiredTime("lease_expires_at"),
    cancelRequestedAt: optionalTime("cancel_requested_at"),
  },
  (t) => [index("agent_runtime_locks_expiry_idx").on(t.leaseExpiresAt)],
);

/**
 * An agent's session with one MCP server of its config: the tools the server offered when it was last
 * initialized (at the start of a turn, or when the config's server entry changed), which the model sees.
 */
export const agentMcpConnections = pgTable(
  "agent_mcp_connections",
  {
    id: idColumn(),
    agentId: uuid("agent_id").notNull().references(() => agents.id, { onDelete: "cascade" }),
    serverKey: text("server_key").notNull(),
    endpoint: text("endpoint").notNull(),
    /** Hash of the server's config entry: a different entry means a fresh initialization. */
    configHash: text("config_hash").notNull(),
    state: text("state").notNull(),
    protocolVersion: text("protocol_version"),
    sessionId: text("session_id"),
    serverInfo: jsonb("server_info").$type<Record<string, unknown>>(),
    capabilities: jsonb("capabilities").$type<Record<string, unknown>>(),
    tools: jsonb("tools").$type<Array<{ name: string; description: string; inputSchema: Record<string, unknown> }>>().notNull().default([]),
    error: text("error"),
    /** The turn whose start last initialized the connection. */
    turnId: uuid("turn_id").references(() => agentTurns.id, { onDelete: "set null" }),
    generation: integer("generation").notNull().default(1),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    unique("agent_mcp_connections_server").on(t.agentId, t.serverKey),
    check("agent_mcp_connections_state", sql`${t.state} IN ('initializing', 'ready', 'failed', 'expired')`),
    check("agent_mcp_connections_error", sql`(${t.state} = 'failed') = (${t.error} IS NOT NULL)`),
  ],
);
