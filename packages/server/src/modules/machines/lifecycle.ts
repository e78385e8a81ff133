import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { and, asc, eq, getTableColumns, inArray, isNotNull, isNull, notInArray, sql, type SQL } from "drizzle-orm";
import { agentConfigs, agentMachineBindings, agents, machineDaemonTokens, machines } from "../../db/schema/index.js";
import { dbNow, dbSecondsFromNow } from "../../db/schema/columns.js";
import type { Config } from "../../config.js";
import type { Database } from "../../platform/db/index.js";
import { mintToken, sha256Hex } from "../../platform/crypto/tokens.js";
import { encodeId, newUuid } from "../../platform/ids.js";
import { startMaintenance, type MaintenanceTask } from "../../maintenance.js";
import { configMachineSources } from "./binding-rows.js";
import { abandonMachineProcesses, releaseBindings, scheduleDeletion } from "./bindings.js";
import { completeCreateCall, failCreateCall } from "./create-calls.js";
import { deleteGrantsOfMachine } from "./grants-store.js";
import { createDrivers, providerRules, PROVIDER_NAMES, type DriverLog, type MachineDriver } from "./providers/index.js";
import { hasProcessWork, lastActivity, putToSleep } from "./sleep.js";
import { dropLeaseOfToken, markMachineDeleted } from "./store.js";
import { revokeTokens } from "./tokens-store.js";

/*
 * Pool machines' lifecycle, driven by maintenance in short transactions with bounded batches (the
 * provider's calls happen between them, never inside one):
 *
 *   provisioning ──daemon started, then online──▶ active ──released / idle / pool deleted──▶ deleting ──▶ deleted
 *        └── 3 failed starts ──▶ provision_failed                          (3 failed deletions ──▶ delete_failed)
 *
 * An active machine of a provider that can sleep, with no process work for `SVC_MACHINE_SLEEP_AFTER_IDLE_SECONDS`,
 * is put to sleep (sleep.ts, then the provider stops its daemon) and woken when work is queued for it.
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

export interface PoolMachinesLog extends DriverLog {
  debug(obj: unknown, msg: string): void;
}

/**
 * Starts the pool machine loop beside maintenance (every `SVC_MACHINE_RECONCILE_INTERVAL_MS`, short so a
 * machine is usable soon after its daemon registers). `stop` ends the loop and every daemon started.
 */
