import { encodeId } from "../../platform/ids.js";
import { iso, isoOrNull } from "../../platform/http/schemas.js";
import type { PatRow, UserRow } from "./store.js";

export function userView(user: UserRow) {
  return { id: encodeId("user", user.id), email: user.email, display_name: user.displayName };
}

export function patView(pat: PatRow) {
  return {
    id: encodeId("pat", pat.id),
    user_id: encodeId("user", pat.userId),
    name: pat.name,
    token_id: pat.tokenId,
    created_at: iso(pat.createdAt),
    last_used_at: isoOrNull(pat.lastUsedAt),
    revoked_at: isoOrNull(pat.revokedAt),
  };
}
