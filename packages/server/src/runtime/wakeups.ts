import { eq, sql } from "drizzle-orm";
import { agentWakeups } from "../db/schema/index.js";
import { dbNow } from "../db/schema/columns.js";
import type { Tx } from "../platform/db/index.js";
import type { AgentSignals } from "./signals.js";

/**
 * The work queue (design brief §3.1). Producers mark an agent ready; an earlier time always wins, so a
 * retry scheduled for later never delays work that is ready now. The worker decides what the work is.
 */
export async function markWakeup(tx: Tx, signals: AgentSignals, agentId: string, reason: string, readyAt?: Date): Promise<void> {
  const at = readyAt ? sql`${readyAt.toISOString()}::timestamptz` : dbNow;
  await tx
    .insert(agentWakeups)
    .values({ agentId, readyAt: at, reason })
    .onConflictDoUpdate({
      target: agentWakeups.agentId,
      set: {
        readyAt: sql`least(${agentWakeups.readyAt}, excluded.ready_at)`,
        reason: sql`CASE WHEN excluded.ready_at < ${agentWakeups.readyAt} THEN excluded.reason ELSE ${agentWakeups.reason} END`,
        updatedAt: dbNow,
      },
    });
  if (!readyAt) signals.wakeup(tx, agentId);
}

export async function clearWakeup(tx: Tx, agentId: string): Promise<void> {
  await tx.delete(agentWakeups).where(eq(agentWakeups.agentId, agentId));
}

/** Sets the agent's wakeup to exactly `at`, replacing an earlier one (a retry that must wait). */
export async function scheduleWakeup(tx: Tx, agentId: string, at: Date, reason: string): Promise<void> {
  await tx
    .insert(agentWakeups)
    .values({ agentId, readyAt: at, reason })
    .onConflictDoUpdate({ target: agentWakeups.agentId, set: { readyAt: at, reason, updatedAt: dbNow } });
}
