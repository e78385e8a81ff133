import type { Tx } from "../../platform/db/index.js";
import { forbidden, notFound } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import { requireOrg, type OrgAccess } from "../orgs/access.js";
import { memberships } from "../orgs/members-service.js";
import { orgRoleAllows } from "../orgs/policy.js";
import * as store from "./store.js";

/**
 * Who may see and manage a machine (the reference's machine.read and machine.manage). Org owners and
 * admins manage every machine of the org. Anyone else sees a machine only while it is granted to a
 * project they can read, and never manages it. A machine the caller cannot see is a 404 (its existence
 * is not disclosed); one it sees but may not manage, a 403. Deleted machines are gone for everyone.
 */
export function canManageMachines(access: OrgAccess): boolean {
  return orgRoleAllows(access.orgRole, "org.manage");
}

/** The projects whose granted machines the caller sees: every one for org managers. */
export async function readableProjectIds(tx: Tx, access: OrgAccess): Promise<"all" | string[]> {
  if (canManageMachines(access)) return "all";
  return (await memberships.grants(tx, access.membershipId)).map((grant) => grant.projectId);
}

/** The live machine as the caller may use it; `manage` also locks its row for the rest of the transaction. */
export async function requireMachine(
  tx: Tx,
  principal: Principal,
  orgId: string,
  machineId: string,
  need: "read" | "manage",
): Promise<{ access: OrgAccess; machine: store.MachineRow }> {
  const access = await requireOrg(tx, principal, orgId);
  const found = await store.findMachine(tx, orgId, machineId);
  if (!found || found.deletedAt) throw notFound("machine");
  if (!canManageMachines(access)) {
    const projects = await readableProjectIds(tx, access);
    if (projects === "all" || !(await store.isGrantedToAny(tx, machineId, projects))) throw notFound("machine");
    if (need === "manage") throw forbidden("managing machines needs the org owner or admin role");
    return { access, machine: found };
  }
  if (need === "read") return { access, machine: found };
  const machine = await store.lockLiveMachine(tx, orgId, machineId);
  if (!machine) throw notFound("machine");
  return { access, machine };
}
