import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import type { PgInsertValue } from "drizzle-orm/pg-core";
import { orgMemberships, orgs, projectMemberships, projects } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { notifyIn } from "../../runtime/signals.js";
import { allOf, keyset, nameMatches, type Sort } from "../../platform/http/lists.js";
import type { Principal } from "../../platform/http/auth.js";
import type { OrgRole, ProjectRole } from "./policy.js";

type Db = AppDb | Tx;
export type OrgRow = typeof orgs.$inferSelect;
export type ProjectRow = typeof projects.$inferSelect;
export type MembershipRow = typeof orgMemberships.$inferSelect;

export async function insertOrg(tx: Db, row: PgInsertValue<typeof orgs>): Promise<OrgRow | undefined> {
  const [org] = await tx.insert(orgs).values(row).onConflictDoNothing().returning();
  return org;
}

export async function findOrgByIdempotencyKey(tx: Db, userId: string, key: string): Promise<OrgRow | undefined> {
  const [org] = await tx.select().from(orgs).where(and(eq(orgs.createdByUserId, userId), eq(orgs.idempotencyKey, key)));
  return org;
}

export async function findOrg(tx: Db, orgId: string): Promise<OrgRow | undefined> {
  const [org] = await tx.select().from(orgs).where(eq(orgs.id, orgId));
  return org;
}

/** Locks the org row: every change to who may act in an org serializes here. */
export async function lockOrg(tx: Tx, orgId: string): Promise<OrgRow | undefined> {
  const [org] = await tx.select().from(orgs).where(eq(orgs.id, orgId)).for("update");
  return org;
}

export async function deleteOrg(tx: Db, orgId: string): Promise<void> {
  await deleteAgentsAndProfiles(tx, orgId, null);
  await deleteRestrictedReferences(tx, orgId);
  await tx.delete(orgs).where(eq(orgs.id, orgId));
}

/**
 * The org's rows whose references are RESTRICT (a grant's model, a model's provider config, a provider
 * config's or a pool's secret) go first, referencing rows before referenced ones. Left to the org's
 * cascade, a RESTRICT check fires as soon as its referenced row is deleted, and PostgreSQL runs the
 * cascade's triggers in the order of their names, which carry OIDs: whether the secret or the provider
 * config went first changed from one database to the next, and the deletion failed when the secret did.
 */
async function deleteRestrictedReferences(tx: Db, orgId: string): Promise<void> {
  await tx.execute(sql`DELETE FROM project_model_grants WHERE org_id = ${orgId}`);
  await tx.execute(sql`DELETE FROM configured_models WHERE org_id = ${orgId}`);
  await tx.execute(sql`DELETE FROM model_provider_configs WHERE org_id = ${orgId}`);
  await tx.execute(sql`DELETE FROM machine_pools WHERE org_id = ${orgId}`);
}

/**
 * A tenant's agents and agent profiles go first, in statements of their own. Left to the cascade from
 * the project, their rows could outlive the actors and configs they reference for a moment, and the
 * references' checks (NO ACTION) failed the whole deletion. Workers running one of the agents are told
 * to stop on commit; their records then find no agent.
 */
async function deleteAgentsAndProfiles(tx: Db, orgId: string, projectId: string | null): Promise<void> {
  const inScope = projectId === null ? sql`org_id = ${orgId}` : sql`org_id = ${orgId} AND project_id = ${projectId}`;
  await tx.execute(sql`WITH gone AS (DELETE FROM agents WHERE ${inScope} RETURNING id)
    SELECT count(${notifyIn.cancelOf(sql`l.agent_id`)}) FROM agent_runtime_locks l JOIN gone ON gone.id = l.agent_id`);
  await tx.execute(sql`DELETE FROM agent_profiles WHERE ${inScope}`);
}

export async function insertMembership(tx: Db, row: PgInsertValue<typeof orgMemberships>): Promise<MembershipRow> {
  const [membership] = await tx.insert(orgMemberships).values(row).returning();
  return membership!;
}

/** The caller's membership in an org: a user's own, or an org key's (only in the key's org). */
export async function findMembership(tx: Db, principal: Principal, orgId: string): Promise<MembershipRow | undefined> {
  const who =
    principal.kind === "user"
      ? eq(orgMemberships.userId, principal.userId)
      : eq(orgMemberships.orgApiKeyId, principal.keyId);
  const [row] = await tx.select().from(orgMemberships).where(and(eq(orgMemberships.orgId, orgId), who));
  return row;
}

export async function findUserMembership(tx: Db, orgId: string, userId: string): Promise<MembershipRow | undefined> {
  const [row] = await tx.select().from(orgMemberships).where(and(eq(orgMemberships.orgId, orgId), eq(orgMemberships.userId, userId)));
  return row;
}

