import { and, eq } from "drizzle-orm";
import type { PgColumn, PgInsertValue } from "drizzle-orm/pg-core";
import { projects, secretGrants, skillGrants } from "../../db/schema/index.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset, nameMatches, type Sort } from "../../platform/http/lists.js";

/*
 * Grants that make an owned resource (ownership.ts: a secret, a skill) available to another project of
 * its organization. Each kind has its own table with the same columns except the one naming the
 * resource, so one store serves both; the rules of who may grant stay with each kind's service.
 */

type Db = AppDb | Tx;
type GrantTable = typeof secretGrants | typeof skillGrants;
export type GrantTargetRow = typeof projects.$inferSelect;

export interface ProjectGrantsStore<T extends GrantTable> {
  insertGrant(tx: Db, row: PgInsertValue<T>): Promise<T["$inferSelect"]>;
  findGrant(tx: Db, orgId: string, subjectId: string, grantId: string): Promise<T["$inferSelect"] | undefined>;
  findGrantToProject(tx: Db, subjectId: string, projectId: string): Promise<T["$inferSelect"] | undefined>;
  deleteGrant(tx: Db, orgId: string, grantId: string): Promise<void>;
  /**
   * One page of a resource's grants with their target projects. The list's logical name is the target
   * project's name, so the name filter and name sort read the project row (read-only, joined by the
   * grant's own foreign key).
   */
  listGrants(
    tx: Db,
    input: { orgId: string; subjectId: string; name?: string; page: { limit: number; cursor?: string; sort: Sort } },
  ): Promise<Array<{ grant: T["$inferSelect"]; project: GrantTargetRow }>>;
}

/** `subject` is the table's column naming the granted resource (`secret_id`, `skill_id`). */
export function projectGrantsStore<T extends GrantTable>(table: T, subject: PgColumn): ProjectGrantsStore<T> {
  // Drizzle types the statements for either kind of grant table; T says which one this store holds.
  const grants: GrantTable = table;
  return {
    async insertGrant(tx, row) {
      const [grant] = await tx.insert(grants).values(row as PgInsertValue<GrantTable>).returning();
      return grant!;
    },
    async findGrant(tx, orgId, subjectId, grantId) {
      const [grant] = await tx
        .select()
        .from(grants)
        .where(and(eq(grants.orgId, orgId), eq(subject, subjectId), eq(grants.id, grantId)));
      return grant;
    },
    async findGrantToProject(tx, subjectId, projectId) {
      const [grant] = await tx
        .select()
        .from(grants)
        .where(and(eq(subject, subjectId), eq(grants.targetProjectId, projectId)));
      return grant;
    },
    async deleteGrant(tx, orgId, grantId) {
      await tx.delete(grants).where(and(eq(grants.orgId, orgId), eq(grants.id, grantId)));
    },
    async listGrants(tx, input) {
      const ks = keyset(input.page.sort, { name: projects.name, created_at: grants.createdAt, id: grants.id }, input.page.cursor);
      const rows = await tx
        .select({ grant: grants, project: projects })
        .from(grants)
        .innerJoin(projects, and(eq(projects.orgId, grants.orgId), eq(projects.id, grants.targetProjectId)))
        .where(allOf(eq(grants.orgId, input.orgId), eq(subject, input.subjectId), nameMatches(projects.name, input.name), ks.where))
        .orderBy(...ks.orderBy)
        .limit(input.page.limit + 1);
      return rows;
    },
  };
}
