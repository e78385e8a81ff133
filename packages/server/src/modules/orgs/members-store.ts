import { and, asc, eq, inArray, isNotNull, sql } from "drizzle-orm";
import { orgMemberships, orgs, projectMemberships, projects, users } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset, nameMatches, type Sort } from "../../platform/http/lists.js";
import type { OrgRole, ProjectRole } from "./policy.js";
import type { MembershipRow } from "./store.js";

type Db = AppDb | Tx;

export interface MemberRow {
  membershipId: string;
  userId: string;
  email: string;
  displayName: string;
  role: string;
  createdAt: Date;
}

export interface GrantRow {
  projectId: string;
  projectName: string;
  role: string;
  createdAt: Date;
}

/**
 * The human members of an org (org keys are listed by their own module). The one read that joins
 * `users`: the list filters, sorts and pages by display name, which only one query can do consistently.
 */
export async function listMembers(tx: Db, orgId: string, page: { limit: number; cursor?: string; sort: Sort; name?: string }) {
  const ks = keyset(page.sort, { name: users.displayName, created_at: orgMemberships.createdAt, id: orgMemberships.id }, page.cursor);
  const rows: MemberRow[] = await tx
    .select({
      membershipId: orgMemberships.id,
      userId: users.id,
      email: users.email,
      displayName: users.displayName,
      role: orgMemberships.role,
      createdAt: orgMemberships.createdAt,
    })
    .from(orgMemberships)
    .innerJoin(users, eq(users.id, orgMemberships.userId))
    .where(allOf(eq(orgMemberships.orgId, orgId), isNotNull(orgMemberships.userId), nameMatches(users.displayName, page.name), ks.where))
    .orderBy(...ks.orderBy)
    .limit(page.limit + 1);
  return rows;
}

export async function countOwners(tx: Db, orgId: string): Promise<number> {
  const [row] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(orgMemberships)
    .where(and(eq(orgMemberships.orgId, orgId), eq(orgMemberships.role, "owner")));
  return row?.n ?? 0;
}

/** Locks the rows of the orgs `userId` owns, in id order (so two such locks cannot deadlock); their ids. */
export async function lockOrgsOwnedBy(tx: Tx, userId: string): Promise<string[]> {
  const owned = tx
    .select({ orgId: orgMemberships.orgId })
    .from(orgMemberships)
    .where(and(eq(orgMemberships.userId, userId), eq(orgMemberships.role, "owner")));
  const rows = await tx.select({ id: orgs.id }).from(orgs).where(inArray(orgs.id, owned)).orderBy(asc(orgs.id)).for("update");
  return rows.map((r) => r.id);
}

/** Of `orgIds`, the orgs whose only owner is `userId`, by name. */
export async function orgsOwnedOnlyBy(tx: Db, orgIds: string[], userId: string): Promise<Array<{ id: string; name: string }>> {
  return tx
    .select({ id: orgs.id, name: orgs.name })
    .from(orgMemberships)
    .innerJoin(orgs, eq(orgs.id, orgMemberships.orgId))
    .where(and(inArray(orgMemberships.orgId, orgIds), eq(orgMemberships.role, "owner")))
    .groupBy(orgs.id, orgs.name)
    .having(sql`count(*) = 1 AND bool_and(${orgMemberships.userId} = ${userId})`)
    .orderBy(asc(orgs.name), asc(orgs.id));
}

export async function findKeyMembership(tx: Db, orgId: string, keyId: string): Promise<MembershipRow | undefined> {
  const [row] = await tx
    .select()
    .from(orgMemberships)
    .where(and(eq(orgMemberships.orgId, orgId), eq(orgMemberships.orgApiKeyId, keyId)));
  return row;
}

export async function updateMembershipRole(tx: Db, membershipId: string, role: OrgRole): Promise<MembershipRow> {
  const [row] = await tx
    .update(orgMemberships)
    .set({ role, updatedAt: dbNow })
    .where(eq(orgMemberships.id, membershipId))
    .returning();
  return row!;
}

/** Deletes a membership; its project memberships go with it (foreign key cascade). */
export async function deleteMembership(tx: Db, membershipId: string): Promise<void> {
  await tx.delete(orgMemberships).where(eq(orgMemberships.id, membershipId));
}

/** Explicit project grants of one membership, by project name. */
export async function listProjectGrants(tx: Db, membershipId: string): Promise<GrantRow[]> {
  return tx
    .select({
      projectId: projectMemberships.projectId,
      projectName: projects.name,
      role: projectMemberships.role,
      createdAt: projectMemberships.createdAt,
    })
    .from(projectMemberships)
    .innerJoin(projects, and(eq(projects.orgId, projectMemberships.orgId), eq(projects.id, projectMemberships.projectId)))
    .where(eq(projectMemberships.orgMembershipId, membershipId))
    .orderBy(asc(sql`${projects.name} COLLATE "C"`), asc(projects.id));
}

/** Creates or replaces a grant; a replaced grant keeps its creation time. */
export async function upsertProjectGrant(
  tx: Db,
  grant: { orgId: string; projectId: string; membershipId: string; role: ProjectRole },
): Promise<{ role: string; createdAt: Date }> {
  const [row] = await tx
    .insert(projectMemberships)
    .values({ orgId: grant.orgId, projectId: grant.projectId, orgMembershipId: grant.membershipId, role: grant.role })
    .onConflictDoUpdate({
      target: [projectMemberships.projectId, projectMemberships.orgMembershipId],
      set: { role: grant.role, updatedAt: dbNow },
    })
    .returning({ role: projectMemberships.role, createdAt: projectMemberships.createdAt });
  return row!;
}

export async function deleteProjectGrant(tx: Db, membershipId: string, projectId: string): Promise<boolean> {
  const rows = await tx
    .delete(projectMemberships)
    .where(and(eq(projectMemberships.orgMembershipId, membershipId), eq(projectMemberships.projectId, projectId)))
    .returning({ projectId: projectMemberships.projectId });
  return rows.length > 0;
}
