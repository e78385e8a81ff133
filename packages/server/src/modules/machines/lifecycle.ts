import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { and, asc, eq, getTableColumns, inArray, isNull, notInArray, sql } from "drizzle-orm";
import { agentMachineBindings, machineDaemonTokens, machines, processes } from "../../db/schema/index.js";
import { dbNow, dbSecondsFromNow } from "../../db/schema/columns.js";
import type { Config } from "../../config.js";
import type { Database } from "../../platform/db/index.js";
import { mintToken, sha256Hex } from "../../platform/crypto/tokens.js";
import { encodeId, newUuid } from "../../platform/ids.js";
import type { AgentSignals } from "../../runtime/signals.js";
import { startMaintenance, type MaintenanceTask } from "../../maintenance.js";
import { releaseBindings, scheduleDeletion } from "./bindings.js";
import { completeCreateCall, failCreateCall } from "./create-calls.js";
import { deleteGrantsOfMachine } from "./grants-store.js";
import { createDrivers, type MachineDriver } from "./providers/index.js";
import { dropLeaseOfToken, markMachineDeleted } from "./store.js";
import { revokeTokens } from "./tokens-store.js";

/*
 * Pool machines' lifecycle, driven by maintenance in short transactions with bounded batches (the
 * provider's calls happen between them, never inside one):
 *
 *   provisioning ──daemon started, then online──▶ active ──released / idle / pool deleted──▶ deleting ──▶ deleted
 *        └── 3 failed starts ──▶ provision_failed                          (3 failed deletions ──▶ delete_failed)
 *
 * Each start mints a fresh daemon token for the machine (earlier ones are revoked). An active machine
 * whose daemon is not running in this process (svc restarted, or it crashed) is started again with the
 * same home, so its journal carries over. Children of machines svc no longer knows are deleted.
 */

const BATCH = 8;
const MAX_ATTEMPTS = 3;
/** How long an active machine whose daemon stopped waits before it is started again. */
const RESTART_BACKOFF_SECONDS = 5;

type PoolMachine = typeof machines.$inferSelect & { leased: boolean; due: boolean };

const poolMachineColumns = {
  ...getTableColumns(machines),
  leased: sql<boolean>`coalesce(${machines.leaseExpiresAt} > statement_timestamp(), false)`,
  due: sql<boolean>`coalesce(${machines.nextReconcileAfter} <= statement_timestamp(), true)`,
};

export interface PoolMachinesLog {
  warn(obj: unknown, msg: string): void;
  debug(obj: unknown, msg: string): void;
}

/**
 * Starts the pool machine loop beside maintenance (every `SVC_MACHINE_RECONCILE_INTERVAL_MS`, short so a
 * machine is usable soon after its daemon registers). `stop` ends the loop and every daemon started.
 */
export async function startPoolMachines(deps: { db: Database; signals: AgentSignals; config: Config; log: PoolMachinesLog; url?: string }) {
  const { config } = deps;
  const drivers = await createDrivers({
    dataDir: config.dataDir,
    daemonCommand: config.machines.localDaemonCommand ?? defaultDaemonCommand(),
    isolation: config.machines.localIsolation,
  });
  const tasks = poolMachineTasks({ ...deps, drivers, url: deps.url ?? config.machines.localUrl });
  const loop = startMaintenance(tasks, deps.log as never, config.machines.reconcileIntervalMs);
  return {
    async stop(): Promise<void> {
      await loop.stop();
      await Promise.all(Object.values(drivers).map((driver) => driver.shutdown()));
    },
  };
}

/**
 * node and the repository's `svcd` (packages/daemon/bin/svcd.js, which needs `npm run build`); outside the
 * repository, `svcd` on PATH. A missing daemon fails each machine's start with its message, not svc's.
 */
function defaultDaemonCommand(): string[] {
  try {
    const packageJson = createRequire(import.meta.url).resolve("@svc/daemon/package.json");
    return [process.execPath, join(dirname(packageJson), "bin", "svcd.js")];
  } catch {
    return ["svcd"];
  }
}

