import { and, eq } from "drizzle-orm";
import { toolCalls } from "../../db/schema/index.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import type { ToolCallRow } from "../../runtime/store/tool-calls.js";

export async function findToolCall(tx: Tx | AppDb, agentId: string, toolCallId: string): Promise<ToolCallRow | undefined> {
  const [call] = await tx.select().from(toolCalls).where(and(eq(toolCalls.agentId, agentId), eq(toolCalls.id, toolCallId)));
  return call;
}
