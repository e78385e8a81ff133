import { inArray } from "drizzle-orm";
import { toolCalls } from "../db/schema/index.js";
import { dbNow } from "../db/schema/columns.js";
import type { Tx } from "../platform/db/index.js";
import { encodeId } from "../platform/ids.js";
import type { AgentRow } from "./store/journal.js";
import { loadTurnState, pendingToolWork, readyStepCalls, batchIncomplete, type ToolCallRow } from "./frontier.js";
import type { ModelStep } from "./model-step.js";
import type { ToolStep } from "./tool-step.js";
import type { AgentSignals } from "./signals.js";
import { lockReadyAgent, readTurnSummary, startModelCall, type TurnProgress, type TurnSummary, type WaitingInput } from "./store/claim.js";
import { runToolWork } from "./tools/execute.js";
import type { ToolPorts } from "./tools/machine-tools.js";
import { clearWakeup, scheduleWakeup } from "./wakeups.js";
import { takeRuntimeLock } from "./store/lease.js";
import { settleDelegateWaits } from "./tools/delegation-tools.js";
import { endTurnForBudget, holdForBudget, holdingActorBudget, newCrossings, recordCrossings, refusingBudget } from "./budgets.js";
import type { BudgetCrossing } from "./store/budgets.js";
import type { ModelCallPreparation } from "./caches.js";

/** What a claim hands the worker to run outside the transaction. */
export type Step = ModelStep | ToolStep;

export interface ClaimOptions {
  workerId: string;
  leaseSeconds: number;
  /**
   * Reads what the model call about to start needs and the worker has not cached (caches.ts,
   * `prepareModelCall`), in the claim's transaction before its last statement: no commit of its own.
   */
  prepareModelCall?: ModelCallPreparation;
}

export interface Claim {
  /** The step to run; null when the claimed wakeup needed none. */
  step: Step | null;
  /** Another agent is ready too. */
  moreReady: boolean;
  /** Budget thresholds this claim noticed crossed and recorded (for the worker's log). */
  crossings: BudgetCrossing[];
}

type StartCall = { kind: "start"; turnId: string | null; admit: WaitingInput[]; operation: "normal" | "compaction"; attempt: number };

/** What the claim does for a turn whose calls are all completed. */
type Decision = StartCall | { kind: "retry_later"; at: Date } | { kind: "idle" };

/** The model work a turn asks for by itself, inputs aside. */
type ModelWork = StartCall | { kind: "retry_later"; at: Date } | { kind: "running" } | { kind: "none" };

/**
 * One claim (reference design-brief.md §3.1), in the caller's transaction: lock a ready agent, read its turn in one
 * statement and decide. A model call starts in one more statement, the transaction's last, which takes its
 * COMMIT along (`Tx.commitWith`): nothing may follow the claim in its transaction. Transactional tool work
 * (permission checks, built-in calls) and calls run in a tool step take the full frontier, which reads the
 * turn's calls. `undefined` means there was nothing to claim.
 */
export async function claimNext(tx: Tx, signals: AgentSignals, options: ClaimOptions, ports: ToolPorts = {}): Promise<Claim | undefined> {
  const claimed = await lockReadyAgent(tx);
  if (!claimed) return undefined;
  const { agent, moreReady } = claimed;
  const summary = await readTurnSummary(tx, agent);
  // Thresholds crossed since the last look are recorded once; nothing is written when none was (the plain step).
  const crossings = await recordCrossings(tx, agent, newCrossings(summary.budgets));
  const step = summary.callsOpen ? await decideWithToolWork(tx, signals, agent, options, ports) : await carryOut(tx, agent, summary, options);
  return { moreReady, step: step ?? null, crossings };
}

/** The model work the latest turn's own state asks for (frontier.ts's rules over the summary). */
function modelWork(summary: TurnProgress): ModelWork {
  const { last, turnId } = summary;
  if (!turnId) return { kind: "none" };
  if (last?.state === "started") return { kind: "running" };
  if (last?.state === "failed" && last.recoveryKind === "retry") {
    if (!last.retryDue) return { kind: "retry_later", at: last.retryAt! };
    return { kind: "start", turnId, admit: [], operation: last.operation, attempt: last.attempt + 1 };
  }
  if (last?.state === "failed" && last.recoveryKind === "compact") return { kind: "start", turnId, admit: [], operation: "compaction", attempt: 1 };
  if (summary.latestPromptSequence > summary.seen) return { kind: "start", turnId, admit: [], operation: "normal", attempt: 1 };
  return { kind: "none" };
}