export async function orgsOfUser(tx: Db, userId: string) {
  return tx
    .select({ id: orgs.id, name: orgs.name, role: orgMemberships.role, createdAt: orgs.createdAt })
    .from(orgMemberships)
    .innerJoin(orgs, eq(orgs.id, orgMemberships.orgId))
    .where(eq(orgMemberships.userId, userId))
    .orderBy(asc(orgs.createdAt), asc(orgs.id));
}

export async function insertProject(tx: Db, row: PgInsertValue<typeof projects>): Promise<ProjectRow | undefined> {
  const [project] = await tx.insert(projects).values(row).onConflictDoNothing().returning();
  return project;
}

export async function findProject(tx: Db, orgId: string, projectId: string): Promise<ProjectRow | undefined> {
  const [project] = await tx.select().from(projects).where(and(eq(projects.orgId, orgId), eq(projects.id, projectId)));
  return project;
}

export async function findProjectByName(tx: Db, orgId: string, name: string): Promise<ProjectRow | undefined> {
  const [project] = await tx.select().from(projects).where(and(eq(projects.orgId, orgId), eq(projects.name, name)));
  return project;
}

export async function findProjectByIdempotencyKey(tx: Db, orgId: string, key: string): Promise<ProjectRow | undefined> {
  const [project] = await tx
    .select()
    .from(projects)
    .where(and(eq(projects.orgId, orgId), eq(projects.idempotencyKey, key)));
  return project;
}

export async function firstProject(tx: Db, orgId: string): Promise<ProjectRow | undefined> {
  const [project] = await tx.select().from(projects).where(eq(projects.orgId, orgId)).orderBy(asc(projects.createdAt), asc(projects.id)).limit(1);
  return project;
}

export async function renameProject(tx: Db, orgId: string, projectId: string, name: string): Promise<ProjectRow | undefined> {
  const [project] = await tx
    .update(projects)
    .set({ name, updatedAt: dbNow })
    .where(and(eq(projects.orgId, orgId), eq(projects.id, projectId)))
    .returning();
  return project;
}

export async function deleteProject(tx: Db, orgId: string, projectId: string): Promise<void> {
  await deleteAgentsAndProfiles(tx, orgId, projectId);
  await tx.delete(projects).where(and(eq(projects.orgId, orgId), eq(projects.id, projectId)));
}

export async function explicitProjectRole(tx: Db, membershipId: string, projectId: string): Promise<ProjectRole | null> {
  const [row] = await tx
    .select({ role: projectMemberships.role })
    .from(projectMemberships)
    .where(and(eq(projectMemberships.orgMembershipId, membershipId), eq(projectMemberships.projectId, projectId)));
  return (row?.role as ProjectRole | undefined) ?? null;
}

/**
 * The ids of the org's projects, as a subquery: all of them, or those in which the membership holds one
 * of `roles` explicitly (none when `roles` is empty).
 */
export function projectIdsOf(orgId: string, grantedTo?: { membershipId: string; roles: readonly ProjectRole[] }): SQL {
  if (!grantedTo) return sql`SELECT ${projects.id} FROM ${projects} WHERE ${projects.orgId} = ${orgId}`;
  if (grantedTo.roles.length === 0) return sql`SELECT NULL::uuid WHERE false`;
  const roles = sql.join(grantedTo.roles.map((role) => sql`${role}`), sql`, `);
  return sql`SELECT ${projectMemberships.projectId} FROM ${projectMemberships}
    WHERE ${projectMemberships.orgId} = ${orgId} AND ${projectMemberships.orgMembershipId} = ${grantedTo.membershipId}
      AND ${projectMemberships.role} IN (${roles})`;
}

/**
 * Projects the member may read with the role that applies: every project for owners and admins, the
 * explicitly granted ones for everyone else.
 */
export async function listVisibleProjects(
  tx: Db,
  membership: { id: string; orgId: string; role: OrgRole },
  page: { limit: number; cursor?: string; sort: Sort; name?: string },
) {
  const implicitAdmin = membership.role === "owner" || membership.role === "admin";
  const ks = keyset(
    page.sort,
    { name: projects.name, created_at: projects.createdAt, updated_at: projects.updatedAt, id: projects.id },
    page.cursor,
  );
  const explicitRole = sql<string | null>`(
    SELECT pm.role FROM project_memberships pm
    WHERE pm.project_id = ${projects.id} AND pm.org_membership_id = ${membership.id})`;
  return tx
    .select({ project: projects, explicitRole })
    .from(projects)
    .where(
      allOf(
        eq(projects.orgId, membership.orgId),
        implicitAdmin ? undefined : sql`${explicitRole} IS NOT NULL`,
        nameMatches(projects.name, page.name),
        ks.where,
      ),
    )
    .orderBy(...ks.orderBy)
    .limit(page.limit + 1);
}
