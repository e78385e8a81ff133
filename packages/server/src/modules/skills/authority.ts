import type { Tx } from "../../platform/db/index.js";
import { forbidden, notFound } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import { requireOrg, requireProject, type OrgAccess } from "../orgs/access.js";
import { ownerAuthority, readableOwnerProjects, requireOwnerManage as requireOwnership, type Authority, type Owner, type OwnerRights } from "../orgs/ownership.js";
import type { OwnerKind } from "./schemas.js";
import * as store from "./store.js";

/*
 * Who may see and change a skill follows its owner, as for secrets (modules/secrets/authority.ts), with
 * the project's ordinary rights instead of the secret rights: a skill holds instructions, not
 * credentials. Org skills are read by every member and managed with org.manage; project skills are read
 * with project.read and managed with project.manage; user skills belong to their user alone.
 */

const SKILL_RIGHTS: OwnerRights = {
  org: { read: "org.read", manage: "org.manage" },
  project: { read: "project.read", manage: "project.manage" },
  noun: "skill",
};

export const authorityOver = (tx: Tx, access: OrgAccess, skill: store.SkillRow): Promise<Authority> => ownerAuthority(tx, access, skill, SKILL_RIGHTS);

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
export const requireOwnerManage = (tx: Tx, principal: Principal, orgId: string, owner: { kind: OwnerKind; projectId?: string }): Promise<Owner> =>
  requireOwnership(tx, principal, orgId, owner, SKILL_RIGHTS);

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
  return { org: true, projects: await readableOwnerProjects(tx, access, await store.ownerProjectIds(tx, orgId), "project.read"), userId };
}

