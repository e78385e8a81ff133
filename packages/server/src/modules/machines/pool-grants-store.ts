import { and, eq, isNull } from "drizzle-orm";
import type { PgUpdateSetSource } from "drizzle-orm/pg-core";
import { machinePools, machines, projectMachineGrants, projectMachinePoolGrants } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset, nameMatches, type PageRequest } from "../../platform/http/lists.js";
import { grantsStore } from "../grants/store.js";
import type { PoolRow } from "./pools-store.js";

type Db = AppDb | Tx;
export type PoolGrantRow = typeof projectMachinePoolGrants.$inferSelect;
export type PoolGrantChanges = PgUpdateSetSource<typeof projectMachinePoolGrants>;

/** The statements every kind of grant shares (modules/grants); a pool grant is seen from its project's side. */
const grants = grantsStore(projectMachinePoolGrants, { subject: projectMachinePoolGrants.machinePoolId, project: projectMachinePoolGrants.projectId });

export const insertPoolGrant = grants.insertGrant;
export const findPoolGrant = (tx: Db, orgId: string, projectId: string, grantId: string) => grants.findGrant(tx, orgId, { projectId }, grantId);
export const findPoolGrantOfPool = (tx: Db, projectId: string, poolId: string) => grants.findGrantBetween(tx, poolId, projectId);
/** The machine grants it generated go with it (foreign key cascade). */
export const deletePoolGrant = grants.deleteGrant;

export async function updatePoolGrant(tx: Db, grantId: string, changes: PoolGrantChanges): Promise<PoolGrantRow> {
  const [grant] = await tx
    .update(projectMachinePoolGrants)
    .set({ ...changes, updatedAt: dbNow })
    .where(eq(projectMachinePoolGrants.id, grantId))
    .returning();
  return grant!;
}

/** The live machines made through the grant (their project grant names it). */
export async function machinesMadeThrough(tx: Db, grantId: string): Promise<string[]> {
  const rows = await tx
    .select({ id: machines.id })
    .from(machines)
    .innerJoin(projectMachineGrants, eq(projectMachineGrants.machineId, machines.id))
    .where(and(eq(projectMachineGrants.projectMachinePoolGrantId, grantId), isNull(machines.deletedAt)));
  return rows.map((r) => r.id);
}

/** One page of the project's pool grants with their pools; the list's logical name is the pool's name. */
export async function listPoolGrants(
  tx: Db,
  input: { orgId: string; projectId: string; name?: string; page: PageRequest },
): Promise<Array<{ grant: PoolGrantRow; pool: PoolRow }>> {
  const ks = keyset(input.page.sort, { name: machinePools.name, created_at: projectMachinePoolGrants.createdAt, id: projectMachinePoolGrants.id }, input.page.cursor);
  return tx
    .select({ grant: projectMachinePoolGrants, pool: machinePools })
    .from(projectMachinePoolGrants)
    .innerJoin(machinePools, and(eq(machinePools.orgId, projectMachinePoolGrants.orgId), eq(machinePools.id, projectMachinePoolGrants.machinePoolId)))
    .where(
      allOf(
        eq(projectMachinePoolGrants.orgId, input.orgId),
        eq(projectMachinePoolGrants.projectId, input.projectId),
        nameMatches(machinePools.name, input.name),
        ks.where,
      ),
    )
    .orderBy(...ks.orderBy)
    .limit(input.page.limit + 1);
}
