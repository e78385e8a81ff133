import type { Tx } from "../../platform/db/index.js";
import { decodeId, encodeId } from "../../platform/ids.js";
import { turnIsSettled } from "../claim.js";
import type { AgentDefinition } from "../definition.js";
import { readTurnSummary } from "../store/claim.js";
import { agentsByIds, budgetHold, countChildren, insertWaits, turnEnding, waitsOf, type DelegateWait } from "../store/delegate-waits.js";
import { lockAgent, type AgentRow } from "../store/journal.js";
import { completeToolCall, setToolCallState, textBlock, type ToolCallRow } from "../store/tool-calls.js";
import { openInteractionsOfTurn } from "../store/interactions.js";
import { markWakeup } from "../wakeups.js";
import { notifyIn } from "../signals.js";
import { sql } from "drizzle-orm";
import { DEFAULT_AWAIT_SECONDS, DELEGATION_TOOL_NAMES, MAX_CHILDREN, MAX_DEPTH } from "./catalog-delegation.js";

/*
 * The coordinator's tools, transactional phase (docs/delegation.md). Each runs in the claim's transaction
 * under the coordinator's lock, so a child is launched exactly once: the launch, its first input, the wait
 * row and the call's new state commit together or not at all, and the child carries the call as its
 * idempotency key besides. A call that waits is left `waiting` with its `delegate_waits` rows and holds no
 * worker slot and no lease; a child whose turn ends (or fails, or is canceled or archived) wakes its
 * coordinator, whose next claim settles the call (`settleDelegateWaits`). A wakeup is a row, so this
 * survives restarts.
 */

/** What the agents module does for the engine; every call runs in the claim's transaction. */
export interface AgentDelegates {
  /**
   * Launches a child of `coordinator` from the profile's current config, with `message` as its first queued
   * input; `key` is the child's idempotency key. A message for the model when the profile is gone.
   */
  launchChild(tx: Tx, coordinator: AgentRow, input: { profileId: string; handle: string; message: string; key: string }): Promise<{ ok: true; agent: AgentRow; inputId: string } | { ok: false; message: string }>;
  /** Queues `message` for a child the caller has locked. */
  sendToChild(tx: Tx, child: AgentRow, message: string): Promise<{ inputId: string }>;
}

interface DelegateInput {
  to: string;
  message: string;
  wait?: boolean;
}
interface MessageInput {
  agent_id: string;
  message: string;
  wait?: boolean;
}
interface AwaitInput {
  agent_ids: string[];
  timeout_seconds?: number;
}

export { DELEGATION_TOOL_NAMES };

const fail = (tx: Tx, agent: AgentRow, call: ToolCallRow, message: string) => completeToolCall(tx, agent, call, "failed", [textBlock(message)]);
const answered = (tx: Tx, agent: AgentRow, call: ToolCallRow, value: Record<string, unknown>) =>
  completeToolCall(tx, agent, call, "succeeded", [{ type: "structured_data", value }]);

export async function dispatchDelegationTool(tx: Tx, agent: AgentRow, call: ToolCallRow, definition: AgentDefinition, delegates: AgentDelegates | undefined): Promise<void> {
  if (!delegates) return void (await fail(tx, agent, call, `The built-in tool ${call.name} cannot run in this deployment.`));
  if (call.name === "delegate") return delegate(tx, agent, call, definition, delegates, call.input as unknown as DelegateInput);
  if (call.name === "message_delegate") return messageDelegate(tx, agent, call, delegates, call.input as unknown as MessageInput);
  return awaitDelegates(tx, agent, call, call.input as unknown as AwaitInput);
}

async function delegate(tx: Tx, agent: AgentRow, call: ToolCallRow, definition: AgentDefinition, delegates: AgentDelegates, input: DelegateInput): Promise<void> {
  const roster = definition.delegates ?? [];
  const target = roster.find((d) => d.handle === input.to);
  if (!target) {
    const names = roster.map((d) => d.handle).join(", ");
    return void (await fail(tx, agent, call, roster.length ? `No delegate named "${input.to}"; your delegates are: ${names}.` : "You have no delegates: your config declares none."));
  }
  if (agent.delegationDepth + 1 > MAX_DEPTH) {
    return void (await fail(tx, agent, call, `Delegation refused: a delegate may be at most ${MAX_DEPTH} levels below its top-level agent, and you are at level ${agent.delegationDepth}. Do the task yourself.`));
  }
  if ((await countChildren(tx, agent.id)) >= MAX_CHILDREN) {
    return void (await fail(tx, agent, call, `Delegation refused: an agent may launch at most ${MAX_CHILDREN} delegates, and you have. Use message_delegate to give one of them more work.`));
  }
  const launched = await delegates.launchChild(tx, agent, { profileId: target.profileId, handle: target.handle, message: input.message, key: `delegate:${call.id}` });
  if (!launched.ok) return void (await fail(tx, agent, call, launched.message));
  await waitOrAnswer(tx, agent, call, launched.agent.id, launched.inputId, input.wait);
}

