import { Type, type Static, type TObject, type TSchema } from "typebox";
import { Cursor, Limit, NameFilter, ResourceSort } from "../../platform/http/lists.js";
import { Id, Metadata, ResourceName, Timestamp } from "../../platform/http/schemas.js";
import { component } from "../../platform/http/components.js";
import type { OwnedGrantApi } from "../grants/owned-schemas.js";

export const TAG = "Secrets";

export const SECRET_KINDS = ["generic", "oauth_token_set", "slack_app_credentials", "aws_credentials", "github_app_credentials"] as const;
export const OWNER_KINDS = ["org", "project", "user"] as const;
export const AVAILABILITY_SOURCES = ["direct", "grant"] as const;

export type SecretKind = (typeof SECRET_KINDS)[number];
export type OwnerKind = (typeof OWNER_KINDS)[number];
export type AvailabilitySource = (typeof AVAILABILITY_SOURCES)[number];

/**
 * A union told apart by one tag property. Written as `if tag = x then branch x` rather than `oneOf`, so a
 * failing request gets the issues of the branch it named (a missing field, an unknown field) instead of
 * every other branch's complaints; an unknown tag is reported once, on the tag itself.
 */
export function Tagged<T extends Record<string, TObject>>(tag: string, branches: T, description: string) {
  const values = Object.keys(branches);
  return Type.Unsafe<Static<T[keyof T]>>({
    type: "object",
    description,
    required: [tag],
    properties: { [tag]: { type: "string", enum: values } },
    allOf: values.map((value) => ({
      if: { type: "object", required: [tag], properties: { [tag]: { const: value } } },
      then: branches[value] as TSchema,
    })),
  });
}

const strict = { additionalProperties: false } as const;
/** One secret value; the reference bounds each at 64 KiB before encryption. */
const Value = Type.String({ minLength: 1, maxLength: 65536 });

const GenericMaterial = component("GenericSecretMaterial", Type.Object({ kind: Type.Literal("generic"), value: Value }, strict));

const OAuthRefreshMaterial = component("OAuthRefreshSecretMaterial", Type.Object(
  {
    refresh_token: Value,
    token_endpoint: Type.String({ minLength: 1, maxLength: 2048, format: "uri", description: "HTTPS, or HTTP on a loopback host." }),
    client_id: Value,
    client_secret: Type.Optional(Value),
    resource: Value,
  },
  strict,
));

const OAuthTokenSetMaterial = component("OAuthTokenSetSecretMaterial", Type.Object(
  {
    kind: Type.Literal("oauth_token_set"),
    access_token: Value,
    access_token_expires_in_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647 })),
    refresh: Type.Optional(OAuthRefreshMaterial),
    id_token: Type.Optional(Value),
    mcp_url: Type.Optional(Value),
    scopes: Type.Optional(Value),
    token_type: Type.Optional(Value),
  },
  strict,
));

const SlackAppCredentialsMaterial = component("SlackAppCredentialsSecretMaterial", Type.Object(
  { kind: Type.Literal("slack_app_credentials"), access_token: Value, client_id: Value, client_secret: Value, signing_secret: Value },
  strict,
));

const AwsCredentialsMaterial = component("AWSCredentialsSecretMaterial", Type.Object(
  {
    kind: Type.Literal("aws_credentials"),
    access_key_id: Value,
    secret_access_key: Value,
    session_token: Type.Optional(Value),
    role_arn: Type.Optional(Value),
    external_id: Type.Optional(Type.String({ minLength: 1, maxLength: 65536, description: "Requires role_arn." })),
  },
  strict,
));

