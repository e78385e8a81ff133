import type { Tx } from "../../platform/db/index.js";
import type { Principal } from "../../platform/http/auth.js";
import type { OrgAccess } from "../orgs/access.js";
import { ownedAuthority, requireOwned, type OwnedKind } from "../orgs/ownership.js";
import * as store from "./store.js";

/*
 * Who may see and change a secret follows its owner (orgs/ownership.ts): org secrets need
 * org.secrets.list/manage, project secrets project.secrets.list/manage on the owning project, and user
 * secrets belong to their user alone (who must still be a member of the org). Operator-provisioned
 * secrets are read-only here.
 */
export const SECRETS: OwnedKind<store.SecretRow> = {
  rights: {
    org: { read: "org.secrets.list", manage: "org.secrets.manage" },
    project: { read: "project.secrets.list", manage: "project.secrets.manage" },
    noun: "secret",
  },
  find: store.findSecret,
  lock: store.lockSecret,
  refuseChange: (secret) => (secret.managementKind === "tenant" ? undefined : "this secret is managed by the operator and cannot be changed"),
  ownerProjectIds: store.ownerProjectIds,
};

export const { requireOwnerManage, requireListScope } = ownedAuthority(SECRETS);

/** The secret as the caller may use it (`requireOwned`); `change` also needs a tenant-managed secret (409). */
export async function requireSecret(
  tx: Tx,
  principal: Principal,
  orgId: string,
  secretId: string,
  need: "read" | "manage" | "change",
): Promise<{ access: OrgAccess; secret: store.SecretRow }> {
  const { access, row } = await requireOwned(tx, principal, orgId, secretId, need, SECRETS);
  return { access, secret: row };
}
