import { Type, type Static } from "typebox";
import { Cursor, Limit, NameFilter, ResourceSort } from "../../platform/http/lists.js";
import { Id, ResourceName, Timestamp } from "../../platform/http/schemas.js";
import { idPattern } from "../../platform/ids.js";
import { component } from "../../platform/http/components.js";
import { ModelPricing } from "./pricing.js";

export const TAG = "Models";

export const API_FORMATS = ["openai-responses", "openai-chat-completions", "anthropic-messages"] as const;
export const API_VARIANTS = ["default", "openrouter", "bedrock"] as const;
export const AUTH_KINDS = ["bearer_token", "api_key_header"] as const;
export const PRESETS = ["openai", "openrouter", "anthropic"] as const;
export const MANAGEMENT_KINDS = ["tenant", "cluster"] as const;

export type ApiFormat = (typeof API_FORMATS)[number];
export type ApiVariant = (typeof API_VARIANTS)[number];
export type AuthKind = (typeof AUTH_KINDS)[number];
export type Preset = (typeof PRESETS)[number];
export type ManagementKind = (typeof MANAGEMENT_KINDS)[number];

const strict = { additionalProperties: false } as const;

export const ManagementKindSchema = component("ManagementKind", Type.Enum([...MANAGEMENT_KINDS], {
  description: "Who manages the resource: `tenant` through this API, `cluster` by the operator (read-only here).",
}));
const ApiFormatSchema = component("ModelAPIFormat", Type.Enum([...API_FORMATS], { description: "The wire format svc speaks to the provider." }));
const AuthKindSchema = component("ModelProviderAuthKind", Type.Enum([...AUTH_KINDS], {
  description: "`bearer_token`: `Authorization: Bearer <credential>`. `api_key_header`: the credential in the header named by auth_options.header_name.",
}));

const AuthOptions = component("ModelProviderAuthOptions", Type.Object(
  { header_name: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })) },
  {
    additionalProperties: false,
    description:
      "Where the credential goes, never the credential itself. Empty with bearer_token; with api_key_header, " +
      '{"header_name": "..."} (Anthropic Messages defaults to x-api-key).',
  },
));

const BaseUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    "The provider's API base, http or https, without query or fragment; trailing slashes are dropped. Whether the " +
    "destination may be a private or loopback address is decided when svc calls it (SVC_ALLOW_PRIVATE_NETWORK).",
});
const EndpointPath = Type.String({
  minLength: 1,
  maxLength: 1024,
  pattern: "^/",
  description: "Path under base_url that model calls go to. Defaults by format: /responses, /chat/completions or /messages.",
});
const RequestTimeout = Type.Integer({ minimum: 1, maximum: 2147483647, description: "Deadline of one provider call in milliseconds; default 600000." });

export const ModelProviderConfig = component("ModelProviderConfig", Type.Object(
  {
    id: Id("modelProviderConfig"),
    org_id: Id("org"),
    management_kind: ManagementKindSchema,
    name: Type.String(),
    api_format: ApiFormatSchema,
    api_variant: Type.String({ description: "`default`, `openrouter` or `bedrock`; clients should tolerate new values." }),
    base_url: Type.String(),
    endpoint_path: Type.String(),
    request_timeout_ms: Type.Integer(),
    auth_kind: AuthKindSchema,
    auth_options: AuthOptions,
    credential_secret_id: Id("secret"),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  strict,
));

export const CreateModelProviderConfigRequest = component("CreateModelProviderConfigRequest", Type.Object(
  {
    name: ResourceName,
    preset: Type.Optional(
      Type.Enum([...PRESETS], {
        description:
          "Fills the format, base URL and auth of a known provider: openai (Responses, https://api.openai.com/v1, bearer), " +
          "openrouter (Chat Completions with the openrouter variant, https://openrouter.ai/api/v1, bearer), anthropic " +
          "(Messages, https://api.anthropic.com/v1, x-api-key). Without a preset, api_format and base_url are required.",
      }),
    ),
    api_format: Type.Optional(ApiFormatSchema),
    api_variant: Type.Optional(
      Type.Enum([...API_VARIANTS], { description: "openrouter needs openai-chat-completions; bedrock needs anthropic-messages. Immutable." }),
    ),
    base_url: Type.Optional(BaseUrl),
    endpoint_path: Type.Optional(EndpointPath),
    request_timeout_ms: Type.Optional(RequestTimeout),
    auth_kind: Type.Optional(AuthKindSchema),
    auth_options: Type.Optional(AuthOptions),
    credential_secret_id: Type.String({
      pattern: idPattern("secret"),
      description: "An org-owned secret of kind generic; its `value` is the API key.",
    }),
  },
  {
    additionalProperties: false,
    description: "Connects the organization to a model API. api_format and api_variant cannot be changed afterwards.",
  },
));
export type CreateModelProviderConfigRequest = Static<typeof CreateModelProviderConfigRequest>;

export const UpdateModelProviderConfigRequest = component("UpdateModelProviderConfigRequest", Type.Object(
  {
    base_url: Type.Optional(BaseUrl),
    endpoint_path: Type.Optional(EndpointPath),
    request_timeout_ms: Type.Optional(RequestTimeout),
    auth_kind: Type.Optional(AuthKindSchema),
    auth_options: Type.Optional(AuthOptions),
    credential_secret_id: Type.Optional(Id("secret")),
  },
  {
    additionalProperties: false,
    description:
      "Omitted fields keep their values. Changing auth_kind without auth_options resets auth_options to the new kind's default.",
  },
));
export type UpdateModelProviderConfigRequest = Static<typeof UpdateModelProviderConfigRequest>;

export const DiscoveredProviderModel = component("DiscoveredProviderModel", Type.Object(
  {
    slug: Type.String({ description: "Usable as a configured model's provider_model_slug." }),
    display_name: Type.Optional(Type.String()),
    context_window_tokens: Type.Optional(Type.Integer({ minimum: 2, maximum: 2147483647 })),
    max_output_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647 })),
    pricing: Type.Optional(ModelPricing),
  },
  strict,
));

export const ModelCatalog = component("ModelCatalog", Type.Object(
  {
    status: Type.Enum(["ok", "failed"]),
    models: Type.Optional(Type.Array(DiscoveredProviderModel, { description: "Newest first; present when status is ok." })),
    error: Type.Optional(Type.String({ description: "Why the probe failed; present when status is failed." })),
  },
  {
    additionalProperties: false,
    description:
      "The provider's live model list, fetched with the configured credential. A failed probe changes nothing stored: " +
      "read it as a warning that the base URL or the key may be wrong.",
  },
));

export const CreateModelProviderConfigResponse = component("CreateModelProviderConfigResponse", Type.Object({ config: ModelProviderConfig, model_catalog: ModelCatalog }, strict));

export const ListModelProviderConfigsQuery = Type.Object(
  { name: Type.Optional(NameFilter), sort: Type.Optional(ResourceSort), limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) },
  strict,
);

export const ProviderParams = Type.Object({ orgID: Id("org"), modelProviderConfigID: Id("modelProviderConfig") });
