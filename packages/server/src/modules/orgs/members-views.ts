import { encodeId } from "../../platform/ids.js";
import { iso } from "../../platform/http/schemas.js";
import type { GrantRow, MemberRow } from "./members-store.js";

export function memberView(member: MemberRow) {
  return {
    user_id: encodeId("user", member.userId),
    email: member.email,
    display_name: member.displayName,
    role: member.role,
    created_at: iso(member.createdAt),
  };
}

export function grantView(grant: GrantRow) {
  return {
    project_id: encodeId("project", grant.projectId),
    project_name: grant.projectName,
    role: grant.role,
    created_at: iso(grant.createdAt),
  };
}
