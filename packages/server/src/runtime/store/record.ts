import { sql, type SQL } from "drizzle-orm";
import { dbNow } from "../../db/schema/columns.js";
import { rawRows, type Tx } from "../../platform/db/index.js";
import { encodeId } from "../../platform/ids.js";
import { insertEventSql, newEventRow, type AgentRow, type EventRow } from "./journal.js";
import type { ContextRow } from "../frontier.js";
import type { ModelUsage } from "../models/types.js";
import { notifyIn } from "../signals.js";
import { wakeupUpsert } from "../wakeups.js";
import { usageRollupCtes } from "./usage.js";
import { webhookDeliveriesSql, webhookNotifySql } from "../../modules/webhooks/enqueue.js";

/** A tool call a model output asks for, as the record inserts it (`awaiting_authorization`). */
export interface NewToolCall {
  id: string;
  providerCallId: string;
  name: string;
  input: Record<string, unknown>;
  type: "built_in" | "custom" | "mcp";
}

export interface ModelReply {
  outputId: string;
  stopReason: string;
  servedModel: string | null;
  blocks: unknown[];
  replays: unknown[];
  replayScope: string;
  calls: NewToolCall[];
  usage: ModelUsage;
  /** What the call cost in millionths of a dollar (runtime/cost.ts). */
  costMicroUsd: number;
  /** The configured model the call used, for the usage rollup. */
  configuredModelId: string;
  providerResponseId: string | null;
  /** Preview envelopes not yet published: they ride on the record's commit, before the output event. */
  deltas: unknown[];
}

/**
 * `agent.idle` to webhooks (docs/webhooks.md) when this reply ends the agent's work: it asks for no tool
 * calls and no content input waits. Part of the record statement, so a plain step costs no statement more.
 */
function idleWebhooksSql(agent: AgentRow, turnId: string, reply: ModelReply, owned: SQL) {
  return webhookDeliveriesSql(
    {
      orgId: agent.orgId,
      projectId: agent.projectId,
      type: "agent.idle",
      data: { agent_id: encodeId("agent", agent.id), project_id: encodeId("project", agent.projectId), turn_id: encodeId("turn", turnId) },
    },
    sql`${reply.calls.length === 0}::boolean AND ${owned}
      AND NOT EXISTS (SELECT 1 FROM agent_inputs i WHERE i.agent_id = ${agent.id} AND i.state = 'received' AND i.input_kind = 'content')`,
  );
}

/**
 * Records a model call's reply in one statement (reference design-brief.md §3.4 step 8): the output, its tool calls,
 * its event with the counter and the turn's bookkeeping, the context's success and usage, the day's usage rollup, the lease's
 * end, and the next wakeup when there is more to do (tool work, or inputs waiting), with every
 * notification delivered on commit. Nothing but the lease's end and a wakeup is written when the step
 * no longer owns its call (a cancel closed the context, or the lease was reaped): whoever did decides.
 * The agent must be locked by `tx`, in a statement before this one.
 */
