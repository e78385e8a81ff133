import type { Tx } from "../../platform/db/index.js";
import { conflict, forbidden, notFound } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import { requireOrg, requireProject, type OrgAccess } from "../orgs/access.js";
import { orgRoleAllows } from "../orgs/policy.js";
import { ownerAuthority, readableOwnerProjects, requireOwnerManage as requireOwnership, type Authority, type Owner, type OwnerRights } from "../orgs/ownership.js";
import type { OwnerKind } from "./schemas.js";
import * as store from "./store.js";

/*
 * Who may see and change a secret follows its owner (orgs/ownership.ts): org secrets need
 * org.secrets.list/manage, project secrets project.secrets.list/manage on the owning project, and user
 * secrets belong to their user alone (who must still be a member of the org).
 */
export const SECRET_RIGHTS: OwnerRights = {
  org: { read: "org.secrets.list", manage: "org.secrets.manage" },
  project: { read: "project.secrets.list", manage: "project.secrets.manage" },
  noun: "secret",
};

export const authorityOver = (tx: Tx, access: OrgAccess, secret: store.SecretRow): Promise<Authority> => ownerAuthority(tx, access, secret, SECRET_RIGHTS);

/**
 * The secret as the caller may use it: `read` it, `manage` it (see its grants), or `change` it. A secret
 * the caller cannot read is a 404 (its existence is not disclosed); one it can read but not manage is a
 * 403. A change also needs a tenant-managed secret (operator-provisioned ones are read-only here, 409)
 * and locks the row for the rest of the transaction.
 */
export async function requireSecret(
  tx: Tx,
  principal: Principal,
  orgId: string,
  secretId: string,
  need: "read" | "manage" | "change",
): Promise<{ access: OrgAccess; secret: store.SecretRow }> {
  const access = await requireOrg(tx, principal, orgId);
  const found = await store.findSecret(tx, orgId, secretId);
  if (!found) throw notFound("secret");
  const authority = await authorityOver(tx, access, found);
  if (!authority.read) throw notFound("secret");
  if (need === "read") return { access, secret: found };
  if (!authority.manage) throw forbidden("you do not have permission to manage this secret");
  if (need === "manage") return { access, secret: found };
  if (found.managementKind !== "tenant") throw conflict("this secret is managed by the operator and cannot be changed");
  const secret = await store.lockSecret(tx, orgId, secretId);
  if (!secret) throw notFound("secret");
  return { access, secret };
}

/** Checks that the caller may create secrets for `owner` and returns the owner as stored. */
export const requireOwnerManage = (tx: Tx, principal: Principal, orgId: string, owner: { kind: OwnerKind; projectId?: string }): Promise<Owner> =>
  requireOwnership(tx, principal, orgId, owner, SECRET_RIGHTS);

/**
 * Which owners' secrets the caller lists. Without an owner filter: the org's secrets if it holds
 * org.secrets.list, the secrets of every project where it holds project.secrets.list, and its own user
 * secrets. With one, only that slice, and asking for a slice it may not list is an error (404 for a
 * project it cannot read, 403 when it can read the org or project but not list its secrets).
 */
export async function requireListScope(
  tx: Tx,
  principal: Principal,
  orgId: string,
  filter: { ownerKind?: OwnerKind; ownerProjectId?: string },
): Promise<store.ListScope> {
  const none: store.ListScope = { org: false, projects: [], userId: null };
  if (filter.ownerKind === "org") {
    await requireOrg(tx, principal, orgId, "org.secrets.list");
    return { ...none, org: true };
  }
  if (filter.ownerKind === "project") {
    await requireProject(tx, principal, orgId, filter.ownerProjectId!, "project.secrets.list");
    return { ...none, projects: [filter.ownerProjectId!] };
  }
  const access = await requireOrg(tx, principal, orgId);
  const userId = principal.kind === "user" ? principal.userId : null;
  if (filter.ownerKind === "user") return { ...none, userId };
  return {
    org: orgRoleAllows(access.orgRole, "org.secrets.list"),
    projects: await readableOwnerProjects(tx, access, await store.ownerProjectIds(tx, orgId), "project.secrets.list"),
    userId,
  };
}