export function poolMachineTasks(deps: { db: Database; signals: AgentSignals; config: Config; drivers: Record<string, MachineDriver>; url: string }): MaintenanceTask[] {
  const { db, signals, drivers } = deps;
  const machinesConfig = deps.config.machines;

  const inState = (state: string) =>
    db.read
      .select(poolMachineColumns)
      .from(machines)
      .where(and(eq(machines.sourceKind, "pool"), isNull(machines.deletedAt), eq(machines.lifecycleState, state)))
      .orderBy(asc(machines.createdAt))
      .limit(BATCH);

  /** Mints a token (revoking earlier ones) and starts the daemon; false when the driver could not. */
  async function startDaemon(machine: PoolMachine, driver: MachineDriver, countAttempt: boolean): Promise<boolean> {
    const token = mintToken("daemon");
    await db.tx(async (tx) => {
      const revoked = await revokeTokens(tx, machine.id, "revoked");
      await dropLeaseOfToken(tx, machine.id, revoked.map((t) => t.id));
      await tx.insert(machineDaemonTokens).values({ id: newUuid(), orgId: machine.orgId, machineId: machine.id, name: "pool", tokenHash: sha256Hex(token) });
      const wait = countAttempt ? machinesConfig.provisionTimeoutSeconds : RESTART_BACKOFF_SECONDS;
      await tx
        .update(machines)
        .set({ nextReconcileAfter: dbSecondsFromNow(wait), ...(countAttempt ? { provisionAttempts: sql`${machines.provisionAttempts} + 1` } : {}) })
        .where(eq(machines.id, machine.id));
    });
    try {
      const { cwd } = await driver.start({ machineId: machine.id, orgId: machine.orgId, daemonToken: token, url: deps.url, cwd: machine.cwd, cpu: machine.cpu, memoryMb: machine.memoryMb });
      // Commands run in the provider's working directory unless the pool, grant or config chose one.
      if (!machine.cwd) await db.write.update(machines).set({ cwd }).where(eq(machines.id, machine.id));
      return true;
    } catch (err) {
      await db.write.update(machines).set({ lifecycleReasonMessage: `starting the daemon failed: ${(err as Error).message}` }).where(eq(machines.id, machine.id));
      return false;
    }
  }

  async function provision(): Promise<number> {
    const rows = await inState("provisioning");
    for (const machine of rows) {
      const driver = drivers[machine.provider];
      if (!driver) {
        await provisionFailed(machine, `svc cannot run machines of provider ${machine.provider} in this process`);
        continue;
      }
      if (machine.leased) {
        await activate(machine);
        continue;
      }
      if (driver.running(machine.id)) {
        if (!machine.due) continue;
        // It started but never came online in time: this attempt failed.
        await driver.delete(machine.id);
      }
      if (machine.provisionAttempts >= MAX_ATTEMPTS) await provisionFailed(machine, driver.lastFailure(machine.id));
      else await startDaemon(machine, driver, true);
    }
    return rows.length;
  }

  async function activate(machine: PoolMachine): Promise<void> {
    await db.tx(async (tx) => {
      const [active] = await tx
        .update(machines)
        .set({ lifecycleState: "active", lifecycleReasonCode: "", lifecycleReasonMessage: "", nextReconcileAfter: null, updatedAt: dbNow })
        .where(and(eq(machines.id, machine.id), eq(machines.lifecycleState, "provisioning")))
        .returning();
      if (!active) return;
      const [binding] = await tx.select().from(agentMachineBindings).where(eq(agentMachineBindings.machineId, machine.id));
      const value = {
        machine_id: encodeId("machine", active.id),
        machine_ref: binding?.machineRef ?? null,
        display_name: active.displayName,
        source_kind: "pool",
        binding_kind: "pool",
        lifecycle_state: "active",
        connection_state: "online",
        executable: true,
        cwd: binding?.cwd || active.cwd,
      };
      await completeCreateCall(tx, signals, active.createToolCallId, "succeeded", [{ type: "structured_data", value }]);
    });
  }

  async function provisionFailed(machine: PoolMachine, message: string): Promise<void> {
    await db.tx(async (tx) => {
      const [failed] = await tx
        .update(machines)
        .set({ lifecycleState: "provision_failed", lifecycleReasonCode: "provision_failed", lifecycleReasonMessage: message.slice(0, 4000), failureReport: { message }, nextReconcileAfter: null, updatedAt: dbNow })
        .where(and(eq(machines.id, machine.id), eq(machines.lifecycleState, "provisioning")))
        .returning({ createToolCallId: machines.createToolCallId });
      if (failed) await failCreateCall(tx, signals, failed.createToolCallId, `provision_failed: the machine ${machine.displayName} could not be started. ${message}`);
    });
    await drivers[machine.provider]?.delete(machine.id);
  }

  /** Active machines whose daemon is not running here: svc restarted, or the daemon stopped. */
  async function keepRunning(): Promise<number> {
    const rows = await inState("active");
    let started = 0;
    for (const machine of rows) {
      const driver = drivers[machine.provider];
      if (!driver || driver.running(machine.id) || !machine.due) continue;
      await startDaemon(machine, driver, false);
      started++;
    }
    return started;
  }

  async function remove(): Promise<number> {
    const rows = await inState("deleting");
    for (const machine of rows) {
      try {
        await drivers[machine.provider]?.delete(machine.id);
        await db.tx(async (tx) => {
          await revokeTokens(tx, machine.id, "machine_deleted");
          await deleteGrantsOfMachine(tx, machine.id);
          await releaseBindings(tx, signals, { machineId: machine.id }, "machine_deleted: the machine was deleted; its processes are no longer followed.");
          await failCreateCall(tx, signals, machine.createToolCallId, "The machine was deleted before it was ready.");
          await markMachineDeleted(tx, machine.id);
        });
      } catch (err) {
        const attempts = machine.deleteAttempts + 1;
        await db.write
          .update(machines)
          .set({
            deleteAttempts: attempts,
            lifecycleReasonMessage: `deleting failed: ${(err as Error).message}`.slice(0, 4000),
            ...(attempts >= MAX_ATTEMPTS ? { lifecycleState: "delete_failed", lifecycleReasonCode: "delete_failed" } : {}),
          })
          .where(eq(machines.id, machine.id));
      }
    }
    return rows.length;
  }

  /**
   * Pool machines nobody uses any more: idle past their period (no queued or live process since the later
   * of their activation and their last process's end), or held by no attached binding (their agent or
   * project went). Both are scheduled for deletion.
   */
  async function idle(): Promise<number> {
    const unit = machinesConfig.idleMinuteSeconds;
    const lastActivity = sql`greatest(${machines.updatedAt}, (SELECT max(${processes.updatedAt}) FROM ${processes} WHERE ${processes.machineId} = ${machines.id}))`;
    const rows = await db.read
      .select({ id: machines.id, unbound: sql<boolean>`NOT EXISTS (SELECT 1 FROM ${agentMachineBindings} WHERE ${agentMachineBindings.machineId} = ${machines.id} AND ${agentMachineBindings.state} = 'attached')` })
      .from(machines)
      .where(
        and(
          eq(machines.sourceKind, "pool"),
          isNull(machines.deletedAt),
          inArray(machines.lifecycleState, ["provisioning", "active", "provision_failed"]),
          sql`(
            NOT EXISTS (SELECT 1 FROM ${agentMachineBindings} WHERE ${agentMachineBindings.machineId} = ${machines.id} AND ${agentMachineBindings.state} = 'attached')
            OR (${machines.lifecycleState} = 'active' AND ${machines.deleteAfterIdleMinutes} IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM ${processes} WHERE ${processes.machineId} = ${machines.id} AND ${processes.state} IN ('queued', 'starting', 'running'))
              AND ${lastActivity} < statement_timestamp() - make_interval(secs => ${machines.deleteAfterIdleMinutes} * ${unit})))`,
        ),
      )
      .limit(BATCH);
    for (const row of rows) {
      const reason = row.unbound ? "released: no agent holds the machine any more" : "idle: the machine was idle for longer than its idle period";
      await db.tx((tx) => scheduleDeletion(tx, signals, [row.id], reason));
    }
    return rows.length;
  }

  /** What drivers hold for machines that are gone (their pool, project or org was deleted). */
  async function orphans(): Promise<number> {
    let removed = 0;
    for (const driver of Object.values(drivers)) {
      const held = driver.held().slice(0, 100);
      if (held.length === 0) continue;
      const live = await db.read
        .select({ id: machines.id })
        .from(machines)
        .where(and(inArray(machines.id, held), isNull(machines.deletedAt), notInArray(machines.lifecycleState, ["deleted"])));
      const known = new Set(live.map((m) => m.id));
      for (const id of held.filter((id) => !known.has(id)).slice(0, BATCH)) {
        await driver.delete(id);
        removed++;
      }
    }
    return removed;
  }

  return [
    { name: "pool-machines-provision", run: provision },
    { name: "pool-machines-keep-running", run: keepRunning },
    { name: "pool-machines-idle", run: idle },
    { name: "pool-machines-delete", run: remove },
    { name: "pool-machines-orphans", run: orphans },
  ];
}
