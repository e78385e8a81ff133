import type { Tx, AppDb } from "../../platform/db/index.js";
import { forbidden, notFound } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import {
  effectiveProjectRole,
  orgRoleAllows,
  projectRoleAllows,
  type OrgAction,
  type OrgRole,
  type ProjectAction,
  type ProjectRole,
} from "./policy.js";
import * as store from "./store.js";

export interface OrgAccess {
  principal: Principal;
  orgId: string;
  membershipId: string;
  orgRole: OrgRole;
}

export interface ProjectAccess extends OrgAccess {
  project: store.ProjectRow;
  projectRole: ProjectRole;
}

/**
 * Authorization for every module. Not a member, or not able to read the project: 404, so callers
 * cannot learn what exists. Able to see it but not to act: 403.
 */
export async function requireOrg(tx: Tx | AppDb, principal: Principal, orgId: string, action: OrgAction = "org.read"): Promise<OrgAccess> {
  const membership = await store.findMembership(tx, principal, orgId);
  if (!membership) throw notFound("organization");
  const access: OrgAccess = { principal, orgId, membershipId: membership.id, orgRole: membership.role as OrgRole };
  if (!orgRoleAllows(access.orgRole, action)) throw forbidden();
  return access;
}

export async function requireProject(
  tx: Tx | AppDb,
  principal: Principal,
  orgId: string,
  projectId: string,
  action: ProjectAction = "project.read",
): Promise<ProjectAccess> {
  const access = await requireOrg(tx, principal, orgId);
  const project = await store.findProject(tx, orgId, projectId);
  if (!project) throw notFound("project");
  const role = effectiveProjectRole(access.orgRole, await store.explicitProjectRole(tx, access.membershipId, projectId));
  if (!role) throw notFound("project");
  if (!projectRoleAllows(role, action)) throw forbidden();
  return { ...access, project, projectRole: role };
}

/** The project role a principal holds without throwing; null when it cannot read the project. */
export async function projectRoleOf(tx: Tx | AppDb, access: OrgAccess, projectId: string): Promise<ProjectRole | null> {
  return effectiveProjectRole(access.orgRole, await store.explicitProjectRole(tx, access.membershipId, projectId));
}
