import { and, asc, eq, lte, sql } from "drizzle-orm";
import { agentRuntimeLocks, agents, agentWakeups, modelCallContexts } from "../db/schema/index.js";
import { dbNow, dbSecondsFromNow } from "../db/schema/columns.js";
import type { Tx } from "../platform/db/index.js";
import { newUuid } from "../platform/ids.js";
import { waitingInputs } from "../modules/inputs/store.js";
import { latestSequence, type AgentRow } from "../modules/timeline/journal.js";
import { admitInputs } from "./admission.js";
import { loadTurnState, nextModelWork, pendingToolWork, turnSettled, batchIncomplete } from "./frontier.js";
import type { ModelStep } from "./model-step.js";
import type { AgentSignals } from "./signals.js";
import { runToolWork } from "./tools/execute.js";
import { clearWakeup, scheduleWakeup } from "./wakeups.js";

export interface ClaimOptions {
  workerId: string;
  leaseSeconds: number;
}

/**
 * One claim (design brief §3.1), in the caller's transaction: the oldest ready wakeup of an active agent
 * that no runtime holds, locked with SKIP LOCKED so concurrent workers never take the same agent. Tool
 * work is done right here; a model call is set up (runtime lock + started context) and returned for the
 * caller to run outside the transaction. `undefined` means there was nothing to claim; `null` that the
 * claimed wakeup needed no model call.
 */
export async function claimNext(tx: Tx, signals: AgentSignals, options: ClaimOptions): Promise<ModelStep | null | undefined> {
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

async function decide(tx: Tx, signals: AgentSignals, agent: AgentRow, options: ClaimOptions): Promise<ModelStep | undefined> {
  const now = new Date();
  let state = await loadTurnState(tx, agent.id);
  if (state && pendingToolWork(state).length > 0) {
    await runToolWork(tx, signals, agent, pendingToolWork(state));
    state = await loadTurnState(tx, agent.id);
  }
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

async function start(tx: Tx, agent: AgentRow, turnId: string, operation: "normal" | "compaction", attempt: number, options: ClaimOptions): Promise<ModelStep> {
  const lockId = newUuid();
  await tx.insert(agentRuntimeLocks).values({
    id: lockId,
    agentId: agent.id,
    workerId: options.workerId,
    renewedAt: dbNow,
    leaseExpiresAt: dbSecondsFromNow(options.leaseSeconds),
  });
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
  await clearWakeup(tx, agent.id);
  return { agentId: agent.id, orgId: agent.orgId, projectId: agent.projectId, lockId, context: context! };
}
