import type { Tx } from "../../platform/db/index.js";
import { conflict, forbidden, notFound } from "../../platform/errors.js";
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

/** The columns that say who owns a resource. */
export interface OwnedRow {
  id: string;
  ownerKind: string;
  ownerProjectId: string | null;
  ownerUserId: string | null;
}

/** One kind of owned resource: its rights, how its row is found and locked, and what else refuses a change. */
export interface OwnedKind<R extends OwnedRow> {
  rights: OwnerRights;
  find(tx: Tx, orgId: string, id: string): Promise<R | undefined>;
  lock(tx: Tx, orgId: string, id: string): Promise<R | undefined>;
  /** Why a resource the caller manages still may not be changed here (a 409), or undefined. */
  refuseChange?(row: R): string | undefined;
  /** The projects of the org that own at least one such resource. */
  ownerProjectIds(tx: Tx, orgId: string): Promise<string[]>;
}

/** The owners whose resources a caller may list: the org's, some or all projects', and one user's. */
export interface OwnerListScope {
  org: boolean;
  projects: "all" | string[];
  userId: string | null;
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

/**
 * The resource as the caller may use it: `read` it, `manage` it (see its grants), or `change` it. One the
 * caller cannot read is a 404 (its existence is not disclosed); one it can read but not manage is a 403.
 * `change` also passes the kind's own refusal (409) and locks the row for the rest of the transaction.
 */
export async function requireOwned<R extends OwnedRow>(
  tx: Tx,
  principal: Principal,
  orgId: string,
  id: string,
  need: "read" | "manage" | "change",
  kind: OwnedKind<R>,
): Promise<{ access: OrgAccess; row: R }> {
  const { noun } = kind.rights;
  const access = await requireOrg(tx, principal, orgId);
  const found = await kind.find(tx, orgId, id);
  if (!found) throw notFound(noun);
  const authority = await ownerAuthority(tx, access, found, kind.rights);
  if (!authority.read) throw notFound(noun);
  if (need === "read") return { access, row: found };
  if (!authority.manage) throw forbidden(`you do not have permission to manage this ${noun}`);
  if (need === "manage") return { access, row: found };
  const refusal = kind.refuseChange?.(found);
  if (refusal !== undefined) throw conflict(refusal);
  const row = await kind.lock(tx, orgId, id);
  if (!row) throw notFound(noun);
  return { access, row };
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

/**
 * Which owners' resources the caller lists. Without an owner filter: the org's if it holds the org read
 * right, those of every project where it holds the project read right, and its own user-owned ones. With
 * one, only that slice, and asking for a slice it may not list is an error (404 for a project it cannot
 * read, 403 when it can read the org or project but lacks the right).
 */
async function ownerListScope<R extends OwnedRow>(
  tx: Tx,
  principal: Principal,
  orgId: string,
  filter: { ownerKind?: OwnerKind; ownerProjectId?: string },
  kind: OwnedKind<R>,
): Promise<OwnerListScope> {
  const { rights } = kind;
  const none: OwnerListScope = { org: false, projects: [], userId: null };
  if (filter.ownerKind === "project") {
    await requireProject(tx, principal, orgId, filter.ownerProjectId!, rights.project.read);
    return { ...none, projects: [filter.ownerProjectId!] };
  }
  const access = await requireOrg(tx, principal, orgId, filter.ownerKind === "org" ? rights.org.read : "org.read");
  const userId = principal.kind === "user" ? principal.userId : null;
  if (filter.ownerKind === "org") return { ...none, org: true };
  if (filter.ownerKind === "user") return { ...none, userId };
  return {
    org: orgRoleAllows(access.orgRole, rights.org.read),
    projects: await readableOwnerProjects(tx, access, await kind.ownerProjectIds(tx, orgId), rights.project.read),
    userId,
  };
}

/** The checks that create and list resources of one kind, bound to it. */
export function ownedAuthority<R extends OwnedRow>(kind: OwnedKind<R>) {
  return {
    /** Checks that the caller may create resources for `owner` and returns the owner as stored. */
    requireOwnerManage: (tx: Tx, principal: Principal, orgId: string, owner: { kind: OwnerKind; projectId?: string }): Promise<Owner> =>
      requireOwnerManage(tx, principal, orgId, owner, kind.rights),
    /** Which owners' resources the caller lists (`ownerListScope`). */
    requireListScope: (tx: Tx, principal: Principal, orgId: string, filter: { ownerKind?: OwnerKind; ownerProjectId?: string }): Promise<OwnerListScope> =>
      ownerListScope(tx, principal, orgId, filter, kind),
  };
}
