import type { Tx } from "../../platform/db/index.js";
import { completeToolCall, textBlock } from "../../runtime/store/tool-calls.js";
import { latestTurn, type AgentRow } from "../../runtime/store/journal.js";
import { findToolCall } from "../tools/store.js";
import * as store from "../../runtime/store/interactions.js";

/**
 * Cancels the open interactions of the agent's latest turn whose tool calls are unfinished; each tool
 * call completes as `canceled` with its result event. The turn, the runtime and every other tool call are
 * left alone (spec: promote_to_steering with cancel_open_interactions). The agent must be locked.
 */
export async function cancelOpenInteractions(tx: Tx, agent: AgentRow, resolvedByInputId: string | null): Promise<number> {
  const turn = await latestTurn(tx, agent.id);
  if (!turn) return 0;
  const open = await store.openInteractionsOfTurn(tx, turn.id);
  await store.cancelMany(tx, open.map((i) => i.id), resolvedByInputId);
  for (const interaction of open) {
    const call = await findToolCall(tx, agent.id, interaction.toolCallId);
    if (!call || call.state === "completed") continue;
    await completeToolCall(tx, agent, call, "canceled", [textBlock(`The ${interaction.interactionKind} request was canceled before anyone answered it.`)]);
  }
  return open.length;
}