const GithubAppCredentialsMaterial = component("GitHubAppCredentialsSecretMaterial", Type.Object(
  {
    kind: Type.Literal("github_app_credentials"),
    app_id: Type.String({ pattern: "^[0-9]{1,20}$", description: "The GitHub App's numeric id." }),
    private_key: Type.String({
      minLength: 1,
      maxLength: 65536,
      pattern: "-----BEGIN [A-Z ]*PRIVATE KEY-----",
      description: "The App's PEM-encoded private key.",
    }),
    webhook_secret: Type.Optional(Value),
    client_id: Type.Optional(Value),
    client_secret: Type.Optional(Value),
  },
  strict,
));

export const SecretMaterial = component("SecretMaterial", Tagged(
  "kind",
  {
    generic: GenericMaterial,
    oauth_token_set: OAuthTokenSetMaterial,
    slack_app_credentials: SlackAppCredentialsMaterial,
    aws_credentials: AwsCredentialsMaterial,
    github_app_credentials: GithubAppCredentialsMaterial,
  },
  "The secret value, by kind. Write-only: no response ever contains it.",
));
export type SecretMaterial = Static<typeof SecretMaterial>;

export const SecretOwnerInput = component("SecretOwnerInput", Tagged(
  "kind",
  {
    org: component("OrgSecretOwnerInput", Type.Object({ kind: Type.Literal("org") }, strict)),
    project: component("ProjectSecretOwnerInput", Type.Object({ kind: Type.Literal("project"), project_id: Id("project") }, strict)),
    user: component("UserSecretOwnerInput", Type.Object({ kind: Type.Literal("user") }, strict)),
  },
  "Who owns the secret; immutable. A user-owned secret belongs to the caller.",
));
export type SecretOwnerInput = Static<typeof SecretOwnerInput>;

export const SecretOwner = component("SecretOwner", Type.Union([
  component("OrgSecretOwner", Type.Object({ kind: Type.Literal("org") }, strict)),
  component("ProjectSecretOwner", Type.Object({ kind: Type.Literal("project"), project_id: Id("project") }, strict)),
  component("UserSecretOwner", Type.Object({ kind: Type.Literal("user"), user_id: Id("user") }, strict)),
]));

