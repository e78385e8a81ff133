import { and, eq } from "drizzle-orm";
import { toolCalls } from "../../db/schema/index.js";
import type { Tx } from "../../platform/db/index.js";
import { lockAgent } from "../../runtime/store/journal.js";
import { completeToolCall, textBlock, type ToolOutcome } from "../../runtime/store/tool-calls.js";

/*
 * A `create_machine` call waits (`waiting`) until its machine is online or has failed; the machine row keeps
 * the call's id. These complete it, once: a call no longer waiting (canceled meanwhile) is left alone.
 */

export async function completeCreateCall(
  tx: Tx,
  toolCallId: string | null,
  outcome: ToolOutcome,
  blocks: unknown[],
): Promise<boolean> {
  if (!toolCallId) return false;
  const [waiting] = await tx.select({ agentId: toolCalls.agentId }).from(toolCalls).where(and(eq(toolCalls.id, toolCallId), eq(toolCalls.state, "waiting")));
  if (!waiting) return false;
  const agent = await lockAgent(tx, waiting.agentId);
  // Read again under the agent's lock: a cancel may have completed it in between.
  const [call] = await tx.select().from(toolCalls).where(and(eq(toolCalls.id, toolCallId), eq(toolCalls.state, "waiting")));
  if (!agent || !call) return false;
  await completeToolCall(tx, agent, call, outcome, blocks, { wake: "machine_ready" });
  return true;
}

export const failCreateCall = (tx: Tx, toolCallId: string | null, message: string) =>
  completeCreateCall(tx, toolCallId, "failed", [textBlock(message)]);
