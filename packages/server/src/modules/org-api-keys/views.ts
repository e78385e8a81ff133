import { encodeId } from "../../platform/ids.js";
import { iso, isoOrNull } from "../../platform/http/schemas.js";
import type { OrgApiKeyRow } from "./store.js";

export function orgApiKeyView(key: OrgApiKeyRow) {
  return {
    id: encodeId("orgApiKey", key.id),
    org_id: encodeId("org", key.orgId),
    name: key.name,
    token_id: key.tokenId,
    // A revoked key holds no role any more; the reference reports that as an empty string.
    org_role: key.revokedAt ? "" : key.orgRole,
    created_by_user_id: key.createdByUserId ? encodeId("user", key.createdByUserId) : null,
    created_at: iso(key.createdAt),
    updated_at: iso(key.updatedAt),
    last_used_at: isoOrNull(key.lastUsedAt),
    revoked_at: isoOrNull(key.revokedAt),
  };
}
