import { Type } from "typebox";
import { ErrorEnvelope, ResourceName, Timestamp } from "../../platform/http/schemas.js";
import { component } from "../../platform/http/components.js";

/**
 * A resource name where an empty string means "use the default": the resource-name policy (1 to 64
 * characters, no surrounding whitespace, no control or invisible characters) without the minimum length.
 */
const DefaultableName = (fallback: string) =>
  Type.Optional(
    Type.String({
      maxLength: 64,
      pattern: (ResourceName as { pattern?: string }).pattern,
      description: `Resource name; omitted or empty means "${fallback}".`,
    }),
  );

export const CodeRequest = component("DeviceCodeRequest", Type.Object(
  { client_name: DefaultableName("Device"), token_name: DefaultableName("Device login") },
  { additionalProperties: false },
));

export const CodeResponse = component("DeviceCodeResponse", Type.Object(
  {
    device_code: Type.String(),
    user_code: Type.String(),
    verification_uri: Type.String(),
    verification_uri_complete: Type.String(),
    expires_in: Type.Integer(),
    interval: Type.Integer(),
  },
  { additionalProperties: false },
));

export const TokenRequest = component("DeviceTokenRequest", Type.Object({ device_code: Type.String({ minLength: 1, maxLength: 256 }) }, { additionalProperties: false }));

export const TokenResponse = component("DeviceTokenResponse", Type.Object(
  { access_token: Type.String(), token_type: Type.Literal("Bearer") },
  { additionalProperties: false },
));

/** RFC 8628 §3.5 answers while the flow is undecided. */
export const PendingPollResponse = component("DeviceTokenPending", Type.Object(
  { error: Type.Union([Type.Literal("authorization_pending"), Type.Literal("slow_down")]), interval: Type.Integer() },
  { additionalProperties: false },
));

/** RFC 8628 terminal errors; a malformed request body keeps the usual envelope instead. */
export const PollError = component("DeviceTokenError", Type.Union([
  Type.Object(
    { error: Type.Union([Type.Literal("access_denied"), Type.Literal("expired_token"), Type.Literal("invalid_grant")]) },
    { additionalProperties: false },
  ),
  ErrorEnvelope,
]));

export const UserCodeQuery = Type.Object({ user_code: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });

export const UserCodeRequest = component("DeviceUserCodeRequest", Type.Object({ user_code: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }));

export const PendingFlow = component("PendingDeviceLogin", Type.Object(
  { user_code: Type.String(), client_name: Type.String(), token_name: Type.String(), expires_at: Timestamp },
  { additionalProperties: false },
));
