import { sql } from "drizzle-orm";
import { toolCallResults, toolCalls } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { Tx } from "../../platform/db/index.js";
import { encodeId } from "../../platform/ids.js";
import { notifyIn } from "../signals.js";
import { wakeupUpsert } from "../wakeups.js";
import { appendEvent, type AgentRow, type EventRow } from "./journal.js";

export type ToolCallRow = typeof toolCalls.$inferSelect;
export type ToolCallResultRow = typeof toolCallResults.$inferSelect;
export type ToolCallState = "awaiting_authorization" | "awaiting_permission" | "ready" | "running" | "waiting" | "completed";
export type ToolOutcome = "succeeded" | "failed" | "denied" | "canceled";

/** Moves a tool call to a non-terminal state and tells stream followers, in one statement. The agent must be locked. */
export async function setToolCallState(tx: Tx, call: ToolCallRow, state: Exclude<ToolCallState, "completed">): Promise<void> {
  const hint = notifyIn.toolCalls(call.agentId, [{ toolCallId: encodeId("toolCall", call.id), state }]);
  await tx.execute(sql`WITH changed AS (UPDATE tool_calls SET state = ${state}::text, updated_at = ${dbNow} WHERE id = ${call.id}::uuid RETURNING 1) SELECT ${hint} FROM changed`);
  call.state = state;
}

/**
 * Completes a tool call: its result, the `tool_result` event in the call's turn, and the state change,
 * with their hints, in one statement of the caller's transaction (the three exist together or not at
 * all), so a caller may make it the transaction's last (`Tx.commitWith`). `wake` also marks the agent
 * ready, for a result the worker is waiting on. The agent must be locked.
 */
export async function completeToolCall(
  tx: Tx,
  agent: AgentRow,
  call: ToolCallRow,
  outcome: ToolOutcome,
  contentBlocks: unknown[],
  options: { wake?: string } = {},
): Promise<{ call: ToolCallRow; result: ToolCallResultRow; event: EventRow }> {
  const completion = [
    sql`call_result AS (
      INSERT INTO tool_call_results (tool_call_id, agent_id, outcome, content_blocks)
      VALUES (${call.id}::uuid, ${agent.id}::uuid, ${outcome}::text, ${JSON.stringify(contentBlocks)}::jsonb)
    )`,
    sql`completed_call AS (
      UPDATE tool_calls SET state = 'completed', outcome = ${outcome}::text, completed_at = ${dbNow}, updated_at = ${dbNow}, runtime_lock_id = NULL
      WHERE id = ${call.id}::uuid
    )`,
    ...(options.wake ? [sql`woken AS (${wakeupUpsert(agent.id, options.wake)})`] : []),
  ];
  const hints = [notifyIn.toolCalls(agent.id, [{ toolCallId: encodeId("toolCall", call.id), state: "completed" }]), ...(options.wake ? [notifyIn.wakeup(agent.id)] : [])];
  const event = await appendEvent(tx, agent, { turnId: call.turnId, kind: "tool_result", toolCallId: call.id, semantic: false }, { alongside: completion, hints });
  // Every timestamp of the statement is its own clock reading, the event's creation time.
  const at = event.createdAt;
  return {
    call: { ...call, state: "completed", outcome, completedAt: at, updatedAt: at, runtimeLockId: null },
    result: { toolCallId: call.id, agentId: agent.id, outcome, contentBlocks, createdAt: at },
    event,
  };
}

export const textBlock = (text: string) => ({ type: "text", text });
