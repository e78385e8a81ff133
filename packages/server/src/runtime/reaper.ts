import { and, eq, lt } from "drizzle-orm";
import { agentRuntimeLocks, agents, modelCallContexts } from "../db/schema/index.js";
import { dbNow } from "../db/schema/columns.js";
import type { Database } from "../platform/db/index.js";
import { recordFailure } from "./outcomes.js";
import type { AgentSignals } from "./signals.js";
import { releaseRunningCalls } from "./tool-step.js";
import { markWakeup } from "./wakeups.js";

const BATCH = 100;

/**
 * Maintenance task (reference design-brief.md §3.10): runtime locks whose lease ran out belong to a worker that
 * died or stalled. Its started model call becomes a retry (the outcome is ambiguous: the provider may
 * have answered), its running MCP calls go back to `ready` (they run again: an MCP call is at least
 * once), the lock goes, and the agent is woken so another worker continues.
 * Agents locked by someone else right now are skipped and reaped on a later tick.
 */
export async function reapExpiredLeases(db: Database, signals: AgentSignals): Promise<number> {
  const expired = await db.read
    .select({ id: agentRuntimeLocks.id, agentId: agentRuntimeLocks.agentId })
    .from(agentRuntimeLocks)
    .where(lt(agentRuntimeLocks.leaseExpiresAt, dbNow))
    .limit(BATCH);
  let reaped = 0;
  for (const lock of expired) {
    const done = await db.tx(async (tx) => {
      const [agent] = await tx.select().from(agents).where(eq(agents.id, lock.agentId)).for("update", { skipLocked: true });
      if (!agent) return false;
      const [current] = await tx
        .select()
        .from(agentRuntimeLocks)
        .where(and(eq(agentRuntimeLocks.id, lock.id), lt(agentRuntimeLocks.leaseExpiresAt, dbNow)));
      if (!current) return false;
      const started = await tx
        .select()
        .from(modelCallContexts)
        .where(and(eq(modelCallContexts.runtimeLockId, lock.id), eq(modelCallContexts.state, "started")));
      for (const context of started) {
        await recordFailure(tx, agent, context, {
          kind: "runtime",
          message: "runtime lease expired before the model result was accepted",
          retryable: true,
        });
      }
      await releaseRunningCalls(tx, signals, agent.id, lock.id);
      await tx.delete(agentRuntimeLocks).where(eq(agentRuntimeLocks.id, lock.id));
      if (started.length === 0) await markWakeup(tx, lock.agentId, "lease_reaped");
      return true;
    });
    if (done) reaped += 1;
  }
  return reaped;
}
