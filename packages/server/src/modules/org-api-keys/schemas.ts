import { Type } from "typebox";
import { GRANTABLE_ORG_ROLES } from "../orgs/policy.js";
import { Id, NullableTimestamp, ResourceName, Timestamp } from "../../platform/http/schemas.js";
import { component } from "../../platform/http/components.js";

export const OrgApiKeyRoleValue = component("OrgAPIKeyRole", Type.Enum([...GRANTABLE_ORG_ROLES], {
  description: "The key's org role. Organization API keys can never be owners.",
}));

export const OrgApiKey = component("OrgAPIKey", Type.Object(
  {
    id: Id("orgApiKey"),
    org_id: Id("org"),
    name: Type.String(),
    token_id: Type.String({ description: "Non-secret display identifier; not part of the bearer token." }),
    org_role: Type.String({ description: "The key's org role (admin or member); empty once the key is revoked." }),
    created_by_user_id: Type.Union([Id("user"), Type.Null()], {
      description: "The user who minted the key; null only if that account no longer exists.",
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
    last_used_at: NullableTimestamp,
    revoked_at: NullableTimestamp,
  },
  { additionalProperties: false },
));

export const CreateOrgApiKeyRequest = component("CreateOrgAPIKeyRequest", Type.Object({ name: ResourceName, org_role: OrgApiKeyRoleValue }, { additionalProperties: false }));

export const CreateOrgApiKeyResponse = component("CreateOrgAPIKeyResponse", Type.Object(
  { token: Type.String({ minLength: 1 }), api_key: OrgApiKey },
  { additionalProperties: false },
));

export const UpdateOrgApiKeyRequest = component("UpdateOrgAPIKeyRequest", Type.Object(
  { name: Type.Optional(ResourceName), org_role: Type.Optional(OrgApiKeyRoleValue) },
  { additionalProperties: false, minProperties: 1 },
));

export const KeyParams = Type.Object({ orgID: Id("org"), keyID: Id("orgApiKey") });
export const KeyProjectParams = Type.Object({ orgID: Id("org"), keyID: Id("orgApiKey"), projectID: Id("project") });
