import { and, eq, inArray, sql } from "drizzle-orm";
import { machines, processActions, processes } from "../../db/schema/index.js";
import type { Config } from "../../config.js";
import type { Database, Tx } from "../../platform/db/index.js";
import { encodeId } from "../../platform/ids.js";
import type { MaintenanceTask } from "../../maintenance.js";
import { abandonProcess, settleAction } from "../../runtime/store/processes.js";
import { textBlock } from "../../runtime/store/tool-calls.js";

const BATCH = 100;

/**
 * Maintenance task: a process whose machine has been offline for longer than the grace period (its
 * daemon's lease ran out, or its runtime ended, that long ago by the database clock) is abandoned, and
 * the run_command call waiting for it fails with a retryable `machine_unreachable`, so no call waits on
 * a machine forever. A daemon that comes back later is told to release it. Process actions (read_process,
 * write_process, stop_process) waiting on such a machine fail the same way, whatever their process's state.
 * The same bound holds for work queued on a pool machine svc could not provision or wake in time.
 *
 * It lives in the machines module (issue 8: the engine does not read machine tables) and settles through
 * the engine's process store.
 */
export function unreachableMachines(db: Database, config: Config): MaintenanceTask {
  return {
    name: "unreachable-machine-processes",
    run: () => abandonUnreachableProcesses(db, config.runtime.machineGraceSeconds),
  };
}

/** Why a machine did not take its work, for the failed call: asleep and not woken, not provisioned, or offline. */
const whyUnreachable = sql<string>`CASE
  WHEN ${machines.lifecycleState} = 'provisioning' THEN 'provisioning'
  WHEN ${machines.asleepSince} IS NOT NULL THEN 'asleep'
  ELSE 'offline' END`;

function reasonFor(state: string, machineName: string, machineId: string, graceSeconds: number, what: string): string {
  const name = `${machineName} (${encodeId("machine", machineId)})`;
  const why =
    state === "provisioning"
      ? `was not provisioned within ${graceSeconds} s`
      : state === "asleep"
        ? `could not be woken within ${graceSeconds} s`
        : `has been offline for more than ${graceSeconds} s`;
  return `machine_unreachable: the machine ${name} ${why}, so ${what}. Retry when the machine is online.`;
}

export async function abandonUnreachableProcesses(db: Database, graceSeconds: number): Promise<number> {
  const grace = sql`statement_timestamp() - make_interval(secs => ${graceSeconds})`;
  const stale = await db.read
    .select({ process: processes, machineName: machines.displayName, why: whyUnreachable })
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
  for (const { process, machineName, why } of stale) {
    const reason = reasonFor(why, machineName, process.machineId, graceSeconds, "this process's outcome is unknown");
    await db.tx(async (tx) => {
      // Checked again under the transaction: the daemon may have come back and reported meanwhile.
      if (await isOnline(tx, process.machineId)) return;
      await abandonProcess(tx, process, reason);
    });
  }
  return stale.length + (await failUnreachableActions(db, graceSeconds));
}

async function isOnline(tx: Tx, machineId: string): Promise<boolean> {
  const [current] = await tx.select({ online: sql<boolean>`${machines.leaseExpiresAt} > statement_timestamp()` }).from(machines).where(eq(machines.id, machineId));
  return current?.online === true;
}

async function failUnreachableActions(db: Database, graceSeconds: number): Promise<number> {
  const grace = sql`statement_timestamp() - make_interval(secs => ${graceSeconds})`;
  const stale = await db.read
    .select({ action: processActions, machineId: processes.machineId, machineName: machines.displayName, why: whyUnreachable })
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
  for (const { action, machineId, machineName, why } of stale) {
    const reason = reasonFor(why, machineName, machineId, graceSeconds, `this ${action.kind} was ${action.state === "accepted" ? "perhaps not" : "not"} applied`);
    await db.tx(async (tx) => {
      if (await isOnline(tx, machineId)) return;
      await settleAction(tx, action, action.state === "accepted" ? "unknown" : "failed", reason, { outcome: "failed", blocks: [textBlock(reason)] });
    });
  }
  return stale.length;
}
