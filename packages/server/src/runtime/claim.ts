import { and, asc, eq, inArray, lte, sql } from "drizzle-orm";
import { agentRuntimeLocks, agents, agentWakeups, modelCallContexts, toolCalls } from "../db/schema/index.js";
import { dbNow, dbSecondsFromNow } from "../db/schema/columns.js";
import type { Tx } from "../platform/db/index.js";
import { encodeId, newUuid } from "../platform/ids.js";
import { waitingInputs } from "../modules/inputs/store.js";
import { latestSequence, type AgentRow } from "../modules/timeline/journal.js";
import { admitInputs } from "./admission.js";
import { loadTurnState, nextModelWork, pendingToolWork, readyMcpCalls, turnSettled, batchIncomplete, type ToolCallRow } from "./frontier.js";
import type { ModelStep } from "./model-step.js";
import type { ToolStep } from "./tool-step.js";
import type { AgentSignals } from "./signals.js";
import { runToolWork } from "./tools/execute.js";
import { clearWakeup, scheduleWakeup } from "./wakeups.js";

/** What a claim hands the worker to run outside the transaction. */
export type Step = ModelStep | ToolStep;

export interface ClaimOptions {
  workerId: string;
  leaseSeconds: number;
}

/**
 * One claim (design brief §3.1), in the caller's transaction: the oldest ready wakeup of an active agent
 * that no runtime holds, locked with SKIP LOCKED so concurrent workers never take the same agent.
 * Transactional tool work is done right here; ready MCP calls (set `running`) or a model call (a started
 * context) are returned under a new runtime lock for the caller to run outside the transaction.
 * `undefined` means there was nothing to claim; `null` that the claimed wakeup needed no step.
 */
export async function claimNext(tx: Tx, signals: AgentSignals, options: ClaimOptions): Promise<Step | null | undefined> {
  // The claim locks the agent's row itself (FOR UPDATE OF agents): the row it returns is the one
  // lockAgent would, so the claim needs no second read.
  const [claimed] = await tx
    .select({ agent: agents })
    .from(agentWakeups)
    .innerJoin(agents, eq(agents.id, agentWakeups.agentId))
    .where(
      and(
        lte(agentWakeups.readyAt, dbNow),
        eq(agents.state, "active"),
        sql`NOT EXISTS (SELECT 1 FROM ${agentRuntimeLocks} WHERE ${agentRuntimeLocks.agentId} = ${agentWakeups.agentId})`,
      ),
    )
    .orderBy(asc(agentWakeups.readyAt), asc(agentWakeups.agentId))
    .limit(1)
    .for("update", { of: agents, skipLocked: true });
  if (!claimed) return undefined;
  return (await decide(tx, signals, claimed.agent, options)) ?? null;
}

async function decide(tx: Tx, signals: AgentSignals, agent: AgentRow, options: ClaimOptions): Promise<Step | undefined> {
  const now = new Date();
  let state = await loadTurnState(tx, agent.id);
  if (state && pendingToolWork(state).length > 0) {
    await runToolWork(tx, signals, agent, pendingToolWork(state));
    state = await loadTurnState(tx, agent.id);
  }
  const mcpCalls = state ? readyMcpCalls(state) : [];
  if (mcpCalls.length > 0) return startToolStep(tx, signals, agent, mcpCalls, options);
  if (!state || !batchIncomplete(state)) {
    const steering = await waitingInputs(tx, agent.id, "steering");
    if (steering.length > 0) {
      const turn = await admitInputs(tx, signals, agent, steering);
      return start(tx, agent, turn.id, "normal", 1, options);
    }
  }
  const work = state ? nextModelWork(state, now) : undefined;
  if (work?.kind === "start") return start(tx, agent, work.turnId, work.operation, work.attempt, options);
  if (work?.kind === "retry_later") {
    await scheduleWakeup(tx, agent.id, work.at, "model_retry_wait");
    return undefined;
  }
  if (turnSettled(state, now)) {
    const [next] = await waitingInputs(tx, agent.id, "queued");
    if (next) {
      const turn = await admitInputs(tx, signals, agent, [next]);
      return start(tx, agent, turn.id, "normal", 1, options);
    }
  }
  // Nothing to do until something new happens (an input, a result, an answer): those mark a new wakeup.
  await clearWakeup(tx, agent.id);
  return undefined;
}

/** Takes the agent's runtime lease for this worker; the wakeup is consumed with it. */
async function takeRuntimeLock(tx: Tx, agent: AgentRow, options: ClaimOptions): Promise<string> {
  const lockId = newUuid();
  await tx.insert(agentRuntimeLocks).values({
    id: lockId,
    agentId: agent.id,
    workerId: options.workerId,
    renewedAt: dbNow,
    leaseExpiresAt: dbSecondsFromNow(options.leaseSeconds),
  });
  await clearWakeup(tx, agent.id);
  return lockId;
}

async function startToolStep(tx: Tx, signals: AgentSignals, agent: AgentRow, calls: ToolCallRow[], options: ClaimOptions): Promise<ToolStep> {
  const lockId = await takeRuntimeLock(tx, agent, options);
  const running = await tx
    .update(toolCalls)
    .set({ state: "running", runtimeLockId: lockId, updatedAt: dbNow })
    .where(inArray(toolCalls.id, calls.map((c) => c.id)))
    .returning();
  for (const call of running) signals.toolCallChanged(tx, agent.id, { toolCallId: encodeId("toolCall", call.id), state: "running" });
  return { kind: "tools", agentId: agent.id, orgId: agent.orgId, projectId: agent.projectId, lockId, calls: running };
}

async function start(tx: Tx, agent: AgentRow, turnId: string, operation: "normal" | "compaction", attempt: number, options: ClaimOptions): Promise<ModelStep> {
  const lockId = await takeRuntimeLock(tx, agent, options);
  const [context] = await tx
    .insert(modelCallContexts)
    .values({
      id: newUuid(),
      agentId: agent.id,
      turnId,
      operationKind: operation,
      attemptNumber: attempt,
      agentConfigId: agent.currentConfigId,
      inputEventSequence: latestSequence(agent),
      runtimeLockId: lockId,
    })
    .returning();
  return { kind: "model", agentId: agent.id, orgId: agent.orgId, projectId: agent.projectId, lockId, context: context! };
}
