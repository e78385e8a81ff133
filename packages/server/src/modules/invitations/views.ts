import { encodeId } from "../../platform/ids.js";
import { iso } from "../../platform/http/schemas.js";
import type { InvitationWithOrg } from "./store.js";

export function invitationView(invitation: InvitationWithOrg) {
  return {
    id: encodeId("invitation", invitation.id),
    org_id: encodeId("org", invitation.orgId),
    org_name: invitation.orgName,
    email: invitation.email,
    org_role: invitation.orgRole,
    created_at: iso(invitation.createdAt),
  };
}