export const Secret = component("Secret", Type.Object(
  {
    id: Id("secret"),
    org_id: Id("org"),
    management_kind: Type.Enum(["tenant", "cluster"]),
    owner: SecretOwner,
    name: Type.String(),
    kind: Type.Enum([...SECRET_KINDS]),
    metadata: Metadata,
    current_version_number: Type.Integer(),
    payload_keys: Type.Array(Type.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  strict,
));

/** Grants to other projects (modules/grants): the routes' names and the rights their descriptions state. */
export const SECRET_GRANTS: OwnedGrantApi = {
  noun: "secret",
  title: "Secret",
  subjectId: "secret",
  grantId: "secretGrant",
  tag: TAG,
  targetRight: "project.secrets.manage",
  history: "versions",
};

export const SecretAvailability = component("SecretAvailability", Type.Union([
  Type.Object({ source: Type.Literal("direct"), project_id: Id("project") }, strict),
  Type.Object({ source: Type.Literal("grant"), project_id: Id("project"), grant_id: Id("secretGrant") }, strict),
]));
export const ProjectSecretAccess = component("ProjectSecretAccess", Type.Object({ secret: Secret, availability: SecretAvailability }, strict));

export const CreateSecretRequest = component("CreateSecretRequest", Type.Object(
  { owner: SecretOwnerInput, name: ResourceName, metadata: Type.Optional(Metadata), material: SecretMaterial },
  strict,
));
export const UpdateSecretRequest = component("UpdateSecretRequest", Type.Object(
  { name: Type.Optional(ResourceName), metadata: Type.Optional(Metadata) },
  { additionalProperties: false, minProperties: 1, description: "metadata, when given, replaces the whole map." },
));
export const SecretVersionRequest = component("SecretVersionRequest", Type.Object({ material: SecretMaterial }, strict));

/** `metadata[key]=value` query parameters arrive with the brackets in their names; each must match. */
export const METADATA_PARAM = /^metadata\[(.{1,128})\]$/s;
const metadataParams = { patternProperties: { "^metadata\\[.{1,128}\\]$": Type.String({ maxLength: 512 }) } };
const metadataHelp = "Metadata filters are written `metadata[key]=value`; give several keys to require all of them.";
/**
 * Documents the filter in OpenAPI (deepObject encoding). Requests never carry a bare `metadata` key: the
 * query-string parser keeps `metadata[key]` as the parameter's name, matched by `metadataParams`.
 */
const MetadataFilterDoc = Type.Optional(
  Type.Record(Type.String(), Type.String(), { description: `${metadataHelp} Encoded as a deepObject: metadata[env]=prod.` }),
);

export const ListSecretsQuery = Type.Object(
  {
    name: Type.Optional(NameFilter),
    owner_kind: Type.Optional(Type.Enum([...OWNER_KINDS])),
    owner_project_id: Type.Optional(Id("project")),
    kind: Type.Optional(Type.Enum([...SECRET_KINDS])),
    mcp_oauth_flow_id: Type.Optional(Id("mcpOAuthFlow")),
    metadata: MetadataFilterDoc,
    sort: Type.Optional(ResourceSort),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false, ...metadataParams },
);

export const ListProjectSecretsQuery = Type.Object(
  {
    name: Type.Optional(NameFilter),
    kind: Type.Optional(Type.Enum([...SECRET_KINDS])),
    owner_kind: Type.Optional(Type.Enum([...OWNER_KINDS])),
    availability_source: Type.Optional(Type.Enum([...AVAILABILITY_SOURCES])),
    metadata: MetadataFilterDoc,
    sort: Type.Optional(ResourceSort),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false, ...metadataParams },
);

export const SecretParams = Type.Object({ orgID: Id("org"), secretID: Id("secret") });
export const ProjectSecretsParams = Type.Object({ orgID: Id("org"), projectID: Id("project") });
export const ProjectSecretParams = Type.Object({ orgID: Id("org"), projectID: Id("project"), secretID: Id("secret") });

export const McpOAuthStartRequest = component("MCPOAuthStartRequest", Type.Object(
  {
    owner: SecretOwnerInput,
    mcp_url: Type.String({ minLength: 1, maxLength: 2048, description: "The MCP server's Streamable HTTP endpoint." }),
    name: ResourceName,
    return_to: Type.Optional(
      Type.String({ maxLength: 2048, description: "Where the browser goes after the callback: a path or URL on svc's public origin. Without it the callback shows a short page." }),
    ),
    client_id: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: "A client registered at the authorization server; without it svc registers itself (RFC 7591)." })),
    client_secret: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    scopes: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 256, pattern: "^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$" }), { maxItems: 64 })),
    metadata: Type.Optional(
      component("MCPOAuthStartMetadata", Type.Unsafe<Record<string, string>>({
        type: "object",
        description: "Metadata for the stored secret. svc sets mcp_url itself, so that key is reserved and at most 15 pairs are accepted.",
        propertyNames: { minLength: 1, maxLength: 64 },
        additionalProperties: { type: "string", maxLength: 512 },
        maxProperties: 15,
        not: { required: ["mcp_url"] },
      })),
    ),
  },
  strict,
));

export const McpOAuthStartResponse = component("MCPOAuthStartResponse", Type.Object(
  {
    flow_id: Id("mcpOAuthFlow"),
    authorization_url: Type.String({ format: "uri", description: "Open it in a browser before expires_at and approve." }),
    expires_at: Timestamp,
  },
  strict,
));

export const McpOAuthCallbackQuery = Type.Object(
  {
    state: Type.Optional(Type.String({ maxLength: 512 })),
    code: Type.Optional(Type.String({ maxLength: 4096 })),
    error: Type.Optional(Type.String({ maxLength: 256 })),
    error_description: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  // Authorization servers may add parameters of their own (iss, session_state…).
  { additionalProperties: true },
);
