import { Type } from "typebox";
import { ErrorEnvelope, ResourceName, Timestamp } from "../../platform/http/schemas.js";

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

export const CodeRequest = Type.Object(
  { client_name: DefaultableName("Device"), token_name: DefaultableName("Device login") },
  { additionalProperties: false },
);

export const CodeResponse = Type.Object(
  {
    device_code: Type.String(),
    user_code: Type.String(),
    verification_uri: Type.String(),
    verification_uri_complete: Type.String(),
    expires_in: Type.Integer(),
    interval: Type.Integer(),
  },
  { additionalProperties: false },
);

export const TokenRequest = Type.Object({ device_code: Type.String({ minLength: 1, maxLength: 256 }) }, { additionalProperties: false });

export const TokenResponse = Type.Object(
  { access_token: Type.String(), token_type: Type.Literal("Bearer") },
  { additionalProperties: false },
);

/** RFC 8628 §3.5 answers while the flow is undecided. */
export const PendingPollResponse = Type.Object(
  { error: Type.Union([Type.Literal("authorization_pending"), Type.Literal("slow_down")]), interval: Type.Integer() },
  { additionalProperties: false },
);

/** RFC 8628 terminal errors; a malformed request body keeps the usual envelope instead. */
export const PollError = Type.Union([
  Type.Object(
    { error: Type.Union([Type.Literal("access_denied"), Type.Literal("expired_token"), Type.Literal("invalid_grant")]) },
    { additionalProperties: false },
  ),
  ErrorEnvelope,
]);

export const UserCodeQuery = Type.Object({ user_code: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });

export const UserCodeRequest = Type.Object({ user_code: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });

export const PendingFlow = Type.Object(
  { user_code: Type.String(), client_name: Type.String(), token_name: Type.String(), expires_at: Timestamp },
  { additionalProperties: false },
);
