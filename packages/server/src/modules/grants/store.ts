import { and, eq, sql } from "drizzle-orm";
import type { PgColumn, PgInsertValue } from "drizzle-orm/pg-core";
import { projectMachineGrants, projectMachinePoolGrants, projectModelGrants, projects, secretGrants, skillGrants } from "../../db/schema/index.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset, nameMatches, type PageRequest } from "../../platform/http/lists.js";

/*
 * Every grant in svc is a row that makes one resource (the grant's subject: a secret, a skill, a machine,
 * a machine pool, a configured model) available to one project of the same organization. Each kind has its
 * own table, with its own extra columns, but the statements that find, add and remove a grant are the
 * same; this store holds them once. Each kind's service keeps its rules: who may grant, and what else a
 * grant carries.
 */

type Db = AppDb | Tx;
/** The grants of owned resources (orgs/ownership.ts), listed from the resource's side. */
export type OwnedGrantTable = typeof secretGrants | typeof skillGrants;
export type GrantTable = OwnedGrantTable | typeof projectMachineGrants | typeof projectMachinePoolGrants | typeof projectModelGrants;
export type GrantTargetRow = typeof projects.$inferSelect;

/** Where a grant is looked up from: its subject's side (`/secrets/{id}/grants`) or its project's side (`/projects/{id}/…-grants`). */
export type GrantSide = { subjectId: string } | { projectId: string };

export interface GrantsStore<T extends GrantTable> {
  insertGrant(tx: Db, row: PgInsertValue<T>): Promise<T["$inferSelect"]>;
  /** The org's grant seen from one side; undefined when it belongs to another subject or project. */
  findGrant(tx: Db, orgId: string, side: GrantSide, grantId: string): Promise<T["$inferSelect"] | undefined>;
  /** As `findGrant`, row-locked for the rest of the transaction. */
  lockGrant(tx: Tx, orgId: string, side: GrantSide, grantId: string): Promise<T["$inferSelect"] | undefined>;
  /** The grant of `subjectId` to `projectId`, if any (one per pair, a unique constraint on every table). */
  findGrantBetween(tx: Db, subjectId: string, projectId: string): Promise<T["$inferSelect"] | undefined>;
  /** Whether any project holds a grant of the subject. */
  isGranted(tx: Db, orgId: string, subjectId: string): Promise<boolean>;
  deleteGrant(tx: Db, orgId: string, grantId: string): Promise<void>;
  /**
   * One page of a subject's grants with their target projects. The list's logical name is the target
   * project's name, so the name filter and name sort read the project row (read-only, joined by the
   * grant's own foreign key).
   */
  listGrantsOfSubject(
    tx: Db,
    input: { orgId: string; subjectId: string; name?: string; page: PageRequest },
  ): Promise<Array<{ grant: T["$inferSelect"]; project: GrantTargetRow }>>;
}

/** `subject` and `project` are the table's columns naming the granted resource and the project it is granted to. */
export function grantsStore<T extends GrantTable>(table: T, columns: { subject: PgColumn; project: PgColumn }): GrantsStore<T> {
  // Drizzle types each statement for the union of grant tables; T says which one this store holds.
  const grants: GrantTable = table;
  const { subject, project } = columns;
  const sideOf = (side: GrantSide) => ("subjectId" in side ? eq(subject, side.subjectId) : eq(project, side.projectId));
  const byId = (orgId: string, side: GrantSide, grantId: string) => and(eq(grants.orgId, orgId), sideOf(side), eq(grants.id, grantId));
  return {
    async insertGrant(tx, row) {
      const [grant] = await tx.insert(grants).values(row as PgInsertValue<GrantTable>).returning();
      return grant as T["$inferSelect"];
    },
    async findGrant(tx, orgId, side, grantId) {
      const [grant] = await tx.select().from(grants).where(byId(orgId, side, grantId));
      return grant as T["$inferSelect"] | undefined;
    },
    async lockGrant(tx, orgId, side, grantId) {
      const [grant] = await tx.select().from(grants).where(byId(orgId, side, grantId)).for("update");
      return grant as T["$inferSelect"] | undefined;
    },
    async findGrantBetween(tx, subjectId, projectId) {
      const [grant] = await tx.select().from(grants).where(and(eq(subject, subjectId), eq(project, projectId)));
      return grant as T["$inferSelect"] | undefined;
    },
    async isGranted(tx, orgId, subjectId) {
      const [row] = await tx
        .select({ one: sql<number>`1` })
        .from(grants)
        .where(and(eq(grants.orgId, orgId), eq(subject, subjectId)))
        .limit(1);
      return row !== undefined;
    },
    async deleteGrant(tx, orgId, grantId) {
      await tx.delete(grants).where(and(eq(grants.orgId, orgId), eq(grants.id, grantId)));
    },
    async listGrantsOfSubject(tx, input) {
      const ks = keyset(input.page.sort, { name: projects.name, created_at: grants.createdAt, id: grants.id }, input.page.cursor);
      const rows = await tx
        .select({ grant: grants, project: projects })
        .from(grants)
        .innerJoin(projects, and(eq(projects.orgId, grants.orgId), eq(projects.id, project)))
        .where(allOf(eq(grants.orgId, input.orgId), eq(subject, input.subjectId), nameMatches(projects.name, input.name), ks.where))
        .orderBy(...ks.orderBy)
        .limit(input.page.limit + 1);
      return rows as Array<{ grant: T["$inferSelect"]; project: GrantTargetRow }>;
    },
  };
}
