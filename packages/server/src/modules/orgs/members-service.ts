import type { Database, Tx } from "../../platform/db/index.js";
import { conflict, forbidden, notFound } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import type { Sort } from "../../platform/http/lists.js";
import { encodeId, newUuid } from "../../platform/ids.js";
import { markOrgLocked } from "./access-cache.js";
import { lockOrgForChange, requireOrg, requireProject, type OrgAccess, type ProjectAccess } from "./access.js";
import * as ms from "./members-store.js";
import { orgRoleAllows, type OrgRole, type ProjectRole } from "./policy.js";
import * as store from "./store.js";

export type { GrantRow, MemberRow } from "./members-store.js";

/**
 * Membership plumbing for other modules (org keys, invitations), used inside their own transactions.
 * Callers lock the org row (`lockOrg`) before changing who belongs to it.
 */
export const memberships = {
  lockOrg: (tx: Tx, orgId: string) => lockOrgForChange(tx, orgId),
  findOrg: (tx: Tx, orgId: string) => store.findOrg(tx, orgId),
  requireOrg,
  requireProject,
  findUserMembership: (tx: Tx, orgId: string, userId: string) => store.findUserMembership(tx, orgId, userId),
  findKeyMembership: (tx: Tx, orgId: string, keyId: string) => ms.findKeyMembership(tx, orgId, keyId),
  addUser: (tx: Tx, orgId: string, userId: string, role: OrgRole) =>
    store.insertMembership(tx, { id: newUuid(), orgId, userId, role }),
  addKey: (tx: Tx, orgId: string, keyId: string, role: Exclude<OrgRole, "owner">) =>
    store.insertMembership(tx, { id: newUuid(), orgId, orgApiKeyId: keyId, role }),
  setRole: (tx: Tx, membershipId: string, role: OrgRole) => ms.updateMembershipRole(tx, membershipId, role),
  remove: (tx: Tx, membershipId: string) => ms.deleteMembership(tx, membershipId),
  grants: (tx: Tx, membershipId: string) => ms.listProjectGrants(tx, membershipId),
  setGrant: (tx: Tx, access: ProjectAccess, membershipId: string, role: ProjectRole) => setGrant(tx, access, membershipId, role),
  removeGrant: (tx: Tx, membershipId: string, projectId: string) => removeGrant(tx, membershipId, projectId),
};

export type Memberships = typeof memberships;

/** How many orgs a last-owner refusal names; the rest are counted. */
const NAMED_ORGS = 5;

/**
 * For the deletion of a user's account (identity's `AccountHolder`): locks every org the user owns, as
 * any change to who may act in an org does, and refuses while the user is the last owner of one, the
 * reference's rule. The memberships themselves go with the user row.
 */
export async function refuseLastOwner(tx: Tx, userId: string): Promise<void> {
  const owned = await ms.lockOrgsOwnedBy(tx, userId);
  if (owned.length === 0) return;
  for (const orgId of owned) markOrgLocked(tx, orgId);
  const stranded = await ms.orgsOwnedOnlyBy(tx, owned, userId);
  if (stranded.length === 0) return;
  const named = stranded.slice(0, NAMED_ORGS).map((org) => `"${org.name}" (${encodeId("org", org.id)})`);
  if (stranded.length > NAMED_ORGS) named.push(`${stranded.length - NAMED_ORGS} more`);
  throw conflict(`you are the last owner of ${named.join(", ")}; make another member an owner or delete the organization first`);
}

/**
 * A module whose rows go with a membership (a user's secrets in the org, by foreign key cascade) and that
 * must refuse a member's removal while others still rely on them: it throws the refusal (a 409).
 */
export type MemberHolder = (tx: Tx, orgId: string, userId: string) => Promise<void>;