async function messageDelegate(tx: Tx, agent: AgentRow, call: ToolCallRow, delegates: AgentDelegates, input: MessageInput): Promise<void> {
  const childId = decodeId("agent", input.agent_id);
  // Coordinator before child: the lock order every cascade keeps.
  const child = childId ? await lockAgent(tx, childId) : undefined;
  if (!child || child.parentAgentId !== agent.id) return void (await fail(tx, agent, call, `${input.agent_id} is not one of your delegates; delegate answered their ids.`));
  if (child.state !== "active") return void (await fail(tx, agent, call, `The delegate ${input.agent_id} is archived and takes no more messages.`));
  const { inputId } = await delegates.sendToChild(tx, child, input.message);
  await waitOrAnswer(tx, agent, call, child.id, inputId, input.wait);
}

async function waitOrAnswer(tx: Tx, agent: AgentRow, call: ToolCallRow, childId: string, inputId: string, wait: boolean | undefined): Promise<void> {
  if (wait === false) return void (await answered(tx, agent, call, { agent_id: encodeId("agent", childId) }));
  await insertWaits(tx, agent.orgId, agent.id, call.id, [{ childAgentId: childId, inputId }]);
  await setToolCallState(tx, call, "waiting");
}

async function awaitDelegates(tx: Tx, agent: AgentRow, call: ToolCallRow, input: AwaitInput): Promise<void> {
  const ids = input.agent_ids.map((id) => ({ id, uuid: decodeId("agent", id) }));
  const found = await agentsByIds(tx, ids.flatMap((i) => (i.uuid ? [i.uuid] : [])));
  const strangers = ids.filter((i) => !i.uuid || found.get(i.uuid)?.parentAgentId !== agent.id).map((i) => i.id);
  if (strangers.length > 0) return void (await fail(tx, agent, call, `Not your delegates: ${strangers.join(", ")}; delegate answered their ids.`));
  await insertWaits(tx, agent.orgId, agent.id, call.id, ids.map((i) => ({ childAgentId: i.uuid!, inputId: null })), input.timeout_seconds ?? DEFAULT_AWAIT_SECONDS);
  await setToolCallState(tx, call, "waiting");
  // Children that already finished answer at once.
  await settleDelegateWaits(tx, agent, [call]);
}

/**
 * A child's answer to one wait: its turn's final text, or why there is none. `working` and `waiting` (on a
 * person: its open approvals and questions, which a person answers on the child) are still under way; every
 * other state is final for the wait, `paused` included: a child held by a budget does not answer until the
 * period ends or the budget is raised, so the coordinator hears of it now rather than waiting silently.
 */
interface ChildAnswer {
  agent_id: string;
  state: "completed" | "failed" | "canceled" | "archived" | "paused" | "waiting" | "working";
  output?: string;
  error?: string;
  /** A waiting child's open approvals and questions, with the tool each belongs to. */
  open_interactions?: Array<{ interaction_id: string; kind: string; tool_name: string }>;
  /** The budget that pauses a `paused` child, and when its period ends (null for a `total` budget). */
  budget?: { budget_id: string | null; period_end: string | null };
}

const underWay = (answer: ChildAnswer) => answer.state === "working" || answer.state === "waiting";

const textOf = (blocks: unknown[]): string =>
  blocks
    .flatMap((b) => (b && typeof b === "object" && "text" in b && typeof (b as { text: unknown }).text === "string" ? [(b as { text: string }).text] : []))
    .join("\n");

function pausedAnswer(agentId: string, hold: { budgetId: string | null; periodEnd: string | null }): ChildAnswer {
  const until = hold.periodEnd ? `its period ends at ${hold.periodEnd}` : "the budget is raised or deleted (a total budget has no period)";
  return {
    agent_id: agentId,
    state: "paused",
    budget: { budget_id: hold.budgetId, period_end: hold.periodEnd },
    error: `The delegate is paused by budget ${hold.budgetId ?? "(unknown)"}: it makes no model call until ${until}, or a person raises the budget. Its work is kept; collect it later with await_delegates.`,
  };
}

