import { and, asc, eq, getTableColumns, inArray, isNull } from "drizzle-orm";
import { machines, projectMachineGrants } from "../../db/schema/index.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset, nameMatches, type PageRequest } from "../../platform/http/lists.js";
import { grantsStore } from "../grants/store.js";
import { machineColumns, type MachineRow } from "./store.js";

type Db = AppDb | Tx;
export type GrantRow = typeof projectMachineGrants.$inferSelect;

/** The statements every kind of grant shares (modules/grants); a machine grant is seen from its project's side. */
const grants = grantsStore(projectMachineGrants, { subject: projectMachineGrants.machineId, project: projectMachineGrants.projectId });

export const insertGrant = grants.insertGrant;
export const findGrant = (tx: Db, orgId: string, projectId: string, grantId: string) => grants.findGrant(tx, orgId, { projectId }, grantId);
export const findGrantOfMachine = (tx: Db, projectId: string, machineId: string) => grants.findGrantBetween(tx, machineId, projectId);
export const deleteGrant = grants.deleteGrant;

export async function findGrantByIdempotencyKey(tx: Db, projectId: string, key: string): Promise<GrantRow | undefined> {
  const [grant] = await tx
    .select()
    .from(projectMachineGrants)
    .where(and(eq(projectMachineGrants.projectId, projectId), eq(projectMachineGrants.idempotencyKey, key)));
  return grant;
}

export async function deleteGrantsOfMachine(tx: Db, machineId: string): Promise<void> {
  await tx.delete(projectMachineGrants).where(eq(projectMachineGrants.machineId, machineId));
}

/**
 * One page of the project's explicit grants on live machines. The list's logical name is the machine's
 * display name, so the name filter and name sort read it.
 */
export async function listExplicitGrants(
  tx: Db,
  input: { orgId: string; projectId: string; name?: string; page: PageRequest },
): Promise<Array<{ grant: GrantRow; machine: MachineRow }>> {
  const ks = keyset(input.page.sort, { name: machines.displayName, created_at: projectMachineGrants.createdAt, id: projectMachineGrants.id }, input.page.cursor);
  return tx
    .select({ grant: projectMachineGrants, machine: machineColumns })
    .from(projectMachineGrants)
    .innerJoin(machines, and(eq(machines.orgId, projectMachineGrants.orgId), eq(machines.id, projectMachineGrants.machineId)))
    .where(
      allOf(
        eq(projectMachineGrants.orgId, input.orgId),
        eq(projectMachineGrants.projectId, input.projectId),
        eq(projectMachineGrants.sourceKind, "explicit"),
        isNull(machines.deletedAt),
        nameMatches(machines.displayName, input.name),
        ks.where,
      ),
    )
    .orderBy(...ks.orderBy)
    .limit(input.page.limit + 1);
}

/** The grants of `machineIds` to `projectIds` (or to any project), for explaining who sees a machine. */
export async function grantsOfMachines(tx: Db, machineIds: string[], projectIds: "all" | string[]): Promise<GrantRow[]> {
  if (machineIds.length === 0 || (projectIds !== "all" && projectIds.length === 0)) return [];
  return tx
    .select(getTableColumns(projectMachineGrants))
    .from(projectMachineGrants)
    .where(
      allOf(
        inArray(projectMachineGrants.machineId, machineIds),
        projectIds === "all" ? undefined : inArray(projectMachineGrants.projectId, projectIds),
      ),
    )
    .orderBy(asc(projectMachineGrants.createdAt), asc(projectMachineGrants.id));
}
