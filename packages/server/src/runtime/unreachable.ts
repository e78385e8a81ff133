import { and, eq, inArray, sql } from "drizzle-orm";
import { machines, processActions, processes } from "../db/schema/index.js";
import type { Database } from "../platform/db/index.js";
import { encodeId } from "../platform/ids.js";
import type { AgentSignals } from "./signals.js";
import { abandonProcess, settleAction } from "./store/processes.js";
import { textBlock } from "./store/tool-calls.js";

const BATCH = 100;

/**
 * Maintenance task: a process whose machine has been offline for longer than the grace period (its
 * daemon's lease ran out, or its runtime ended, that long ago by the database clock) is abandoned, and
 * the run_command call waiting for it fails with a retryable `machine_unreachable`, so no call waits on
 * a machine forever. A daemon that comes back later is told to release it. Process actions (read_process,
 * write_process, stop_process) waiting on such a machine fail the same way, whatever their process's state.
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
  return stale.length + (await failUnreachableActions(db, signals, graceSeconds));
}

async function failUnreachableActions(db: Database, signals: AgentSignals, graceSeconds: number): Promise<number> {
  const grace = sql`statement_timestamp() - make_interval(secs => ${graceSeconds})`;
  const stale = await db.read
    .select({ action: processActions, machineId: processes.machineId, machineName: machines.displayName })
    .from(processActions)
    .innerJoin(processes, eq(processes.id, processActions.processId))
    .innerJoin(machines, eq(machines.id, processes.machineId))
    .where(
      and(
        inArray(processActions.state, ["queued", "accepted"]),
        sql`coalesce(${machines.leaseExpiresAt}, ${machines.lastObservedAt}, ${processActions.createdAt}) < ${grace}`,
        sql`${processActions.updatedAt} < ${grace}`,
      ),
    )
    .limit(BATCH);
  for (const { action, machineId, machineName } of stale) {
    const reason =
      `machine_unreachable: the machine ${machineName} (${encodeId("machine", machineId)}) has been offline for more than ${graceSeconds} s, ` +
      `so this ${action.kind} was ${action.state === "accepted" ? "perhaps not" : "not"} applied. Retry when the machine is online.`;
    await db.tx(async (tx) => {
      const [current] = await tx.select({ online: sql<boolean>`${machines.leaseExpiresAt} > statement_timestamp()` }).from(machines).where(eq(machines.id, machineId));
      if (current?.online) return;
      await settleAction(tx, signals, action, action.state === "accepted" ? "unknown" : "failed", reason, { outcome: "failed", blocks: [textBlock(reason)] });
    });
  }
  return stale.length;
}
