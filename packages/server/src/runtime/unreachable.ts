import { and, eq, inArray, sql } from "drizzle-orm";
import { machines, processes } from "../db/schema/index.js";
import type { Database } from "../platform/db/index.js";
import { encodeId } from "../platform/ids.js";
import type { AgentSignals } from "./signals.js";
import { abandonProcess } from "./store/processes.js";

const BATCH = 100;

/**
 * Maintenance task: a process whose machine has been offline for longer than the grace period (its
 * daemon's lease ran out, or its runtime ended, that long ago by the database clock) is abandoned, and
 * the run_command call waiting for it fails with a retryable `machine_unreachable`, so no call waits on
 * a machine forever. A daemon that comes back later is told to release it.
 */
export async function abandonUnreachableProcesses(db: Database, signals: AgentSignals, graceSeconds: number): Promise<number> {
  const grace = sql`statement_timestamp() - make_interval(secs => ${graceSeconds})`;
  const stale = await db.read
    .select({ process: processes, machineName: machines.displayName })
    .from(processes)
    .innerJoin(machines, eq(machines.id, processes.machineId))
    .where(
      and(
        inArray(processes.state, ["queued", "starting", "running"]),
        sql`coalesce(${machines.leaseExpiresAt}, ${machines.lastObservedAt}, ${processes.createdAt}) < ${grace}`,
        sql`${processes.updatedAt} < ${grace}`,
      ),
    )
    .limit(BATCH);
  for (const { process, machineName } of stale) {
    const reason =
      `machine_unreachable: the machine ${machineName} (${encodeId("machine", process.machineId)}) has been offline for more than ` +
      `${graceSeconds} s, so this process's outcome is unknown. Retry when the machine is online.`;
    await db.tx(async (tx) => {
      // Checked again under the transaction: the daemon may have come back and reported meanwhile.
      const [current] = await tx
        .select({ online: sql<boolean>`${machines.leaseExpiresAt} > statement_timestamp()` })
        .from(machines)
        .where(eq(machines.id, process.machineId));
      if (current?.online) return;
      await abandonProcess(tx, signals, process, reason);
    });
  }
  return stale.length;
}
