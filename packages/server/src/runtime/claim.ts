import { inArray } from "drizzle-orm";
import { toolCalls } from "../db/schema/index.js";
import { dbNow } from "../db/schema/columns.js";
import type { Tx } from "../platform/db/index.js";
import { encodeId } from "../platform/ids.js";
import type { AgentRow } from "./store/journal.js";
import { loadTurnState, pendingToolWork, readyMcpCalls, batchIncomplete, type ToolCallRow } from "./frontier.js";
import type { ModelStep } from "./model-step.js";
import type { ToolStep } from "./tool-step.js";
import type { AgentSignals } from "./signals.js";
import { lockReadyAgent, readTurnSummary, startModelCall, type TurnSummary, type WaitingInput } from "./store/claim.js";
import { runToolWork } from "./tools/execute.js";
import { clearWakeup, scheduleWakeup } from "./wakeups.js";
import { takeRuntimeLock } from "./store/lease.js";

/** What a claim hands the worker to run outside the transaction. */
export type Step = ModelStep | ToolStep;

export interface ClaimOptions {
  workerId: string;
  leaseSeconds: number;
}

export interface Claim {
  /** The step to run; null when the claimed wakeup needed none. */
  step: Step | null;
  /** Another agent is ready too. */
  moreReady: boolean;
}

/** What the turn needs next, decided without a transaction's help. */
type Decision =
  | { kind: "start"; turnId: string | null; admit: WaitingInput[]; operation: "normal" | "compaction"; attempt: number }
  | { kind: "retry_later"; at: Date }
  | { kind: "tool_work" }
  | { kind: "idle" };

/**
 * One claim (design brief §3.1), in the caller's transaction: lock a ready agent, read its turn in one
 * statement and decide. A model call starts in one more statement; transactional tool work (permission
 * checks, built-in calls) and ready MCP calls take the full frontier, which reads the turn's calls.
 * `undefined` means there was nothing to claim.
 */
export async function claimNext(tx: Tx, signals: AgentSignals, options: ClaimOptions): Promise<Claim | undefined> {
  const claimed = await lockReadyAgent(tx);
  if (!claimed) return undefined;
  const { agent, moreReady } = claimed;
  const decision = decide(await readTurnSummary(tx, agent.id));
  if (decision.kind === "start") {
    const started = await startModelCall(tx, { agent, ...options, ...decision });
    return { moreReady, step: { kind: "model", agentId: agent.id, orgId: agent.orgId, projectId: agent.projectId, ...started } };
  }
  if (decision.kind === "retry_later") await scheduleWakeup(tx, agent.id, decision.at, "model_retry_wait");
  if (decision.kind === "idle") await clearWakeup(tx, agent.id);
  if (decision.kind !== "tool_work") return { moreReady, step: null };
  return { moreReady, step: (await decideWithToolWork(tx, signals, agent, options)) ?? null };
}

/** The frontier (frontier.ts) over the turn summary, for a turn whose tool calls are all completed. */
function decide(summary: TurnSummary): Decision {
  if (summary.callsOpen) return { kind: "tool_work" };
  const fresh = (admit: WaitingInput[]): Decision => ({ kind: "start", turnId: null, admit, operation: "normal", attempt: 1 });
  if (summary.steering.length > 0) return fresh(summary.steering);
  const { last, turnId } = summary;
  if (turnId && last?.state === "started") return { kind: "idle" };
  if (turnId && last?.state === "failed" && last.recoveryKind === "retry") {
    if (!last.retryDue) return { kind: "retry_later", at: last.retryAt! };
    return { kind: "start", turnId, admit: [], operation: last.operation, attempt: last.attempt + 1 };
  }
  if (turnId && last?.state === "failed" && last.recoveryKind === "compact") return { kind: "start", turnId, admit: [], operation: "compaction", attempt: 1 };
  if (turnId && summary.latestPromptSequence > summary.seen) return { kind: "start", turnId, admit: [], operation: "normal", attempt: 1 };
  return summary.queued ? fresh([summary.queued]) : { kind: "idle" };
}

/**
 * The turn can take no more model work (no open call, no running or pending model call, nothing
 * unanswered), so what arrives next opens a new turn.
 */
export function turnIsSettled(summary: TurnSummary): boolean {
  const { turnId, last } = summary;
  if (!turnId) return true;
  if (summary.callsOpen || last?.state === "started") return false;
  if (last?.state === "failed" && (last.recoveryKind === "retry" || last.recoveryKind === "compact")) return false;
  return summary.latestPromptSequence <= summary.seen;
}

/** The general frontier, for a turn with unfinished tool calls: tool work first, then whatever follows it. */
async function decideWithToolWork(tx: Tx, signals: AgentSignals, agent: AgentRow, options: ClaimOptions): Promise<Step | undefined> {
  let state = await loadTurnState(tx, agent.id);
  if (state && pendingToolWork(state).length > 0) {
    await runToolWork(tx, signals, agent, pendingToolWork(state));
    state = await loadTurnState(tx, agent.id);
  }
  const mcpCalls = state ? readyMcpCalls(state) : [];
  if (mcpCalls.length > 0) return startToolStep(tx, signals, agent, mcpCalls, options);
  if (state && batchIncomplete(state)) {
    await clearWakeup(tx, agent.id);
    return undefined;
  }
  // The tool work completed the batch: the turn goes on as any turn whose calls are done.
  const decision = decide(await readTurnSummary(tx, agent.id));
  if (decision.kind === "start") {
    const started = await startModelCall(tx, { agent, ...options, ...decision });
    return { kind: "model", agentId: agent.id, orgId: agent.orgId, projectId: agent.projectId, ...started };
  }
  if (decision.kind === "retry_later") await scheduleWakeup(tx, agent.id, decision.at, "model_retry_wait");
  else await clearWakeup(tx, agent.id);
  return undefined;
}

async function startToolStep(tx: Tx, signals: AgentSignals, agent: AgentRow, calls: ToolCallRow[], options: ClaimOptions): Promise<ToolStep> {
  const lockId = await takeRuntimeLock(tx, agent.id, options);
  const running = await tx
    .update(toolCalls)
    .set({ state: "running", runtimeLockId: lockId, updatedAt: dbNow })
    .where(inArray(toolCalls.id, calls.map((c) => c.id)))
    .returning();
  for (const call of running) await signals.toolCallChanged(tx, agent.id, { toolCallId: encodeId("toolCall", call.id), state: "running" });
  return { kind: "tools", agentId: agent.id, orgId: agent.orgId, projectId: agent.projectId, lockId, calls: running };
}
