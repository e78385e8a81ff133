import type { Database, Tx } from "../../platform/db/index.js";
import { isUniqueViolation } from "../../platform/db/index.js";
import { conflict, notFound } from "../../platform/errors.js";
import type { Principal, UserPrincipal } from "../../platform/http/auth.js";
import type { Sort } from "../../platform/http/lists.js";
import { newUuid } from "../../platform/ids.js";
import { normalizeEmail } from "../identity/service.js";
import * as identityStore from "../identity/store.js";
import type { Memberships } from "../orgs/members-service.js";
import * as store from "./store.js";

export type InvitationRole = "admin" | "member";

/** What invitations need to know about users: who has an email address, and a user's own address. */
export interface UserDirectory {
  findUser(tx: Tx, userId: string): Promise<{ normalizedEmail: string } | undefined>;
  findUserByEmail(tx: Tx, normalizedEmail: string): Promise<{ id: string } | undefined>;
}

/** Whether an email has a pending invitation, for sign-up under SVC_SIGNUP=invite (the identity module's InvitedEmails). */
export const invitedEmails = { isInvited: (tx: Tx, normalizedEmail: string) => store.existsForEmail(tx, normalizedEmail) };

const MEMBERSHIP_UNIQUE = "org_memberships_org_user";

/**
 * Org invitations. Managers invite an email address with an org role; the user who owns that address
 * (normalized) sees, accepts or declines it. Accepting, declining and revoking delete the invitation.
 */
export function createInvitationService(deps: { db: Database; memberships: Memberships; users?: UserDirectory }) {
  const { db, memberships: m } = deps;
  const users: UserDirectory = deps.users ?? identityStore;

  return {
    async create(principal: Principal, orgId: string, input: { email: string; role: InvitationRole }): Promise<store.InvitationWithOrg> {
      return db.tx(async (tx) => {
        const org = await m.lockOrg(tx, orgId);
        await m.requireOrg(tx, principal, orgId, "org.manage");
        const normalizedEmail = normalizeEmail(input.email);
        const user = await users.findUserByEmail(tx, normalizedEmail);
        if (user && (await m.findUserMembership(tx, orgId, user.id))) throw conflict("this person is already a member of the organization");
        if (await store.findByOrgEmail(tx, orgId, normalizedEmail)) throw alreadyInvited();
        const invitation = await store.insertInvitation(tx, {
          id: newUuid(),
          orgId,
          email: input.email.trim(),
          normalizedEmail,
          orgRole: input.role,
          invitedByUserId: principal.kind === "user" ? principal.userId : null,
        });
        // A concurrent invitation of the same address won the unique constraint.
        if (!invitation) throw alreadyInvited();
        return { ...invitation, orgName: org!.name };
      });
    },

    async listForOrg(principal: Principal, orgId: string, page: { limit: number; cursor?: string; sort: Sort }) {
      return db.tx(async (tx) => {
        await m.requireOrg(tx, principal, orgId, "org.manage");
        return store.listForOrg(tx, orgId, page);
      });
    },

    async revoke(principal: Principal, orgId: string, invitationId: string): Promise<void> {
      await db.tx(async (tx) => {
        await m.requireOrg(tx, principal, orgId, "org.manage");
        if (!(await store.findInOrg(tx, orgId, invitationId))) throw notFound("invitation");
        await store.deleteInvitation(tx, invitationId);
      });
    },

    /** The caller's pending invitations, oldest first. */
    async listMine(principal: UserPrincipal, page: { limit: number; cursor?: string; sort: Sort }) {
      return db.tx(async (tx) => store.listForEmail(tx, await emailOf(tx, principal), page));
    },

    /** Joins the org with the invited role and consumes the invitation, in one transaction. */
    async accept(principal: UserPrincipal, invitationId: string): Promise<store.InvitationWithOrg> {
      try {
        return await db.tx(async (tx) => {
          const email = await emailOf(tx, principal);
          const found = await store.findForEmail(tx, invitationId, email);
          if (!found) throw notFound("invitation");
          await m.lockOrg(tx, found.orgId);
          // Re-read under the lock: a concurrent accept, decline or revoke may have consumed it.
          const invitation = await store.findForEmail(tx, invitationId, email);
          if (!invitation) throw notFound("invitation");
          if (await m.findUserMembership(tx, invitation.orgId, principal.userId)) throw alreadyMember();
          await m.addUser(tx, invitation.orgId, principal.userId, invitation.orgRole as InvitationRole);
          await store.deleteInvitation(tx, invitation.id);
          return invitation;
        });
      } catch (err) {
        if (isUniqueViolation(err, MEMBERSHIP_UNIQUE)) throw alreadyMember();
        throw err;
      }
    },

    async decline(principal: UserPrincipal, invitationId: string): Promise<store.InvitationWithOrg> {
      return db.tx(async (tx) => {
        const invitation = await store.findForEmail(tx, invitationId, await emailOf(tx, principal));
        if (!invitation || !(await store.deleteInvitation(tx, invitation.id))) throw notFound("invitation");
        return invitation;
      });
    },
  };

  async function emailOf(tx: Tx, principal: UserPrincipal): Promise<string> {
    const user = await users.findUser(tx, principal.userId);
    if (!user) throw notFound("user");
    return user.normalizedEmail;
  }
}

export type InvitationService = ReturnType<typeof createInvitationService>;

function alreadyInvited() {
  return conflict("this email address already has a pending invitation to the organization");
}

function alreadyMember() {
  return conflict("you are already a member of this organization");
}
