import { eq, sql, type SQL } from "drizzle-orm";
import { agentWakeups } from "../db/schema/index.js";
import { dbNow } from "../db/schema/columns.js";
import type { Tx } from "../platform/db/index.js";
import { notifyIn } from "./signals.js";

/**
 * The work queue (reference design-brief.md §3.1). Producers mark an agent ready; an earlier time always wins, so a
 * retry scheduled for later never delays work that is ready now. The worker decides what the work is.
 * `deltas` are live-preview envelopes published with the wakeup, on commit.
 */
export async function markWakeup(tx: Tx, agentId: string, reason: string, deltas: unknown[] = []): Promise<void> {
  const previews = deltas.length > 0 ? sql`, ${notifyIn.deltas(agentId, deltas)}` : sql``;
  await tx.execute(sql`WITH woken AS (${wakeupUpsert(agentId, reason)}) SELECT ${notifyIn.wakeup(agentId)}${previews} FROM woken`);
}

/**
 * The upsert behind `markWakeup`, for a producer's statement to run as a CTE (`RETURNING 1`), only when
 * `onlyIf` holds if given; the statement must also select `notifyIn.wakeup` from that CTE so workers get
 * the hint on commit.
 */
export function wakeupUpsert(agentId: string, reason: string, onlyIf?: SQL): SQL {
  return sql`INSERT INTO agent_wakeups (agent_id, ready_at, reason) SELECT ${agentId}::uuid, ${dbNow}, ${reason}::text ${onlyIf ? sql`WHERE ${onlyIf}` : sql``}
    ON CONFLICT (agent_id) DO UPDATE SET ready_at = least(agent_wakeups.ready_at, excluded.ready_at),
      reason = CASE WHEN excluded.ready_at < agent_wakeups.ready_at THEN excluded.reason ELSE agent_wakeups.reason END, updated_at = ${dbNow}
    RETURNING 1`;
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