export async function startPoolMachines(deps: { db: Database; config: Config; log: PoolMachinesLog; url?: string }) {
  const { config } = deps;
  const drivers = await createDrivers(config.machines.providers, {
    dataDir: config.dataDir,
    daemonCommand: config.machines.localDaemonCommand ?? defaultDaemonCommand(),
    isolation: config.machines.localIsolation,
    log: deps.log,
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

export function poolMachineTasks(deps: { db: Database; config: Config; drivers: Record<string, MachineDriver>; url: string }): MaintenanceTask[] {
  const { db, drivers } = deps;
  const machinesConfig = deps.config.machines;

  const inState = (state: string, also?: SQL) =>
    db.read
      .select(poolMachineColumns)
      .from(machines)
      .where(and(eq(machines.sourceKind, "pool"), isNull(machines.deletedAt), eq(machines.lifecycleState, state), also))
      .orderBy(asc(machines.createdAt))
      .limit(BATCH);

  /**
   * Mints a token (revoking earlier ones) and starts the daemon: a provisioning attempt (counted), a restart
   * of an active machine, or the wake of a sleeping one. False when the driver could not.
   */
  async function startDaemon(machine: PoolMachine, driver: MachineDriver, how: "provision" | "restart" | "wake"): Promise<boolean> {
    const countAttempt = how === "provision";
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
      const start = { machineId: machine.id, orgId: machine.orgId, daemonToken: token, url: deps.url, cwd: machine.cwd, cpu: machine.cpu, memoryMb: machine.memoryMb };
      const { cwd } = how === "wake" ? await driver.wake(start) : await driver.start(start);
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
        await provisionFailed(machine, `the ${machine.provider} provider is not enabled on this server (SVC_MACHINE_PROVIDERS)`);
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
      else await startDaemon(machine, driver, "provision");
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
      await completeCreateCall(tx, active.createToolCallId, "succeeded", [{ type: "structured_data", value }]);
    });
  }

  async function provisionFailed(machine: PoolMachine, message: string): Promise<void> {
    await db.tx(async (tx) => {
      const [failed] = await tx
        .update(machines)
        .set({ lifecycleState: "provision_failed", lifecycleReasonCode: "provision_failed", lifecycleReasonMessage: message.slice(0, 4000), failureReport: { message }, nextReconcileAfter: null, updatedAt: dbNow })
        .where(and(eq(machines.id, machine.id), eq(machines.lifecycleState, "provisioning")))
        .returning({ createToolCallId: machines.createToolCallId });
      if (!failed) return;
      const reason = `provision_failed: the machine ${machine.displayName} could not be started. ${message}`;
      await failCreateCall(tx, failed.createToolCallId, reason);
      // Commands queued for it while it was provisioning will never run.
      await abandonMachineProcesses(tx, machine.id, reason);
    });
    await drivers[machine.provider]?.delete(machine.id);
  }

  /** Active, awake machines whose daemon is not running here: svc restarted, or the daemon stopped. */
  async function keepRunning(): Promise<number> {
    const rows = await inState("active", isNull(machines.asleepSince));
    let started = 0;
    for (const machine of rows) {
      const driver = drivers[machine.provider];
      if (!driver || driver.running(machine.id) || !machine.due) continue;
      await startDaemon(machine, driver, "restart");
      started++;
    }
    return started;
  }

  /**
   * Sleeping machines with process work queued (a run_command, a process action) are woken: their daemon
   * starts again with a fresh token on the same state. A wake whose daemon exits is tried again after a
   * backoff; the work waiting on it fails once it waited for longer than the grace period (unreachable.ts).
   */
  async function wake(): Promise<number> {
    const rows = await db.read
      .select(poolMachineColumns)
      .from(machines)
      .where(and(eq(machines.sourceKind, "pool"), isNull(machines.deletedAt), eq(machines.lifecycleState, "active"), isNotNull(machines.asleepSince), hasProcessWork()))
      .orderBy(asc(machines.asleepSince))
      .limit(BATCH);
    let woken = 0;
    for (const machine of rows) {
      const driver = drivers[machine.provider];
      if (!driver || driver.running(machine.id) || !machine.due) continue;
      await startDaemon(machine, driver, "wake");
      woken++;
    }
    return woken;
  }

  /**
   * Machines with no process work for the sleep period are put to sleep, then their daemon is stopped.
   * An asleep machine whose daemon still runs here (it asked to sleep itself, or was woken for work that
   * went away) is put back to sleep the same way, even with sleeping turned off.
   */
  async function sleep(): Promise<number> {
    const awake = await asleepButRunning();
    let slept = 0;
    for (const row of [...(await idleAwake()), ...awake]) {
      const driver = drivers[row.provider];
      const outcome = await db.tx((tx) => putToSleep(tx, row.id));
      if (!outcome.asleep) continue;
      await driver?.sleep(row.id);
      slept++;
    }
    return slept;
  }

  /** Awake machines of providers that sleep, with no process work for the sleep period (none when it is 0). */
  async function idleAwake(): Promise<Array<{ id: string; provider: string }>> {
    const seconds = machinesConfig.sleepAfterIdleSeconds;
    const sleepers = PROVIDER_NAMES.filter((name) => providerRules(name)?.sleeps);
    if (seconds === 0 || sleepers.length === 0) return [];
    return db.read
      .select({ id: machines.id, provider: machines.provider })
      .from(machines)
      .where(
        and(
          eq(machines.sourceKind, "pool"),
          isNull(machines.deletedAt),
          eq(machines.lifecycleState, "active"),
          isNull(machines.asleepSince),
          inArray(machines.provider, sleepers),
          sql`NOT ${hasProcessWork()}`,
          sql`${lastActivity()} < statement_timestamp() - make_interval(secs => ${seconds})`,
        ),
      )
      .limit(BATCH);
  }

  async function asleepButRunning(): Promise<Array<{ id: string; provider: string }>> {
    const found: Array<{ id: string; provider: string }> = [];
    for (const driver of Object.values(drivers)) {
      const running = driver.held().filter((id) => driver.running(id)).slice(0, 100);
      if (running.length === 0) continue;
      const rows = await db.read
        .select({ id: machines.id, provider: machines.provider })
        .from(machines)
        .where(and(inArray(machines.id, running), isNull(machines.deletedAt), isNotNull(machines.asleepSince), sql`NOT ${hasProcessWork()}`))
        .limit(BATCH);
      found.push(...rows);
    }
    return found;
  }

  /**
   * Pool bindings whose agent's current config no longer lists their pool (reference machines/pools.mdx:
   * a machine is deleted when "the agent's config no longer includes that pool source") are released,
   * which deletes their machines, once the config change has taken effect.
   */
  async function droppedSources(): Promise<number> {
    const listed = sql`EXISTS (SELECT 1 FROM ${configMachineSources}
      WHERE sources.item ->> 'kind' = 'pool' AND sources.item ->> 'poolId' = ${machines.machinePoolId}::text)`;
    const rows = await db.read
      .select({ machineId: agentMachineBindings.machineId })
      .from(agentMachineBindings)
      .innerJoin(agents, eq(agents.id, agentMachineBindings.agentId))
      .innerJoin(agentConfigs, eq(agentConfigs.id, agents.currentConfigId))
      .innerJoin(machines, eq(machines.id, agentMachineBindings.machineId))
      .where(and(eq(agentMachineBindings.state, "attached"), eq(agentMachineBindings.bindingKind, "pool"), sql`NOT ${listed}`))
      .limit(BATCH);
    for (const row of rows) {
      await db.tx((tx) => releaseBindings(tx, { machineId: row.machineId }, "released: the agent's config no longer lists the machine's pool."));
    }
    return rows.length;
  }

  async function remove(): Promise<number> {
    const rows = await inState("deleting");
    for (const machine of rows) {
      try {
        await drivers[machine.provider]?.delete(machine.id);
        await db.tx(async (tx) => {
          await revokeTokens(tx, machine.id, "machine_deleted");
          await deleteGrantsOfMachine(tx, machine.id);
          await releaseBindings(tx, { machineId: machine.id }, "machine_deleted: the machine was deleted; its processes are no longer followed.");
          await failCreateCall(tx, machine.createToolCallId, "The machine was deleted before it was ready.");
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
              AND NOT ${hasProcessWork()}
              AND ${lastActivity()} < statement_timestamp() - make_interval(secs => ${machines.deleteAfterIdleMinutes} * ${unit})))`,
        ),
      )
      .limit(BATCH);
    for (const row of rows) {
      const reason = row.unbound ? "released: no agent holds the machine any more" : "idle: the machine was idle for longer than its idle period";
      await db.tx((tx) => scheduleDeletion(tx, [row.id], reason));
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
    { name: "pool-machines-wake", run: wake },
    { name: "pool-machines-dropped-sources", run: droppedSources },
    { name: "pool-machines-idle", run: idle },
    { name: "pool-machines-sleep", run: sleep },
    { name: "pool-machines-delete", run: remove },
    { name: "pool-machines-orphans", run: orphans },
  ];
}