async function answerOf(tx: Tx, wait: DelegateWait): Promise<ChildAnswer> {
  const agentId = encodeId("agent", wait.childAgentId);
  const child = (await agentsByIds(tx, [wait.childAgentId])).get(wait.childAgentId);
  if (!child) return { agent_id: agentId, state: "archived" };
  const summary = await readTurnSummary(tx, child);
  const idle = turnIsSettled(summary) && summary.steering.length === 0 && summary.queued === null;
  if (!idle) {
    if (child.state === "archived") return { agent_id: agentId, state: "archived" };
    const hold = await budgetHold(tx, wait.childAgentId);
    if (hold) return pausedAnswer(agentId, hold);
    const open = summary.turnId ? await openInteractionsOfTurn(tx, summary.turnId) : [];
    if (open.length === 0) return { agent_id: agentId, state: "working" };
    return {
      agent_id: agentId,
      state: "waiting",
      open_interactions: open.map((i) => ({ interaction_id: encodeId("interaction", i.id), kind: i.interactionKind, tool_name: i.toolName })),
    };
  }
  const ending = await turnEnding(tx, wait.childAgentId, wait.inputId);
  if (ending.budgetStopped && child.state !== "archived") {
    const hold = await budgetHold(tx, wait.childAgentId);
    if (hold) return pausedAnswer(agentId, hold);
    return { agent_id: agentId, state: "failed", error: "A budget stopped the delegate's turn before it answered; the budget has since been raised, so give it the work again." };
  }
  if (ending.canceled) return { agent_id: agentId, state: child.state === "archived" ? "archived" : "canceled", error: "The delegate's turn was canceled." };
  if (!ending.output) return { agent_id: agentId, state: child.state === "archived" ? "archived" : "canceled", error: "The delegate's turn ended without an answer." };
  if (ending.output.failed) return { agent_id: agentId, state: "failed", error: textOf(ending.output.blocks) || "The delegate's turn failed." };
  return { agent_id: agentId, state: "completed", output: textOf(ending.output.blocks) };
}

/**
 * Completes each waiting delegation call whose children have all settled their turns (or whose deadline
 * passed), under the coordinator's lock; answers the earliest deadline still ahead, for the caller to wake
 * the coordinator then. Runs only for agents with such calls: a plain step never gets here.
 */
export async function settleDelegateWaits(tx: Tx, agent: AgentRow, calls: readonly ToolCallRow[]): Promise<{ settled: number; nextDeadlineMs: number | null }> {
  const waiting = calls.filter((c) => c.state === "waiting" && c.type === "built_in" && DELEGATION_TOOL_NAMES.has(c.name));
  if (waiting.length === 0) return { settled: 0, nextDeadlineMs: null };
  const waits = await waitsOf(tx, waiting.map((c) => c.id));
  let settled = 0;
  let nextDeadlineMs: number | null = null;
  for (const call of waiting) {
    const rows = waits.get(call.id) ?? [];
    const answers: ChildAnswer[] = [];
    for (const w of rows) answers.push(await answerOf(tx, w));
    const expired = rows.some((w) => w.expired);
    if (answers.some(underWay) && !expired) {
      for (const w of rows) if (w.deadlineMs !== null && (nextDeadlineMs === null || w.deadlineMs < nextDeadlineMs)) nextDeadlineMs = w.deadlineMs;
      // A child waits on a person: the coordinator's followers hear of its pending call again (tool_call_update).
      if (answers.some((a) => a.state === "waiting")) await announceWaiting(tx, agent, call);
      continue;
    }
    settled += 1;
    if (call.name === "await_delegates") await answered(tx, agent, call, { results: answers, timed_out: expired && answers.some(underWay) });
    else {
      const answer = answers[0]!;
      if (answer.state === "completed") await completeToolCall(tx, agent, call, "succeeded", [textBlock(answer.output || "(the delegate answered with no text)")]);
      else await fail(tx, agent, call, `The delegate ${answer.agent_id} did not answer: ${answer.state}${answer.error ? `. ${answer.error}` : ""}`);
    }
  }
  return { settled, nextDeadlineMs };
}

async function announceWaiting(tx: Tx, agent: AgentRow, call: ToolCallRow): Promise<void> {
  await tx.execute(sql`SELECT ${notifyIn.toolCalls(agent.id, [{ toolCallId: encodeId("toolCall", call.id), state: "waiting" }])}`);
}

/**
 * A delegate opened an approval or a question: its coordinator is woken so its pending delegation call is
 * announced again (`settleDelegateWaits`). Only for agents with a parent.
 */
export async function tellCoordinatorOfInteraction(tx: Tx, agent: AgentRow): Promise<void> {
  if (agent.parentAgentId) await markWakeup(tx, agent.parentAgentId, "delegate_interaction");
}