export async function recordReply(tx: Tx, agent: AgentRow, step: { lockId: string; context: ContextRow }, reply: ModelReply): Promise<EventRow | null> {
  const { context } = step;
  const semantic = reply.stopReason !== "tool_use";
  const event = newEventRow(agent, { turnId: context.turnId, kind: "model_output", modelOutputId: reply.outputId });
  const calls = JSON.stringify(reply.calls.map((c) => ({ id: c.id, provider_call_id: c.providerCallId, name: c.name, input: c.input, type: c.type })));
  const callSignals = reply.calls.map((c) => ({ toolCallId: encodeId("toolCall", c.id), state: "awaiting_authorization" }));
  const guarded = sql`EXISTS (SELECT 1 FROM owned)`;
  const [row] = await rawRows<{ recorded: boolean }>(
    tx,
    sql`WITH owned AS (
        SELECT 1 WHERE EXISTS (SELECT 1 FROM model_call_contexts WHERE id = ${context.id} AND state = 'started')
          AND EXISTS (SELECT 1 FROM agent_runtime_locks WHERE id = ${step.lockId})
      ),
      new_output AS (
        INSERT INTO model_outputs (id, agent_id, model_call_context_id, stop_reason, served_model, content_blocks, provider_replay, replay_scope)
        SELECT ${reply.outputId}::uuid, ${agent.id}::uuid, ${context.id}::uuid, ${reply.stopReason}::text, ${reply.servedModel}::text,
          ${JSON.stringify(reply.blocks)}::jsonb, ${JSON.stringify(reply.replays)}::jsonb, ${reply.replayScope}::text FROM owned
      ),
      new_calls AS (
        INSERT INTO tool_calls (id, agent_id, turn_id, model_output_id, provider_call_id, name, input, type)
        SELECT c.id, ${agent.id}::uuid, ${context.turnId}::uuid, ${reply.outputId}::uuid, c.provider_call_id, c.name, c.input, c.type
        FROM owned, jsonb_to_recordset(${calls}::jsonb) AS c(id uuid, provider_call_id text, name text, input jsonb, type text)
      ),
      new_event AS (${insertEventSql(event, sql`owned`)}),
      advanced_counter AS (UPDATE agents SET next_event_sequence = ${event.sequence + 1} WHERE id = ${agent.id} AND ${guarded}),
      turn_bookkeeping AS (
        UPDATE agent_turns SET event_count = event_count + 1, latest_event_id = ${event.id},
          latest_semantic_event_id = CASE WHEN ${semantic}::boolean THEN ${event.id}::uuid ELSE latest_semantic_event_id END, updated_at = ${dbNow}
        WHERE id = ${context.turnId} AND ${guarded}
      ),
      succeeded AS (
        UPDATE model_call_contexts SET state = 'succeeded', completed_at = ${dbNow}, runtime_lock_id = NULL,
          provider_response_id = ${reply.providerResponseId}, input_tokens = ${reply.usage.inputTokens}, output_tokens = ${reply.usage.outputTokens},
          cache_read_tokens = ${reply.usage.cacheReadTokens}, cache_write_tokens = ${reply.usage.cacheWriteTokens}, reasoning_tokens = ${reply.usage.reasoningTokens},
          cost_micro_usd = ${reply.costMicroUsd}
        WHERE id = ${context.id} AND state = 'started' AND ${guarded}
      ),
      ${usageRollupCtes(agent, context.turnId, reply)},
      released AS (DELETE FROM agent_runtime_locks WHERE id = ${step.lockId}),
      idle_webhooks AS (${idleWebhooksSql(agent, context.turnId, reply, guarded)}),
      woken AS (
        ${wakeupUpsert(agent.id, "model_step_done", sql`NOT ${guarded} OR ${reply.calls.length > 0}::boolean
          OR EXISTS (SELECT 1 FROM agent_inputs i WHERE i.agent_id = ${agent.id} AND i.state = 'received' AND i.input_kind = 'content')`)}
      )${parentWoken(agent, reply, guarded)}
      SELECT ${guarded} AS recorded, ${notifyIn.deltas(agent.id, reply.deltas)} AS deltas,
        (SELECT ${notifyIn.events(agent.id)} FROM owned) AS events,
        (SELECT ${notifyIn.toolCalls(agent.id, callSignals)} FROM owned) AS calls,
        (SELECT ${notifyIn.wakeup(agent.id)} FROM woken) AS wakeups, ${webhookNotifySql("idle_webhooks")} AS webhooks${parentHint(agent, reply)}`,
  );
  if (!row?.recorded) return null;
  agent.nextEventSequence = event.sequence + 1;
  return event;
}

/*
 * A delegate's turn ends with an output that asks for no tools: its coordinator is woken in the same
 * statement, so a coordinator waiting on it (docs/delegation.md) settles its call. Only for agents with a
 * parent: a plain step's statement is unchanged.
 */
function parentWoken(agent: AgentRow, reply: ModelReply, guarded: SQL): SQL {
  if (!agent.parentAgentId || reply.calls.length > 0) return sql``;
  return sql`,
      parent_woken AS (${wakeupUpsert(agent.parentAgentId, "delegate_turn_ended", guarded)})`;
}

function parentHint(agent: AgentRow, reply: ModelReply): SQL {
  if (!agent.parentAgentId || reply.calls.length > 0) return sql``;
  return sql`,
        (SELECT ${notifyIn.wakeup(agent.parentAgentId)} FROM parent_woken) AS parent_wakeups`;
}
