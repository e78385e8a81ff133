import { iso } from "../../platform/http/schemas.js";
import { encodeId } from "../../platform/ids.js";
import type { ActorProvider } from "./schemas.js";
import type { ActorRow } from "./store.js";

export function actorView(row: ActorRow) {
  return {
    id: encodeId("actor", row.id),
    org_id: encodeId("org", row.orgId),
    project_id: encodeId("project", row.projectId),
    provider: row.provider as ActorProvider,
    // '' is how an absent tenant is stored; the API leaves it out.
    ...(row.providerTenantId !== "" ? { provider_tenant_id: row.providerTenantId } : {}),
    provider_user_id: row.providerUserId,
    ...(row.displayName !== null ? { display_name: row.displayName } : {}),
    metadata: row.metadata,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}
