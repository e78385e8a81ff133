import { and, eq } from "drizzle-orm";
import type { PgInsertValue } from "drizzle-orm/pg-core";
import { projects, secretGrants } from "../../db/schema/index.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset, nameMatches, type Sort } from "../../platform/http/lists.js";

type Db = AppDb | Tx;
export type GrantRow = typeof secretGrants.$inferSelect;
export type GrantTargetRow = typeof projects.$inferSelect;

export async function insertGrant(tx: Db, row: PgInsertValue<typeof secretGrants>): Promise<GrantRow> {
  const [grant] = await tx.insert(secretGrants).values(row).returning();
  return grant!;
}

export async function findGrant(tx: Db, orgId: string, secretId: string, grantId: string): Promise<GrantRow | undefined> {
  const [grant] = await tx
    .select()
    .from(secretGrants)
    .where(and(eq(secretGrants.orgId, orgId), eq(secretGrants.secretId, secretId), eq(secretGrants.id, grantId)));
  return grant;
}

export async function findGrantToProject(tx: Db, secretId: string, projectId: string): Promise<GrantRow | undefined> {
  const [grant] = await tx
    .select()
    .from(secretGrants)
    .where(and(eq(secretGrants.secretId, secretId), eq(secretGrants.targetProjectId, projectId)));
  return grant;
}

export async function deleteGrant(tx: Db, orgId: string, grantId: string): Promise<void> {
  await tx.delete(secretGrants).where(and(eq(secretGrants.orgId, orgId), eq(secretGrants.id, grantId)));
}

/**
 * One page of a secret's grants with their target projects. The list's logical name is the target
 * project's name, so the name filter and name sort read the project row (read-only, joined by the
 * grant's own foreign key).
 */
export async function listGrants(
  tx: Db,
  input: { orgId: string; secretId: string; name?: string; page: { limit: number; cursor?: string; sort: Sort } },
): Promise<Array<{ grant: GrantRow; project: GrantTargetRow }>> {
  const ks = keyset(input.page.sort, { name: projects.name, created_at: secretGrants.createdAt, id: secretGrants.id }, input.page.cursor);
  return tx
    .select({ grant: secretGrants, project: projects })
    .from(secretGrants)
    .innerJoin(projects, and(eq(projects.orgId, secretGrants.orgId), eq(projects.id, secretGrants.targetProjectId)))
    .where(allOf(eq(secretGrants.orgId, input.orgId), eq(secretGrants.secretId, input.secretId), nameMatches(projects.name, input.name), ks.where))
    .orderBy(...ks.orderBy)
    .limit(input.page.limit + 1);
}
