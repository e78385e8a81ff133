import { and, asc, eq, inArray, isNull, ne, notInArray, sql } from "drizzle-orm";
import { daemonRuntimes, machineDaemonTokens, machines, processActions, processes, toolCalls } from "../../db/schema/index.js";
import { dbNow, dbSecondsFromNow, unsetOrOlderThan } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { TOKEN_TOUCH_SECONDS } from "../../platform/crypto/tokens.js";
import type { ProcessActionRow, ProcessRow } from "../../runtime/store/processes.js";

type Db = AppDb | Tx;
export type RuntimeRow = typeof daemonRuntimes.$inferSelect;

/** The reference's lease: a runtime not heard from for two minutes is gone, and its machine offline. */
export const LEASE_SECONDS = 120;

/** The active token of a live machine with this hash, as the daemon it authenticates. */
export async function findDaemonByTokenHash(db: Db, tokenHash: string) {
  const [row] = await db
    .select({ tokenId: machineDaemonTokens.id, machineId: machines.id, orgId: machines.orgId, lastUsedAt: machineDaemonTokens.lastUsedAt })
    .from(machineDaemonTokens)
    .innerJoin(machines, eq(machines.id, machineDaemonTokens.machineId))
    .where(and(eq(machineDaemonTokens.tokenHash, tokenHash), isNull(machineDaemonTokens.revokedAt), isNull(machines.deletedAt)));
  return row;
}

/** `last_used_at`, written at most once a minute per token so authentication is not a write per request. */
export async function touchToken(db: Db, tokenId: string): Promise<void> {
  await db
    .update(machineDaemonTokens)
    .set({ lastUsedAt: dbNow })
    .where(and(eq(machineDaemonTokens.id, tokenId), unsetOrOlderThan(machineDaemonTokens.lastUsedAt, TOKEN_TOUCH_SECONDS)));
}

export async function lockLiveMachine(tx: Tx, machineId: string) {
  const [machine] = await tx.select().from(machines).where(and(eq(machines.id, machineId), isNull(machines.deletedAt))).for("update");
  return machine;
}

export async function findRuntime(db: Db, machineId: string, runtimeId: string): Promise<RuntimeRow | undefined> {
  const [runtime] = await db.select().from(daemonRuntimes).where(and(eq(daemonRuntimes.machineId, machineId), eq(daemonRuntimes.id, runtimeId)));
  return runtime;
}

export async function findRuntimeByInstance(tx: Tx, machineId: string, instanceId: string): Promise<RuntimeRow | undefined> {
  const [runtime] = await tx.select().from(daemonRuntimes).where(and(eq(daemonRuntimes.machineId, machineId), eq(daemonRuntimes.daemonInstanceId, instanceId)));
  return runtime;
}

/** Ends the machine's active runtimes but `keep`; returns those ended now. */
export async function endRuntimes(tx: Tx, machineId: string, reason: { code: string; message: string }, keep?: string): Promise<RuntimeRow[]> {
  return tx
    .update(daemonRuntimes)
    .set({ state: "ended", stateReasonCode: reason.code, stateReasonMessage: reason.message, endedAt: dbNow })
    .where(and(eq(daemonRuntimes.machineId, machineId), eq(daemonRuntimes.state, "active"), keep ? ne(daemonRuntimes.id, keep) : undefined))
    .returning();
}

export async function insertRuntime(tx: Tx, row: typeof daemonRuntimes.$inferInsert): Promise<RuntimeRow> {
  const [runtime] = await tx.insert(daemonRuntimes).values(row).returning();
  return runtime!;
}

/** Makes a runtime the machine's current one again with a fresh lease (re-registration of the same instance). */
export async function reviveRuntime(tx: Tx, runtimeId: string, tokenId: string, changes: { daemonVersion: string; capacity: Record<string, unknown>; observedPlatform: Record<string, unknown> }): Promise<RuntimeRow> {
  const [runtime] = await tx
    .update(daemonRuntimes)
    .set({ ...changes, daemonTokenId: tokenId, state: "active", stateReasonCode: "", stateReasonMessage: "", endedAt: null, lastSeenAt: dbNow, leaseExpiresAt: dbSecondsFromNow(LEASE_SECONDS) })
    .where(eq(daemonRuntimes.id, runtimeId))
    .returning();
  return runtime!;
}

/**
 * Renews an active runtime's lease and its machine's, by the database clock, while its token is active and
 * its machine live. Undefined when the runtime may not go on.
 */
