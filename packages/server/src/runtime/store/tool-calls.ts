import { eq } from "drizzle-orm";
import { toolCallResults, toolCalls } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { Tx } from "../../platform/db/index.js";
import { encodeId } from "../../platform/ids.js";
import type { AgentSignals } from "../signals.js";
import { appendEvent, type AgentRow, type EventRow } from "./journal.js";

export type ToolCallRow = typeof toolCalls.$inferSelect;
export type ToolCallResultRow = typeof toolCallResults.$inferSelect;
export type ToolCallState = "awaiting_authorization" | "awaiting_permission" | "ready" | "running" | "waiting" | "completed";
export type ToolOutcome = "succeeded" | "failed" | "denied" | "canceled";

/** Moves a tool call to a non-terminal state and tells stream followers. The agent must be locked. */
export async function setToolCallState(tx: Tx, signals: AgentSignals, call: ToolCallRow, state: Exclude<ToolCallState, "completed">): Promise<void> {
  await tx.update(toolCalls).set({ state, updatedAt: dbNow }).where(eq(toolCalls.id, call.id));
  call.state = state;
  await signals.toolCallChanged(tx, call.agentId, { toolCallId: encodeId("toolCall", call.id), state });
}

/**
 * Completes a tool call: its result, the `tool_result` event in the call's turn, and the state change,
 * in the caller's transaction (the three exist together or not at all). The agent must be locked.
 */
export async function completeToolCall(
  tx: Tx,
  signals: AgentSignals,
  agent: AgentRow,
  call: ToolCallRow,
  outcome: ToolOutcome,
  contentBlocks: unknown[],
): Promise<{ call: ToolCallRow; result: ToolCallResultRow; event: EventRow }> {
  const [result] = await tx.insert(toolCallResults).values({ toolCallId: call.id, agentId: agent.id, outcome, contentBlocks }).returning();
  const [updated] = await tx
    .update(toolCalls)
    .set({ state: "completed", outcome, completedAt: dbNow, updatedAt: dbNow, runtimeLockId: null })
    .where(eq(toolCalls.id, call.id))
    .returning();
  const event = await appendEvent(tx, agent, { turnId: call.turnId, kind: "tool_result", toolCallId: call.id, semantic: false });
  await signals.toolCallChanged(tx, agent.id, { toolCallId: encodeId("toolCall", call.id), state: "completed" });
  return { call: updated!, result: result!, event };
}

export const textBlock = (text: string) => ({ type: "text", text });
