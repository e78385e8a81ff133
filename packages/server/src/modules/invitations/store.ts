import { and, eq } from "drizzle-orm";
import type { PgInsertValue } from "drizzle-orm/pg-core";
import { orgInvitations, orgs } from "../../db/schema/index.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset, type Sort } from "../../platform/http/lists.js";

type Db = AppDb | Tx;
export type InvitationRow = typeof orgInvitations.$inferSelect;
/** An invitation with the name of its org, as every response shows it. */
export type InvitationWithOrg = InvitationRow & { orgName: string };

const withOrgName = {
  id: orgInvitations.id,
  orgId: orgInvitations.orgId,
  email: orgInvitations.email,
  normalizedEmail: orgInvitations.normalizedEmail,
  orgRole: orgInvitations.orgRole,
  invitedByUserId: orgInvitations.invitedByUserId,
  createdAt: orgInvitations.createdAt,
  orgName: orgs.name,
};

export async function insertInvitation(tx: Db, row: PgInsertValue<typeof orgInvitations>): Promise<InvitationRow | undefined> {
  const [invitation] = await tx.insert(orgInvitations).values(row).onConflictDoNothing().returning();
  return invitation;
}

export async function findByOrgEmail(tx: Db, orgId: string, normalizedEmail: string): Promise<InvitationRow | undefined> {
  const [row] = await tx
    .select()
    .from(orgInvitations)
    .where(and(eq(orgInvitations.orgId, orgId), eq(orgInvitations.normalizedEmail, normalizedEmail)));
  return row;
}

export async function findInOrg(tx: Db, orgId: string, invitationId: string): Promise<InvitationRow | undefined> {
  const [row] = await tx
    .select()
    .from(orgInvitations)
    .where(and(eq(orgInvitations.orgId, orgId), eq(orgInvitations.id, invitationId)));
  return row;
}

/** An invitation addressed to `normalizedEmail`; anyone else's is as good as missing. */
export async function findForEmail(tx: Db, invitationId: string, normalizedEmail: string): Promise<InvitationWithOrg | undefined> {
  const [row] = await tx
    .select(withOrgName)
    .from(orgInvitations)
    .innerJoin(orgs, eq(orgs.id, orgInvitations.orgId))
    .where(and(eq(orgInvitations.id, invitationId), eq(orgInvitations.normalizedEmail, normalizedEmail)));
  return row;
}

export async function listForOrg(tx: Db, orgId: string, page: { limit: number; cursor?: string; sort: Sort }): Promise<InvitationWithOrg[]> {
  const ks = keyset(page.sort, { created_at: orgInvitations.createdAt, id: orgInvitations.id }, page.cursor);
  return tx
    .select(withOrgName)
    .from(orgInvitations)
    .innerJoin(orgs, eq(orgs.id, orgInvitations.orgId))
    .where(allOf(eq(orgInvitations.orgId, orgId), ks.where))
    .orderBy(...ks.orderBy)
    .limit(page.limit + 1);
}

export async function listForEmail(
  tx: Db,
  normalizedEmail: string,
  page: { limit: number; cursor?: string; sort: Sort },
): Promise<InvitationWithOrg[]> {
  const ks = keyset(page.sort, { created_at: orgInvitations.createdAt, id: orgInvitations.id }, page.cursor);
  return tx
    .select(withOrgName)
    .from(orgInvitations)
    .innerJoin(orgs, eq(orgs.id, orgInvitations.orgId))
    .where(allOf(eq(orgInvitations.normalizedEmail, normalizedEmail), ks.where))
    .orderBy(...ks.orderBy)
    .limit(page.limit + 1);
}

export async function existsForEmail(tx: Db, normalizedEmail: string): Promise<boolean> {
  const [row] = await tx.select({ id: orgInvitations.id }).from(orgInvitations).where(eq(orgInvitations.normalizedEmail, normalizedEmail)).limit(1);
  return row !== undefined;
}

export async function deleteInvitation(tx: Db, invitationId: string): Promise<boolean> {
  const rows = await tx.delete(orgInvitations).where(eq(orgInvitations.id, invitationId)).returning({ id: orgInvitations.id });
  return rows.length > 0;
}
