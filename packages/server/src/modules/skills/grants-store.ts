import { and, eq } from "drizzle-orm";
import type { PgInsertValue } from "drizzle-orm/pg-core";
import { projects, skillGrants } from "../../db/schema/index.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset, nameMatches, type Sort } from "../../platform/http/lists.js";

type Db = AppDb | Tx;
export type GrantRow = typeof skillGrants.$inferSelect;
export type GrantTargetRow = typeof projects.$inferSelect;

export async function insertGrant(tx: Db, row: PgInsertValue<typeof skillGrants>): Promise<GrantRow> {
  const [grant] = await tx.insert(skillGrants).values(row).returning();
  return grant!;
}

export async function findGrant(tx: Db, orgId: string, skillId: string, grantId: string): Promise<GrantRow | undefined> {
  const [grant] = await tx
    .select()
    .from(skillGrants)
    .where(and(eq(skillGrants.orgId, orgId), eq(skillGrants.skillId, skillId), eq(skillGrants.id, grantId)));
  return grant;
}

export async function findGrantToProject(tx: Db, skillId: string, projectId: string): Promise<GrantRow | undefined> {
  const [grant] = await tx
    .select()
    .from(skillGrants)
    .where(and(eq(skillGrants.skillId, skillId), eq(skillGrants.targetProjectId, projectId)));
  return grant;
}

export async function deleteGrant(tx: Db, orgId: string, grantId: string): Promise<void> {
  await tx.delete(skillGrants).where(and(eq(skillGrants.orgId, orgId), eq(skillGrants.id, grantId)));
}

/**
 * One page of a skill's grants with their target projects. The list's logical name is the target
 * project's name, so the name filter and name sort read the project row (read-only, joined by the
 * grant's own foreign key).
 */
export async function listGrants(
  tx: Db,
  input: { orgId: string; skillId: string; name?: string; page: { limit: number; cursor?: string; sort: Sort } },
): Promise<Array<{ grant: GrantRow; project: GrantTargetRow }>> {
  const ks = keyset(input.page.sort, { name: projects.name, created_at: skillGrants.createdAt, id: skillGrants.id }, input.page.cursor);
  return tx
    .select({ grant: skillGrants, project: projects })
    .from(skillGrants)
    .innerJoin(projects, and(eq(projects.orgId, skillGrants.orgId), eq(projects.id, skillGrants.targetProjectId)))
    .where(allOf(eq(skillGrants.orgId, input.orgId), eq(skillGrants.skillId, input.skillId), nameMatches(projects.name, input.name), ks.where))
    .orderBy(...ks.orderBy)
    .limit(input.page.limit + 1);
}