export async function renewLease(tx: Tx, runtimeId: string): Promise<RuntimeRow | undefined> {
  const [runtime] = await tx
    .update(daemonRuntimes)
    .set({ lastSeenAt: dbNow, leaseExpiresAt: dbSecondsFromNow(LEASE_SECONDS) })
    .where(
      and(
        eq(daemonRuntimes.id, runtimeId),
        eq(daemonRuntimes.state, "active"),
        sql`EXISTS (SELECT 1 FROM ${machineDaemonTokens} WHERE ${machineDaemonTokens.id} = ${daemonRuntimes.daemonTokenId} AND ${machineDaemonTokens.revokedAt} IS NULL)`,
        sql`EXISTS (SELECT 1 FROM ${machines} WHERE ${machines.id} = ${daemonRuntimes.machineId} AND ${machines.deletedAt} IS NULL)`,
      ),
    )
    .returning();
  if (runtime) await leaseMachine(tx, runtime);
  return runtime;
}

/** The machine shows the runtime's lease: `connection_state` reads it there. */
export async function leaseMachine(tx: Tx, runtime: RuntimeRow): Promise<void> {
  await tx
    .update(machines)
    .set({ leaseExpiresAt: runtime.leaseExpiresAt, leaseTokenId: runtime.daemonTokenId, lastObservedAt: dbNow, asleepSince: null })
    .where(and(eq(machines.id, runtime.machineId), isNull(machines.deletedAt)));
}

/** The machine goes offline at once when its current runtime ends (not when an older one does). */
export async function unleaseMachine(tx: Tx, runtime: RuntimeRow): Promise<void> {
  await tx
    .update(machines)
    .set({ leaseExpiresAt: null, leaseTokenId: null, lastObservedAt: dbNow })
    .where(
      and(
        eq(machines.id, runtime.machineId),
        sql`NOT EXISTS (SELECT 1 FROM ${daemonRuntimes} WHERE ${daemonRuntimes.machineId} = ${runtime.machineId} AND ${daemonRuntimes.state} = 'active')`,
      ),
    );
}

export async function tokenRevoked(db: Db, tokenId: string): Promise<boolean> {
  const [token] = await db.select({ revokedAt: machineDaemonTokens.revokedAt }).from(machineDaemonTokens).where(eq(machineDaemonTokens.id, tokenId));
  return !token || token.revokedAt !== null;
}

export async function machineDeleted(db: Db, machineId: string): Promise<boolean> {
  const [machine] = await db.select({ deletedAt: machines.deletedAt }).from(machines).where(eq(machines.id, machineId));
  return !machine || machine.deletedAt !== null;
}

export async function processesOfMachine(tx: Tx, machineId: string, ids: string[]): Promise<ProcessRow[]> {
  if (ids.length === 0) return [];
  return tx.select().from(processes).where(and(eq(processes.machineId, machineId), inArray(processes.id, ids)));
}

/** Processes a daemon of the machine was running that no registering daemon claims any more. */
export async function liveProcessesNotIn(tx: Tx, machineId: string, claimed: string[]): Promise<ProcessRow[]> {
  return tx
    .select()
    .from(processes)
    .where(and(eq(processes.machineId, machineId), inArray(processes.state, ["starting", "running"]), claimed.length ? notInArray(processes.id, claimed) : undefined));
}

export async function bindProcessesToRuntime(tx: Tx, ids: string[], runtimeId: string, state?: "running"): Promise<void> {
  if (ids.length === 0) return;
  await tx
    .update(processes)
    .set({ runtimeId, ...(state ? { state, executionGrantedAt: sql`coalesce(${processes.executionGrantedAt}, ${dbNow})` } : {}), updatedAt: dbNow })
    .where(inArray(processes.id, ids));
}

/** Queued processes of the machine whose calls still wait for them, oldest first. */
export async function queuedProcesses(db: Db, machineId: string, skip: readonly string[], limit: number): Promise<ProcessRow[]> {
  return db
    .select({ process: processes })
    .from(processes)
    .innerJoin(toolCalls, eq(toolCalls.id, processes.toolCallId))
    .where(and(eq(processes.machineId, machineId), eq(processes.state, "queued"), eq(toolCalls.state, "waiting"), skip.length ? notInArray(processes.id, [...skip]) : undefined))
    .orderBy(asc(processes.createdAt))
    .limit(limit)
    .then((rows) => rows.map((r) => r.process));
}

/**
 * Grants a queued process to the runtime, only while its call still waits: the daemon may start it.
 * A process already granted to this runtime is granted again (an accept repeated after a lost ack).
 */
export async function grantProcess(tx: Tx, machineId: string, processId: string, runtimeId: string): Promise<ProcessRow | undefined> {
  const [granted] = await tx
    .update(processes)
    .set({ state: "running", runtimeId, executionGrantedAt: dbNow, updatedAt: dbNow })
    .where(
      and(
        eq(processes.id, processId),
        eq(processes.machineId, machineId),
        eq(processes.state, "queued"),
        sql`EXISTS (SELECT 1 FROM ${toolCalls} WHERE ${toolCalls.id} = ${processes.toolCallId} AND ${toolCalls.state} = 'waiting')`,
      ),
    )
    .returning();
  if (granted) return granted;
  const [again] = await tx
    .select()
    .from(processes)
    .where(and(eq(processes.id, processId), eq(processes.machineId, machineId), eq(processes.runtimeId, runtimeId), eq(processes.state, "running")));
  return again;
}

