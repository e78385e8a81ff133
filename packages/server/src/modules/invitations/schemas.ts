import { Type } from "typebox";
import { GRANTABLE_ORG_ROLES } from "../orgs/policy.js";
import { Email, Id, Timestamp } from "../../platform/http/schemas.js";
import { component } from "../../platform/http/components.js";

export const Invitation = component("OrgInvitation", Type.Object(
  {
    id: Id("invitation"),
    org_id: Id("org"),
    org_name: Type.String(),
    email: Type.String({ format: "email" }),
    org_role: Type.String(),
    created_at: Timestamp,
  },
  { additionalProperties: false },
));

export const CreateInvitationRequest = component("CreateOrgInvitationRequest", Type.Object(
  { email: Email, role: Type.Enum([...GRANTABLE_ORG_ROLES], { description: "The org role granted on acceptance: admin or member." }) },
  { additionalProperties: false },
));

export const OrgInvitationParams = Type.Object({ orgID: Id("org"), invitationID: Id("invitation") });
export const InvitationParams = Type.Object({ invitationID: Id("invitation") });
