import { encodeId } from "../../platform/ids.js";
import { iso, isoOrNull } from "../../platform/http/schemas.js";
import { publicSecretRefs } from "./environment.js";
import type { GrantRow } from "./grants-store.js";
import type { GrantSourceKind, LifecycleState, SourceKind } from "./schemas.js";
import type { MachineRow } from "./store.js";
import type { TokenRow } from "./tokens-store.js";
import { failureReportView } from "../daemon/failures.js";

export function machineSummaryView(machine: MachineRow) {
  return {
    id: encodeId("machine", machine.id),
    org_id: encodeId("org", machine.orgId),
    source_kind: machine.sourceKind as SourceKind,
    display_name: machine.displayName,
    description: machine.description,
    provider: machine.provider,
    lifecycle_state: machine.lifecycleState as LifecycleState,
    connection_state: machine.connectionState,
    last_observed_at: isoOrNull(machine.lastObservedAt),
    deleted_at: isoOrNull(machine.deletedAt),
    created_at: iso(machine.createdAt),
    updated_at: iso(machine.updatedAt),
  };
}

export function machineView(machine: MachineRow) {
  return {
    ...machineSummaryView(machine),
    machine_pool_id: machine.machinePoolId ? encodeId("machinePool", machine.machinePoolId) : null,
    cwd: machine.cwd,
    env: machine.env,
    secret_env: publicSecretRefs(machine.secretEnv),
    lifecycle_reason_code: machine.lifecycleReasonCode,
    lifecycle_reason_message: machine.lifecycleReasonMessage,
    ...failureReportView(machine.failureReport),
    next_reconcile_after: isoOrNull(machine.nextReconcileAfter),
    provision_attempts: machine.provisionAttempts,
    delete_attempts: machine.deleteAttempts,
    metadata: machine.metadata,
  };
}

/**
 * A machine in a list of visible machines: whether the caller may manage it, and why it sees it (its org
 * role when `viaOrgRole`, and each grant given).
 */
export function visibleMachineView(machine: MachineRow, access: { canManage: boolean; viaOrgRole: boolean }, grants: GrantRow[]) {
  const sources = [
    ...(access.viaOrgRole ? [{ kind: "org_role" as const }] : []),
    ...grants.map((grant) => ({
      kind: "project_machine_grant" as const,
      project_id: encodeId("project", grant.projectId),
      grant_id: encodeId("machineGrant", grant.id),
      grant_source_kind: grant.sourceKind as GrantSourceKind,
    })),
  ];
  return { ...machineSummaryView(machine), access: { can_manage: access.canManage, sources } };
}

export function tokenView(token: TokenRow) {
  return {
    id: encodeId("daemonToken", token.id),
    org_id: encodeId("org", token.orgId),
    machine_id: encodeId("machine", token.machineId),
    name: token.name,
    metadata: token.metadata,
    created_at: iso(token.createdAt),
    last_used_at: isoOrNull(token.lastUsedAt),
    revoked_at: isoOrNull(token.revokedAt),
    revoke_reason: token.revokeReason,
  };
}

export function grantView(grant: GrantRow) {
  return {
    id: encodeId("machineGrant", grant.id),
    org_id: encodeId("org", grant.orgId),
    project_id: encodeId("project", grant.projectId),
    machine_id: encodeId("machine", grant.machineId),
    source_kind: grant.sourceKind as GrantSourceKind,
    project_machine_pool_grant_id: grant.projectMachinePoolGrantId ? encodeId("machinePoolGrant", grant.projectMachinePoolGrantId) : null,
    description: grant.description,
    metadata: grant.metadata,
    created_at: iso(grant.createdAt),
    updated_at: iso(grant.updatedAt),
  };
}
