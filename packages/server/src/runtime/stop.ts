import { and, eq, inArray } from "drizzle-orm";
import { agentRuntimeLocks, modelCallContexts } from "../db/schema/index.js";
import { dbNow } from "../db/schema/columns.js";
import type { Tx } from "../platform/db/index.js";
import { turnIsSettled } from "./claim.js";
import { loadTurnState } from "./frontier.js";
import { readTurnProgress } from "./store/claim.js";
import type { AgentSignals } from "./signals.js";
import { markWakeup } from "./wakeups.js";
import * as inputs from "./store/inputs.js";
import * as interactions from "./store/interactions.js";
import { appendEvent, latestSequence, type AgentRow, type EventRow } from "./store/journal.js";
import { completeToolCall, textBlock } from "./store/tool-calls.js";
import { endQueuedWorkOf } from "./store/processes.js";

export interface StopResult {
  event: EventRow | null;
  runtimeCancelRequested: boolean;
  affected: boolean;
}

/**
 * Stops what the agent is doing (reference design-brief.md §3.6), under the agent lock: the running model call is
 * asked to stop and its context closed, waiting steering inputs are canceled, open interactions of the
 * turn are canceled and every unfinished tool call completes as `canceled`; then a `cancel_current`
 * control input is appended as the turn's stop boundary. Queued inputs survive. When the agent is idle
 * nothing changes (`affected: false`), so repeating a cancel is safe.
 */
export async function stopCurrentWork(tx: Tx, signals: AgentSignals, agent: AgentRow, actorId: string | null): Promise<StopResult> {
  if (turnIsSettled(await readTurnProgress(tx, agent.id))) return { event: null, runtimeCancelRequested: false, affected: false };
  const state = (await loadTurnState(tx, agent.id))!;
  const running = state.contexts.filter((c) => c.state === "started");

  const [lock] = await tx.update(agentRuntimeLocks).set({ cancelRequestedAt: dbNow }).where(eq(agentRuntimeLocks.agentId, agent.id)).returning();
  if (lock) await signals.cancel(tx, agent.id);
  if (running.length > 0) {
    await tx
      .update(modelCallContexts)
      .set({ state: "canceled", completedAt: dbNow, runtimeLockId: null })
      .where(and(inArray(modelCallContexts.id, running.map((c) => c.id)), eq(modelCallContexts.state, "started")));
  }
  await inputs.cancelInputs(tx, (await inputs.waitingInputs(tx, agent.id, "steering")).map((i) => i.id));

  const control = await inputs.insertInput(tx, {
    orgId: agent.orgId,
    agentId: agent.id,
    inputKind: "control",
    deliveryMode: "immediate",
    state: "resolved",
    actorId,
    controlType: "cancel_current",
    idempotencyScope: "agent_control",
    inputIdempotencyKey: `agent-cancel:${agent.id}:after:${latestSequence(agent)}`,
    requestDigest: "cancel_current",
    contentBlocks: [],
  });
  const open = await interactions.openInteractionsOfTurn(tx, state.turn.id);
  await interactions.cancelMany(tx, open.map((i) => i.id), control.id);
  // Results first, then the boundary: nothing after a cancel may ask the model for another call.
  const unfinished = state.toolCalls.filter((c) => c.state !== "completed");
  // Only a waiting call can have process work queued for a daemon.
  const waiting = unfinished.filter((call) => call.state === "waiting").map((call) => call.id);
  for (const call of unfinished) {
    await completeToolCall(tx, agent, call, "canceled", [textBlock("The tool call was canceled because the user stopped the agent.")]);
  }
  await endQueuedWorkOf(tx, waiting);
  const event = await appendEvent(tx, agent, { turnId: state.turn.id, kind: "agent_input", agentInputId: control.id, semantic: false, marks: "stop" });
  await inputs.markResolved(tx, control.id, event.id);
  await markWakeup(tx, agent.id, "canceled");
  // A coordinator waiting on this delegate learns of the cancel (docs/delegation.md).
  if (agent.parentAgentId) await markWakeup(tx, agent.parentAgentId, "delegate_turn_ended");
  return { event, runtimeCancelRequested: lock !== undefined, affected: true };
}
