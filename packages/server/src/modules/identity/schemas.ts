import { Type } from "typebox";
import { Email, Id, NullableTimestamp, ResourceName, Timestamp } from "../../platform/http/schemas.js";
import { component } from "../../platform/http/components.js";

export const Password = Type.String({ minLength: 8, maxLength: 1024 });

export const SignupRequest = component("SignUpRequest", Type.Object(
  { email: Email, password: Password, display_name: ResourceName },
  { additionalProperties: false },
));

export const LoginRequest = component("SignInRequest", Type.Object(
  { email: Type.String({ minLength: 1, maxLength: 254 }), password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
));

export const UserIdentity = component("CurrentUserIdentity", Type.Object(
  { id: Id("user"), email: Type.String(), display_name: Type.String() },
  { additionalProperties: false },
));

export const AuthResponse = component("AuthResponse", Type.Object(
  {
    user: UserIdentity,
    /** Echo of the CSRF cookie, for clients (curl, scripts) that read bodies more easily than cookie jars. */
    csrf_token: Type.Optional(Type.String()),
    email_verification_required: Type.Boolean(),
  },
  { additionalProperties: false },
));

export const CurrentUser = component("CurrentUser", Type.Object(
  {
    user: UserIdentity,
    orgs: Type.Array(
      Type.Object(
        { id: Id("org"), name: Type.String(), role: Type.String(), created_at: Timestamp },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
));

export const PersonalAccessToken = component("PersonalAccessToken", Type.Object(
  {
    id: Id("pat"),
    user_id: Id("user"),
    name: Type.String(),
    token_id: Type.String(),
    created_at: Timestamp,
    last_used_at: NullableTimestamp,
    revoked_at: NullableTimestamp,
  },
  { additionalProperties: false },
));

export const CreatePatRequest = component("CreatePersonalAccessTokenRequest", Type.Object({ name: ResourceName }, { additionalProperties: false }));

export const CreatePatResponse = component("CreatePersonalAccessTokenResponse", Type.Object(
  { token: Type.String({ minLength: 1 }), token_record: PersonalAccessToken },
  { additionalProperties: false },
));

export const PatParams = Type.Object({ tokenID: Id("pat") });
