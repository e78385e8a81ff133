import type { Tx } from "../../platform/db/index.js";
import { forbidden, notFound } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import { projectRoleOf, requireOrg, requireProject, type OrgAccess } from "../orgs/access.js";
import { effectiveProjectRole, orgRoleAllows, projectRoleAllows } from "../orgs/policy.js";
import type { OwnerKind } from "./schemas.js";
import * as store from "./store.js";

/*
 * Who may see and change a skill follows its owner, as for secrets (modules/secrets/authority.ts), with
 * the project's ordinary rights instead of the secret rights: a skill holds instructions, not
 * credentials. Org skills are read by every member and managed with org.manage; project skills are read
 * with project.read and managed with project.manage; user skills belong to their user alone.
 */

export interface Authority {
  read: boolean;
  manage: boolean;
}

export async function authorityOver(tx: Tx, access: OrgAccess, skill: store.SkillRow): Promise<Authority> {
  if (skill.ownerKind === "org") {
    return { read: orgRoleAllows(access.orgRole, "org.read"), manage: orgRoleAllows(access.orgRole, "org.manage") };
  }
  if (skill.ownerKind === "project") {
    const role = await projectRoleOf(tx, access, skill.ownerProjectId!);
    return { read: projectRoleAllows(role, "project.read"), manage: projectRoleAllows(role, "project.manage") };
  }
  const own = access.principal.kind === "user" && access.principal.userId === skill.ownerUserId;
  return { read: own, manage: own };
}

/**
 * The skill as the caller may use it. One it cannot read is a 404 (its existence is not disclosed); one
 * it can read but not manage is a 403. `change` also locks the row for the rest of the transaction.
 */
export async function requireSkill(
  tx: Tx,
  principal: Principal,
  orgId: string,
  skillId: string,
  need: "read" | "manage" | "change",
): Promise<{ access: OrgAccess; skill: store.SkillRow }> {
  const access = await requireOrg(tx, principal, orgId);
  const found = await store.findSkill(tx, orgId, skillId);
  if (!found) throw notFound("skill");
  const authority = await authorityOver(tx, access, found);
  if (!authority.read) throw notFound("skill");
  if (need === "read") return { access, skill: found };
  if (!authority.manage) throw forbidden("you do not have permission to manage this skill");
  if (need === "manage") return { access, skill: found };
  const skill = await store.lockSkill(tx, orgId, skillId);
  if (!skill) throw notFound("skill");
  return { access, skill };
}

/** Checks that the caller may upload skills for `owner` and returns the owner as stored. */
export async function requireOwnerManage(tx: Tx, principal: Principal, orgId: string, owner: { kind: OwnerKind; projectId?: string }): Promise<store.Owner> {
  if (owner.kind === "org") {
    await requireOrg(tx, principal, orgId, "org.manage");
    return { kind: "org", projectId: null, userId: null };
  }
  if (owner.kind === "project") {
    await requireProject(tx, principal, orgId, owner.projectId!, "project.manage");
    return { kind: "project", projectId: owner.projectId!, userId: null };
  }
  await requireOrg(tx, principal, orgId);
  if (principal.kind !== "user") throw forbidden("user-owned skills belong to users; an organization API key cannot own one");
  return { kind: "user", projectId: null, userId: principal.userId };
}

/**
 * Which owners' skills the caller lists. Without an owner filter: the org's skills, those of every project
 * it can read, and its own user skills (the reference's deduplicated union). With one, only that slice;
 * a project it cannot read is a 404.
 */
export async function requireListScope(
  tx: Tx,
  principal: Principal,
  orgId: string,
  filter: { ownerKind?: OwnerKind; ownerProjectId?: string },
): Promise<store.ListScope> {
  const none: store.ListScope = { org: false, projects: [], userId: null };
  if (filter.ownerKind === "project") {
    await requireProject(tx, principal, orgId, filter.ownerProjectId!, "project.read");
    return { ...none, projects: [filter.ownerProjectId!] };
  }
  const access = await requireOrg(tx, principal, orgId);
  const userId = principal.kind === "user" ? principal.userId : null;
  if (filter.ownerKind === "org") return { ...none, org: true };
  if (filter.ownerKind === "user") return { ...none, userId };
  return { org: true, projects: await readableProjects(tx, access, orgId), userId };
}

/** Org owners and admins read every project; anyone else is checked over the projects that own a skill. */
async function readableProjects(tx: Tx, access: OrgAccess, orgId: string): Promise<"all" | string[]> {
  if (projectRoleAllows(effectiveProjectRole(access.orgRole, null), "project.read")) return "all";
  const readable: string[] = [];
  for (const projectId of await store.ownerProjectIds(tx, orgId)) {
    if (projectRoleAllows(await projectRoleOf(tx, access, projectId), "project.read")) readable.push(projectId);
  }
  return readable;
}
