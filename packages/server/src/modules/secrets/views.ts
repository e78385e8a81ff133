import { encodeId } from "../../platform/ids.js";
import { iso } from "../../platform/http/schemas.js";
import type { SecretKind } from "./schemas.js";
import type { SecretRow } from "./store.js";

function ownerView(secret: SecretRow) {
  if (secret.ownerKind === "project") return { kind: "project" as const, project_id: encodeId("project", secret.ownerProjectId!) };
  if (secret.ownerKind === "user") return { kind: "user" as const, user_id: encodeId("user", secret.ownerUserId!) };
  return { kind: "org" as const };
}

/** A secret as the API shows it: what it is and which fields it holds, never a value. */
export function secretView(secret: SecretRow) {
  return {
    id: encodeId("secret", secret.id),
    org_id: encodeId("org", secret.orgId),
    management_kind: secret.managementKind as "tenant" | "cluster",
    owner: ownerView(secret),
    name: secret.name,
    kind: secret.kind as SecretKind,
    metadata: secret.metadata,
    current_version_number: secret.currentVersionNumber,
    payload_keys: secret.payloadKeys,
    created_at: iso(secret.createdAt),
    updated_at: iso(secret.updatedAt),
  };
}

/** A secret seen from a project: direct when the project owns it, else through the grant named. */
export function projectSecretView(projectId: string, row: { secret: SecretRow; grantId: string | null }) {
  const project_id = encodeId("project", projectId);
  return {
    secret: secretView(row.secret),
    availability:
      row.grantId === null
        ? { source: "direct" as const, project_id }
        : { source: "grant" as const, project_id, grant_id: encodeId("secretGrant", row.grantId) },
  };
}