export async function findProcess(db: Db, machineId: string, processId: string): Promise<ProcessRow | undefined> {
  const [row] = await db.select().from(processes).where(and(eq(processes.machineId, machineId), eq(processes.id, processId)));
  return row;
}

/**
 * Running processes of the machine whose run_command call was canceled: the daemon stops them. (A call that
 * returned early, `state: running`, completed too, but its process is meant to go on.)
 */
export async function abandonedRunning(db: Db, machineId: string, limit: number): Promise<ProcessRow[]> {
  return db
    .select({ process: processes })
    .from(processes)
    .innerJoin(toolCalls, eq(toolCalls.id, processes.toolCallId))
    .where(and(eq(processes.machineId, machineId), eq(processes.state, "running"), eq(toolCalls.state, "completed"), eq(toolCalls.outcome, "canceled")))
    .orderBy(asc(processes.createdAt))
    .limit(limit)
    .then((rows) => rows.map((r) => r.process));
}

/**
 * Actions the machine's daemon may take now, oldest first: for each process, its lowest queued action whose
 * call still waits, and only while none of the process's actions is accepted (one at a time, in seq order).
 */
export async function queuedActions(db: Db, machineId: string, skip: readonly string[], limit: number): Promise<Array<{ action: ProcessActionRow; process: ProcessRow }>> {
  const earlier = sql`SELECT 1 FROM ${processActions} b JOIN ${toolCalls} bc ON bc.id = b.tool_call_id
    WHERE b.process_id = ${processActions.processId} AND (b.state = 'accepted' OR (b.state = 'queued' AND b.seq < ${processActions.seq} AND bc.state = 'waiting'))`;
  return db
    .select({ action: processActions, process: processes })
    .from(processActions)
    .innerJoin(processes, eq(processes.id, processActions.processId))
    .innerJoin(toolCalls, eq(toolCalls.id, processActions.toolCallId))
    .where(
      and(
        eq(processes.machineId, machineId),
        eq(processActions.state, "queued"),
        eq(toolCalls.state, "waiting"),
        sql`NOT EXISTS (${earlier})`,
        skip.length ? notInArray(processActions.id, [...skip]) : undefined,
      ),
    )
    .orderBy(asc(processActions.createdAt))
    .limit(limit);
}

/**
 * Grants a queued action to the runtime while its call waits and no other action of its process is
 * accepted; an action already granted to this runtime is granted again (an accept repeated after a lost ack).
 */
export async function grantAction(tx: Tx, machineId: string, actionId: string, runtimeId: string): Promise<{ action: ProcessActionRow; process: ProcessRow } | undefined> {
  const found = await findAction(tx, machineId, actionId);
  if (!found) return undefined;
  if (found.action.state === "accepted") return found.action.runtimeId === runtimeId ? found : undefined;
  const [granted] = await tx
    .update(processActions)
    .set({ state: "accepted", runtimeId, acceptedAt: dbNow, updatedAt: dbNow })
    .where(
      and(
        eq(processActions.id, actionId),
        eq(processActions.state, "queued"),
        sql`EXISTS (SELECT 1 FROM ${toolCalls} WHERE ${toolCalls.id} = ${processActions.toolCallId} AND ${toolCalls.state} = 'waiting')`,
        sql`NOT EXISTS (SELECT 1 FROM ${processActions} b WHERE b.process_id = ${found.process.id} AND b.state = 'accepted')`,
      ),
    )
    .returning();
  return granted ? { action: granted, process: found.process } : undefined;
}

/** An action of a process on the machine, with its process. */
export async function findAction(db: Db, machineId: string, actionId: string): Promise<{ action: ProcessActionRow; process: ProcessRow } | undefined> {
  const [row] = await db
    .select({ action: processActions, process: processes })
    .from(processActions)
    .innerJoin(processes, eq(processes.id, processActions.processId))
    .where(and(eq(processActions.id, actionId), eq(processes.machineId, machineId)));
  return row;
}

/** The accepted actions of these processes, for reconciliation. */
export async function acceptedActions(tx: Tx, processIds: string[]): Promise<ProcessActionRow[]> {
  if (processIds.length === 0) return [];
  return tx.select().from(processActions).where(and(inArray(processActions.processId, processIds), eq(processActions.state, "accepted")));
}

/** An accepted action the daemon never took on goes back to the queue, to be offered again. */
export async function requeueAction(tx: Tx, actionId: string): Promise<void> {
  await tx.update(processActions).set({ state: "queued", runtimeId: null, acceptedAt: null, updatedAt: dbNow }).where(and(eq(processActions.id, actionId), eq(processActions.state, "accepted")));
}