/** What a turn whose tool calls are all completed does next: steering first, then its own work, then the backlog. */
function decide(summary: TurnSummary): Decision {
  const fresh = (admit: WaitingInput[]): Decision => ({ kind: "start", turnId: null, admit, operation: "normal", attempt: 1 });
  if (summary.steering.length > 0) return fresh(summary.steering);
  const work = modelWork(summary);
  if (work.kind === "running") return { kind: "idle" };
  if (work.kind !== "none") return work;
  return summary.queued ? fresh([summary.queued]) : { kind: "idle" };
}

/**
 * The turn can take no more model work (no open call, no running or pending model call, nothing
 * unanswered), so what arrives next opens a new turn.
 */
export function turnIsSettled(summary: TurnProgress): boolean {
  return !summary.turnId || (!summary.callsOpen && modelWork(summary).kind === "none");
}

/**
 * Starts the decided model call, or leaves the wakeup for a retry's time, or consumes it. A call an exceeded
 * `pause` budget refuses is not made (docs/usage-and-budgets.md, "Enforcement"): a running turn ends with a
 * `budget_exceeded` event, new inputs wait in the backlog, and the agent sleeps until the budget's period ends
 * or a budget changes.
 */
async function carryOut(tx: Tx, agent: AgentRow, summary: TurnSummary, options: ClaimOptions): Promise<ModelStep | undefined> {
  const decision = decide(summary);
  if (decision.kind === "start") {
    const refusing = refusingBudget(summary, decision.turnId !== null);
    if (refusing && decision.turnId !== null) {
      const othersMayRun = refusing.scopeKind === "actor" && (summary.queued !== null || summary.steering.length > 0);
      await endTurnForBudget(tx, agent, decision.turnId, refusing, othersMayRun);
      return undefined;
    }
    if (refusing) {
      await holdForBudget(tx, agent, summary.turnId, refusing);
      return undefined;
    }
    await options.prepareModelCall?.(tx, agent);
    // The claim's last statement: its COMMIT goes with it.
    const started = await tx.commitWith(() => startModelCall(tx, { agent, workerId: options.workerId, leaseSeconds: options.leaseSeconds, ...decision }));
    return { kind: "model", agentId: agent.id, orgId: agent.orgId, projectId: agent.projectId, ...started };
  }
  if (decision.kind === "retry_later") await scheduleWakeup(tx, agent.id, decision.at, "model_retry_wait");
  else if (summary.blockedWaiting && turnIsSettled(summary)) await holdForBudget(tx, agent, summary.turnId, holdingActorBudget(summary)!);
  else await clearWakeup(tx, agent.id);
  return undefined;
}

/** The general frontier, for a turn with unfinished tool calls: tool work first, then whatever follows it. */
async function decideWithToolWork(tx: Tx, signals: AgentSignals, agent: AgentRow, options: ClaimOptions, ports: ToolPorts): Promise<Step | undefined> {
  let state = await loadTurnState(tx, agent.id);
  if (state && pendingToolWork(state).length > 0) {
    await runToolWork(tx, agent, pendingToolWork(state), ports);
    state = await loadTurnState(tx, agent.id);
  }
  // Delegation calls waiting on children (docs/delegation.md): settled here, under this agent's lock.
  const delegation = state ? await settleDelegateWaits(tx, agent, state.toolCalls) : { settled: 0, nextDeadlineMs: null };
  if (delegation.settled > 0) state = await loadTurnState(tx, agent.id);
  const stepCalls = state ? readyStepCalls(state) : [];
  if (stepCalls.length > 0) return startToolStep(tx, signals, agent, stepCalls, options);
  if (state && batchIncomplete(state)) {
    // An await_delegates deadline still ahead wakes the agent then; anything else that waits wakes it itself.
    if (delegation.nextDeadlineMs !== null) await scheduleWakeup(tx, agent.id, new Date(delegation.nextDeadlineMs), "delegate_deadline");
    else await clearWakeup(tx, agent.id);
    return undefined;
  }
  // The tool work completed the batch: the turn goes on as any turn whose calls are done.
  return carryOut(tx, agent, await readTurnSummary(tx, agent), options);
}

async function startToolStep(tx: Tx, signals: AgentSignals, agent: AgentRow, calls: ToolCallRow[], options: ClaimOptions): Promise<ToolStep> {
  const lockId = await takeRuntimeLock(tx, agent.id, options);
  const running = await tx
    .update(toolCalls)
    .set({ state: "running", runtimeLockId: lockId, updatedAt: dbNow })
    .where(inArray(toolCalls.id, calls.map((c) => c.id)))
    .returning();
  await signals.toolCallsChanged(tx, agent.id, running.map((call) => ({ toolCallId: encodeId("toolCall", call.id), state: "running" })));
  return { kind: "tools", agentId: agent.id, orgId: agent.orgId, projectId: agent.projectId, lockId, calls: running };
}