export function createMemberService(deps: { db: Database; holders?: readonly MemberHolder[] }) {
  const { db, holders = [] } = deps;

  return {
    async listMembers(principal: Principal, orgId: string, page: { limit: number; cursor?: string; sort: Sort; name?: string }) {
      return db.tx(async (tx) => {
        await requireOrg(tx, principal, orgId);
        return ms.listMembers(tx, orgId, page);
      });
    },

    /** Owners alone make owners or change an owner's role; the last owner cannot step down. */
    async updateMemberRole(principal: Principal, orgId: string, userId: string, role: OrgRole) {
      return db.tx(async (tx) => {
        await lockOrgForChange(tx, orgId);
        const access = await requireOrg(tx, principal, orgId, "org.manage");
        const target = await store.findUserMembership(tx, orgId, userId);
        if (!target) throw notFound("member");
        if ((target.role === "owner" || role === "owner") && !orgRoleAllows(access.orgRole, "org.own")) {
          throw forbidden("only an owner can make someone an owner or change an owner's role");
        }
        if (target.role === role) return target;
        if (target.role === "owner") await requireAnotherOwner(tx, orgId, "step down");
        return ms.updateMembershipRole(tx, target.id, role);
      });
    },

    /**
     * Managers remove members (owners only by owners); anyone may leave, except the last owner, and no one
     * while the member's user secrets are in use (`MemberHolder`).
     */
    async removeMember(principal: Principal, orgId: string, userId: string): Promise<void> {
      await db.tx(async (tx) => {
        await lockOrgForChange(tx, orgId);
        const access = await requireOrg(tx, principal, orgId);
        const self = isSelf(principal, userId);
        if (!self && !orgRoleAllows(access.orgRole, "org.manage")) throw forbidden();
        const target = await store.findUserMembership(tx, orgId, userId);
        if (!target) throw notFound("member");
        if (target.role === "owner") {
          if (!self && !orgRoleAllows(access.orgRole, "org.own")) throw forbidden("only an owner can remove an owner");
          await requireAnotherOwner(tx, orgId, "leave");
        }
        for (const holder of holders) await holder(tx, orgId, userId);
        await ms.deleteMembership(tx, target.id);
      });
    },

    /** A member's explicit project grants: visible to org managers and to the member themself. */
    async listMemberGrants(principal: Principal, orgId: string, userId: string) {
      return db.tx(async (tx) => {
        const access = await requireOrg(tx, principal, orgId);
        const target = await memberForAccess(tx, access, userId);
        return ms.listProjectGrants(tx, target.id);
      });
    },

    async setMemberGrant(principal: Principal, orgId: string, userId: string, projectId: string, role: ProjectRole) {
      return db.tx(async (tx) => {
        await lockOrgForChange(tx, orgId);
        const access = await requireProject(tx, principal, orgId, projectId, "project.access_manage");
        const target = await store.findUserMembership(tx, orgId, userId);
        if (!target) throw notFound("member");
        return setGrant(tx, access, target.id, role);
      });
    },

    async removeMemberGrant(principal: Principal, orgId: string, userId: string, projectId: string): Promise<void> {
      await db.tx(async (tx) => {
        await lockOrgForChange(tx, orgId);
        await requireProject(tx, principal, orgId, projectId, "project.access_manage");
        const target = await store.findUserMembership(tx, orgId, userId);
        if (!target) throw notFound("member");
        await removeGrant(tx, target.id, projectId);
      });
    },
  };

  async function memberForAccess(tx: Tx, access: OrgAccess, userId: string) {
    if (!isSelf(access.principal, userId) && !orgRoleAllows(access.orgRole, "org.manage")) throw forbidden();
    const target = await store.findUserMembership(tx, access.orgId, userId);
    if (!target) throw notFound("member");
    return target;
  }
}

export type MemberService = ReturnType<typeof createMemberService>;

function isSelf(principal: Principal, userId: string): boolean {
  return principal.kind === "user" && principal.userId === userId;
}

async function requireAnotherOwner(tx: Tx, orgId: string, action: string): Promise<void> {
  if ((await ms.countOwners(tx, orgId)) <= 1) {
    throw conflict(`the last owner cannot ${action}; make another member an owner first`);
  }
}

async function setGrant(tx: Tx, access: ProjectAccess, membershipId: string, role: ProjectRole): Promise<ms.GrantRow> {
  const row = await ms.upsertProjectGrant(tx, { orgId: access.orgId, projectId: access.project.id, membershipId, role });
  return { projectId: access.project.id, projectName: access.project.name, role: row.role, createdAt: row.createdAt };
}

async function removeGrant(tx: Tx, membershipId: string, projectId: string): Promise<void> {
  if (!(await ms.deleteProjectGrant(tx, membershipId, projectId))) throw notFound("project role grant");
}
