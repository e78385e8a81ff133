import { eq } from "drizzle-orm";
import { agentRuntimeLocks } from "../../db/schema/index.js";
import { dbNow, dbSecondsFromNow } from "../../db/schema/columns.js";
import type { Database, Tx } from "../../platform/db/index.js";
import { newUuid } from "../../platform/ids.js";
import { clearWakeup } from "../wakeups.js";

/** Takes the agent's runtime lease for a worker; the wakeup is consumed with it. The agent must be locked. */
export async function takeRuntimeLock(tx: Tx, agentId: string, options: { workerId: string; leaseSeconds: number }): Promise<string> {
  const lockId = newUuid();
  await tx.insert(agentRuntimeLocks).values({
    id: lockId,
    agentId,
    workerId: options.workerId,
    renewedAt: dbNow,
    leaseExpiresAt: dbSecondsFromNow(options.leaseSeconds),
  });
  await clearWakeup(tx, agentId);
  return lockId;
}

/** Extends a lease by `leaseSeconds` from now; "lost" when the lock is gone, "canceled" when a cancel asks the holder to stop. */
export async function renewLease(db: Database, lockId: string, leaseSeconds: number): Promise<"held" | "lost" | "canceled"> {
  const [lock] = await db.write
    .update(agentRuntimeLocks)
    .set({ renewedAt: dbNow, leaseExpiresAt: dbSecondsFromNow(leaseSeconds) })
    .where(eq(agentRuntimeLocks.id, lockId))
    .returning({ cancelRequestedAt: agentRuntimeLocks.cancelRequestedAt });
  if (!lock) return "lost";
  return lock.cancelRequestedAt ? "canceled" : "held";
}
