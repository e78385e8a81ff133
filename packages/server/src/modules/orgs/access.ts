import type { SQL } from "drizzle-orm";
import type { Tx, AppDb } from "../../platform/db/index.js";
import { forbidden, notFound } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import {
  effectiveProjectRole,
  orgRoleAllows,
  PROJECT_ROLES,
  projectRoleAllows,
  type OrgAction,
  type OrgRole,
  type ProjectAction,
  type ProjectRole,
} from "./policy.js";
import * as store from "./store.js";
import { cachedOrgFacts, cachedProjectFacts, forgetOrg, markOrgLocked, type ProjectFacts } from "./access-cache.js";

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
 * cannot learn what exists. Able to see it but not to act: 403. The facts come from a short-lived
 * per-process cache (`access-cache.ts`), except in a transaction that locked the org row.
 */
export async function requireOrg(tx: Tx | AppDb, principal: Principal, orgId: string, action: OrgAction = "org.read"): Promise<OrgAccess> {
  const facts = await cachedOrgFacts(tx, principal, orgId, async () => {
    const membership = await store.findMembership(tx, principal, orgId);
    return membership && { orgId, membershipId: membership.id, orgRole: membership.role as OrgRole };
  });
  if (!facts) throw notFound("organization");
  const access: OrgAccess = { principal, orgId, membershipId: facts.membershipId, orgRole: facts.orgRole };
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
  const facts = await cachedProjectFacts(tx, principal, orgId, projectId, () => loadProjectFacts(tx, principal, orgId, projectId));
  // `loadProjectFacts` throws the 404s; a value is always a project the principal's org membership can name.
  if (!facts) throw notFound("project");
  const role = effectiveProjectRole(facts.orgRole, facts.explicitRole);
  if (!role) throw notFound("project");
  if (!projectRoleAllows(role, action)) throw forbidden();
  return { principal, orgId, membershipId: facts.membershipId, orgRole: facts.orgRole, project: facts.project, projectRole: role };
}

/** The org-level refusal ("organization" 404, 403) comes first, as it did when the org was checked on its own. */
async function loadProjectFacts(tx: Tx | AppDb, principal: Principal, orgId: string, projectId: string): Promise<ProjectFacts | undefined> {
  const access = await requireOrg(tx, principal, orgId);
  const project = await store.findProject(tx, orgId, projectId);
  if (!project) throw notFound("project");
  const explicitRole = await store.explicitProjectRole(tx, access.membershipId, projectId);
  return { orgId, membershipId: access.membershipId, orgRole: access.orgRole, project, explicitRole };
}

/** Cached access facts include project rows; a renamed or deleted project drops its org's in this process. */
export function forgetOrgAfterCommit(tx: Tx, orgId: string): void {
  tx.afterCommit(() => forgetOrg(orgId));
}

/** Locks the org row for a change to who may act in it; see `markOrgLocked` for what that implies. */
export async function lockOrgForChange(tx: Tx, orgId: string): Promise<store.OrgRow | undefined> {
  const org = await store.lockOrg(tx, orgId);
  markOrgLocked(tx, orgId);
  return org;
}

/** The project role a principal holds without throwing; null when it cannot read the project. */
export async function projectRoleOf(tx: Tx | AppDb, access: OrgAccess, projectId: string): Promise<ProjectRole | null> {
  return effectiveProjectRole(access.orgRole, await store.explicitProjectRole(tx, access.membershipId, projectId));
}

/**
 * The org's projects in which the caller's role allows `action`, as a subquery of project ids for reads
 * across projects (the org overview): the projects `requireProject` would allow, decided in SQL at once.
 */
export function projectsAllowing(access: OrgAccess, action: ProjectAction): SQL {
  // An implicit role (owners, admins) applies on every project and explicit grants do not count beside it.
  const implicit = effectiveProjectRole(access.orgRole, null);
  if (implicit !== null && projectRoleAllows(implicit, action)) return store.projectIdsOf(access.orgId);
  const roles = implicit !== null ? [] : PROJECT_ROLES.filter((role) => projectRoleAllows(role, action));
  return store.projectIdsOf(access.orgId, { membershipId: access.membershipId, roles });
}
