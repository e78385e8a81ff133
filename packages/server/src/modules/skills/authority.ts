import type { Tx } from "../../platform/db/index.js";
import type { Principal } from "../../platform/http/auth.js";
import type { OrgAccess } from "../orgs/access.js";
import { ownedAuthority, requireOwned, type OwnedKind } from "../orgs/ownership.js";
import * as store from "./store.js";

/*
 * Who may see and change a skill follows its owner, as for secrets (modules/secrets/authority.ts), with
 * the project's ordinary rights instead of the secret rights: a skill holds instructions, not
 * credentials. Org skills are read by every member and managed with org.manage; project skills are read
 * with project.read and managed with project.manage; user skills belong to their user alone.
 */
export const SKILLS: OwnedKind<store.SkillRow> = {
  rights: {
    org: { read: "org.read", manage: "org.manage" },
    project: { read: "project.read", manage: "project.manage" },
    noun: "skill",
  },
  find: store.findSkill,
  lock: store.lockSkill,
  ownerProjectIds: store.ownerProjectIds,
};

export const { requireOwnerManage, requireListScope } = ownedAuthority(SKILLS);

/** The skill as the caller may use it (`requireOwned`). */
export async function requireSkill(
  tx: Tx,
  principal: Principal,
  orgId: string,
  skillId: string,
  need: "read" | "manage" | "change",
): Promise<{ access: OrgAccess; skill: store.SkillRow }> {
  const { access, row } = await requireOwned(tx, principal, orgId, skillId, need, SKILLS);
  return { access, skill: row };
}
