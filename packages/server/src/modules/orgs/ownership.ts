import type { Tx } from "../../platform/db/index.js";
import { forbidden } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import { projectRoleOf, requireOrg, requireProject, type OrgAccess } from "./access.js";
import { effectiveProjectRole, orgRoleAllows, projectRoleAllows, type OrgAction, type ProjectAction } from "./policy.js";

/*
 * Resources owned by the organization, one of its projects or one of its users (secrets, skills): who
 * may read and manage one follows its owner. Each kind names the actions that mean reading and managing
 * it at the org and at a project; a user-owned one belongs to its user alone, and an org API key never
 * owns one.
 */

export type OwnerKind = "org" | "project" | "user";

/** An owner as stored: exactly one of the ids is set for project and user owners, none for org. */
export interface Owner {
  kind: OwnerKind;
  projectId: string | null;
  userId: string | null;
}

/** The actions that read and manage one kind of owned resource. */
export interface OwnerRights {
  org: { read: OrgAction; manage: OrgAction };
  project: { read: ProjectAction; manage: ProjectAction };
  /** What it is called in refusals: "secret", "skill". */
  noun: string;
}

export interface Authority {
  read: boolean;
  manage: boolean;
}

export async function ownerAuthority(
  tx: Tx,
  access: OrgAccess,
  owned: { ownerKind: string; ownerProjectId: string | null; ownerUserId: string | null },
  rights: OwnerRights,
): Promise<Authority> {
  if (owned.ownerKind === "org") {
    return { read: orgRoleAllows(access.orgRole, rights.org.read), manage: orgRoleAllows(access.orgRole, rights.org.manage) };
  }
  if (owned.ownerKind === "project") {
    const role = await projectRoleOf(tx, access, owned.ownerProjectId!);
    return { read: projectRoleAllows(role, rights.project.read), manage: projectRoleAllows(role, rights.project.manage) };
  }
  const own = access.principal.kind === "user" && access.principal.userId === owned.ownerUserId;
  return { read: own, manage: own };
}

/** Checks that the caller may create resources for `owner` and returns the owner as stored. */
export async function requireOwnerManage(
  tx: Tx,
  principal: Principal,
  orgId: string,
  owner: { kind: OwnerKind; projectId?: string },
  rights: OwnerRights,
): Promise<Owner> {
  if (owner.kind === "org") {
    await requireOrg(tx, principal, orgId, rights.org.manage);
    return { kind: "org", projectId: null, userId: null };
  }
  if (owner.kind === "project") {
    await requireProject(tx, principal, orgId, owner.projectId!, rights.project.manage);
    return { kind: "project", projectId: owner.projectId!, userId: null };
  }
  await requireOrg(tx, principal, orgId);
  if (principal.kind !== "user") throw forbidden(`user-owned ${rights.noun}s belong to users; an organization API key cannot own one`);
  return { kind: "user", projectId: null, userId: principal.userId };
}

/**
 * Of the projects that own such resources, those whose ones the caller may read: all of them for org
 * owners and admins, else checked project by project through the org module's access rules.
 */
export async function readableOwnerProjects(tx: Tx, access: OrgAccess, ownerProjectIds: string[], read: ProjectAction): Promise<"all" | string[]> {
  if (projectRoleAllows(effectiveProjectRole(access.orgRole, null), read)) return "all";
  const readable: string[] = [];
  for (const projectId of ownerProjectIds) {
    if (projectRoleAllows(await projectRoleOf(tx, access, projectId), read)) readable.push(projectId);
  }
  return readable;
}
