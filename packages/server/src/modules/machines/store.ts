import { and, eq, getTableColumns, inArray, isNull, sql, type SQL } from "drizzle-orm";
import type { PgInsertValue } from "drizzle-orm/pg-core";
import { machines, projectMachineGrants } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset, nameMatches, type PageRequest } from "../../platform/http/lists.js";
import type { ConnectionState, SourceKind } from "./schemas.js";

type Db = AppDb | Tx;

/**
 * Derived with the database clock, never stored: online while a daemon's lease runs, asleep when a
 * sleeping machine can be woken, offline otherwise. Deleted or inactive machines are offline.
 */
const connectionState = sql<ConnectionState>`CASE
  WHEN ${machines.deletedAt} IS NULL AND ${machines.lifecycleState} = 'active' AND ${machines.leaseExpiresAt} > statement_timestamp() THEN 'online'
  WHEN ${machines.deletedAt} IS NULL AND ${machines.lifecycleState} = 'active' AND ${machines.asleepSince} IS NOT NULL THEN 'asleep'
  ELSE 'offline' END`;

/** A machine's columns with its derived connection state, for every statement that reads machines. */
export const machineColumns = { ...getTableColumns(machines), connectionState };
export type MachineRow = typeof machines.$inferSelect & { connectionState: ConnectionState };

/**
 * Connected daemons' sockets listen here (modules/daemon/socket.ts): a payload names a machine whose tokens,
 * existence or current runtime changed, and its sockets re-check that they may go on, or end their runtime.
 */
export const DAEMON_CHANNEL = "svc_machine_daemons";

export async function insertMachine(tx: Db, row: PgInsertValue<typeof machines>): Promise<MachineRow> {
  const [machine] = await tx.insert(machines).values(row).returning(machineColumns);
  return machine!;
}

/** Any machine of the org, deleted ones included (idempotent replays may name one). */
export async function findMachine(tx: Db, orgId: string, machineId: string): Promise<MachineRow | undefined> {
  const [machine] = await tx.select(machineColumns).from(machines).where(and(eq(machines.orgId, orgId), eq(machines.id, machineId)));
  return machine;
}

/** Locks a live machine: token mints, grants and deletion of one machine serialize here. */
export async function lockLiveMachine(tx: Tx, orgId: string, machineId: string): Promise<MachineRow | undefined> {
  const [machine] = await tx
    .select(machineColumns)
    .from(machines)
    .where(and(eq(machines.orgId, orgId), eq(machines.id, machineId), isNull(machines.deletedAt)))
    .for("update");
  return machine;
}

export async function findMachineByIdempotencyKey(tx: Db, orgId: string, key: string): Promise<MachineRow | undefined> {
  const [machine] = await tx.select(machineColumns).from(machines).where(and(eq(machines.orgId, orgId), eq(machines.idempotencyKey, key)));
  return machine;
}

export async function findLiveByoMachineByName(tx: Db, orgId: string, displayName: string): Promise<MachineRow | undefined> {
  const [machine] = await tx
    .select(machineColumns)
    .from(machines)
    .where(and(eq(machines.orgId, orgId), eq(machines.sourceKind, "byo"), eq(machines.displayName, displayName), isNull(machines.deletedAt)));
  return machine;
}

export async function updateMachine(
  tx: Db,
  machineId: string,
  changes: { cwd?: string; env?: Record<string, string>; secretEnv?: Record<string, string> },
): Promise<MachineRow> {
  const [machine] = await tx
    .update(machines)
    .set({ ...changes, updatedAt: dbNow })
    .where(eq(machines.id, machineId))
    .returning(machineColumns);
  return machine!;
}

/** Deletion keeps the row (processes and bindings will refer to it) and frees its name; its daemon is told. */
export async function markMachineDeleted(tx: Db, machineId: string): Promise<void> {
  await tx
    .update(machines)
    .set({ lifecycleState: "deleted", deletedAt: dbNow, leaseExpiresAt: null, leaseTokenId: null, asleepSince: null, updatedAt: dbNow })
    .where(eq(machines.id, machineId));
  await notifyDaemon(tx, machineId);
}

/** A hint to the machine's connected daemon, delivered on commit; see DAEMON_CHANNEL. */
export async function notifyDaemon(tx: Db, machineId: string): Promise<void> {
  await tx.execute(sql`SELECT pg_notify(${DAEMON_CHANNEL}, ${machineId}::text)`);
}

/** A revoked token's daemon loses its lease at once, so the machine shows offline without waiting for expiry. */
export async function dropLeaseOfToken(tx: Db, machineId: string, tokenIds: string[]): Promise<void> {
  if (tokenIds.length === 0) return;
  await tx
    .update(machines)
    .set({ leaseExpiresAt: null, leaseTokenId: null })
    .where(and(eq(machines.id, machineId), inArray(machines.leaseTokenId, tokenIds)));
}

export interface MachineFilters {
  name?: string;
  sourceKind?: SourceKind;
}

const sortColumns = { name: machines.displayName, created_at: machines.createdAt, updated_at: machines.updatedAt, id: machines.id };

/**
 * One page of the org's live machines: all of them, or those granted to one of `projectIds` (the
 * projects the caller can read).
 */
export async function listMachines(
  tx: Db,
  input: { orgId: string; projectIds: "all" | string[]; filters: MachineFilters; page: PageRequest },
): Promise<MachineRow[]> {
  const ks = keyset(input.page.sort, sortColumns, input.page.cursor);
  return tx
    .select(machineColumns)
    .from(machines)
    .where(allOf(eq(machines.orgId, input.orgId), isNull(machines.deletedAt), grantedTo(input.projectIds), ...filtered(input.filters), ks.where))
    .orderBy(...ks.orderBy)
    .limit(input.page.limit + 1);
}

/** One page of the live machines the project can use, each with the grant that gives it. */
export async function listProjectMachines(
  tx: Db,
  input: { orgId: string; projectId: string; filters: MachineFilters; page: PageRequest },
): Promise<Array<{ machine: MachineRow; grant: typeof projectMachineGrants.$inferSelect }>> {
  const ks = keyset(input.page.sort, sortColumns, input.page.cursor);
  return tx
    .select({ machine: machineColumns, grant: projectMachineGrants })
    .from(machines)
    .innerJoin(projectMachineGrants, and(eq(projectMachineGrants.machineId, machines.id), eq(projectMachineGrants.projectId, input.projectId)))
    .where(allOf(eq(machines.orgId, input.orgId), isNull(machines.deletedAt), ...filtered(input.filters), ks.where))
    .orderBy(...ks.orderBy)
    .limit(input.page.limit + 1);
}

/** Whether a live machine is granted to one of `projectIds`. */
export async function isGrantedToAny(tx: Db, machineId: string, projectIds: string[]): Promise<boolean> {
  if (projectIds.length === 0) return false;
  const [row] = await tx
    .select({ id: projectMachineGrants.id })
    .from(projectMachineGrants)
    .where(and(eq(projectMachineGrants.machineId, machineId), inArray(projectMachineGrants.projectId, projectIds)))
    .limit(1);
  return row !== undefined;
}

function grantedTo(projectIds: "all" | string[]): SQL | undefined {
  if (projectIds === "all") return undefined;
  if (projectIds.length === 0) return sql`false`;
  return sql`EXISTS (SELECT 1 FROM ${projectMachineGrants} WHERE ${projectMachineGrants.machineId} = ${machines.id} AND ${inArray(projectMachineGrants.projectId, projectIds)})`;
}

function filtered(filters: MachineFilters): Array<SQL | undefined> {
  return [nameMatches(machines.displayName, filters.name), filters.sourceKind ? eq(machines.sourceKind, filters.sourceKind) : undefined];
}
