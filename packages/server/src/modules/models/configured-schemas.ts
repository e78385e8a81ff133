import { Type, type Static } from "typebox";
import { Cursor, Limit } from "../../platform/http/lists.js";
import { Id, ResourceName, Timestamp } from "../../platform/http/schemas.js";
import { ManagementKindSchema } from "./providers-schemas.js";
import { component } from "../../platform/http/components.js";
import { ModelPricing } from "./pricing.js";

export const CACHE_RETENTIONS = ["none", "short", "long"] as const;
export type CacheRetention = (typeof CACHE_RETENTIONS)[number];

const strict = { additionalProperties: false } as const;
const INT32 = 2147483647;

export const CacheRetentionSchema = component("ModelCacheRetention", Type.Enum([...CACHE_RETENTIONS], {
  description:
    "Default prompt-cache hint. `none` sends none (the provider may still cache on its own); `short` and `long` map to " +
    "the closest control the API has.",
}));
const described = (description?: string) => (description ? { description } : {});
export const ContextWindow = (description?: string) => Type.Integer({ minimum: 2, maximum: INT32, ...described(description) });
export const TokenCount = (description?: string) => Type.Integer({ minimum: 1, maximum: INT32, ...described(description) });
/** Short labels (reasoning efforts, modalities): 1 to 64 characters, at most 32 of them. */
export const Labels = (description: string) => Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 32, description });

const ApiVariantOptions = component(
  "ModelAPIVariantOptions",
  Type.Unsafe<Record<string, unknown>>({
  type: "object",
  additionalProperties: true,
  maxProperties: 64,
  description:
    "Extra top-level fields merged into this model's provider requests (for example OpenRouter `provider` routing or " +
    "sampling parameters). Fields svc controls (model, messages, stream, tools, output limit, reasoning) are ignored.",
  }),
);

const slugHelp = "The model id sent to the provider.";
const windowHelp = "Total tokens of input and output together.";
const maxOutputHelp = "Output ceiling. Defaults to the smaller of 8192 and half the context window; must be below the context window.";
const defaultOutputHelp =
  "Output cap sent with each request unless an agent overrides it. Defaults to the smaller of 4096 and max_output_tokens.";
const toolsHelp = "Whether the model receives tool definitions and makes tool calls.";
const reasoningHelp = "Whether svc uses the model's reasoning features.";
const effortHelp = "Reasoning effort sent by default; needs supports_reasoning, and must be listed in supported_reasoning_efforts when that is not empty.";
const effortsHelp = "Reasoning efforts the model accepts; a non-empty list needs supports_reasoning.";
const inputHelp = "Input types the model accepts (text, image, file); empty leaves them unspecified.";
const outputHelp = "Output types the model returns; empty leaves them unspecified.";

export const ConfiguredModel = component("ConfiguredModel", Type.Object(
  {
    id: Id("configuredModel"),
    org_id: Id("org"),
    model_provider_config_id: Id("modelProviderConfig"),
    management_kind: ManagementKindSchema,
    name: Type.String({ description: "The name agent configurations use to pick the model." }),
    current_revision_id: Id("modelRevision"),
    provider_model_slug: Type.String(),
    context_window_tokens: Type.Integer(),
    max_output_tokens: Type.Integer(),
    default_max_output_tokens: Type.Union([Type.Integer(), Type.Null()]),
    default_cache_retention: CacheRetentionSchema,
    supports_tools: Type.Boolean(),
    supports_reasoning: Type.Boolean(),
    default_reasoning_effort: Type.String(),
    supported_reasoning_efforts: Type.Array(Type.String()),
    input_modalities: Type.Array(Type.String()),
    output_modalities: Type.Array(Type.String()),
    api_variant_options: Type.Unsafe<Record<string, unknown>>({ type: "object", additionalProperties: true }),
    pricing: Type.Union([ModelPricing, Type.Null()], { description: "The current revision's prices; null when it has none." }),
    created_at: Timestamp,
    updated_at: Timestamp,
    revision_created_at: Timestamp,
  },
  strict,
));

export const CreateConfiguredModelRequest = component("CreateConfiguredModelRequest", Type.Object(
  {
    name: ResourceName,
    provider_model_slug: Type.String({ minLength: 1, maxLength: 512, description: slugHelp }),
    context_window_tokens: ContextWindow(windowHelp),
    max_output_tokens: Type.Optional(TokenCount(maxOutputHelp)),
    default_max_output_tokens: Type.Optional(TokenCount(defaultOutputHelp)),
    default_cache_retention: Type.Optional(Type.Enum([...CACHE_RETENTIONS], { description: "Default `short`." })),
    supports_tools: Type.Optional(Type.Boolean({ default: true, description: toolsHelp })),
    supports_reasoning: Type.Optional(Type.Boolean({ default: false, description: reasoningHelp })),
    default_reasoning_effort: Type.Optional(Type.String({ maxLength: 64, description: effortHelp })),
    supported_reasoning_efforts: Type.Optional(Labels(effortsHelp)),
    input_modalities: Type.Optional(Labels(inputHelp)),
    output_modalities: Type.Optional(Labels(outputHelp)),
    api_variant_options: Type.Optional(ApiVariantOptions),
    pricing: Type.Optional(ModelPricing),
  },
  { additionalProperties: false, description: "Names one model of the provider and says what it can do. Names are unique per provider config." },
));
export type CreateConfiguredModelRequest = Static<typeof CreateConfiguredModelRequest>;

export const UpdateConfiguredModelRequest = component("UpdateConfiguredModelRequest", Type.Object(
  {
    name: Type.Optional(ResourceName),
    provider_model_slug: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: slugHelp })),
    context_window_tokens: Type.Optional(ContextWindow(windowHelp)),
    max_output_tokens: Type.Optional(TokenCount("Output ceiling; cannot be cleared.")),
    default_max_output_tokens: Type.Optional(
      Type.Union([TokenCount(), Type.Null()], { description: "null clears it (not allowed for Anthropic Messages, which needs a cap)." }),
    ),
    default_cache_retention: Type.Optional(CacheRetentionSchema),
    supports_tools: Type.Optional(Type.Boolean({ description: toolsHelp })),
    supports_reasoning: Type.Optional(Type.Boolean({ description: reasoningHelp })),
    default_reasoning_effort: Type.Optional(Type.String({ maxLength: 64, description: effortHelp })),
    supported_reasoning_efforts: Type.Optional(Labels(effortsHelp)),
    input_modalities: Type.Optional(Labels(inputHelp)),
    output_modalities: Type.Optional(Labels(outputHelp)),
    api_variant_options: Type.Optional(ApiVariantOptions),
    pricing: Type.Optional(Type.Union([ModelPricing, Type.Null()], { description: "The model's prices; null removes them (a model without pricing costs 0)." })),
  },
  {
    additionalProperties: false,
    description:
      "Omitted fields keep their values. A change to anything but the name adds a new immutable revision and makes it " +
      "current (agents keep the revision they launched with); a rename alone adds none.",
  },
));
export type UpdateConfiguredModelRequest = Static<typeof UpdateConfiguredModelRequest>;

export const ConfiguredModelSummary = component("ConfiguredModelSummary", Type.Object(
  {
    id: Id("configuredModel"),
    org_id: Id("org"),
    model_provider_config_id: Id("modelProviderConfig"),
    name: Type.String(),
    provider_config: Type.String({ description: "The name of the provider config that owns the model." }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  strict,
));

export const ListConfiguredModelsQuery = Type.Object({ limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) }, strict);

export const ConfiguredModelParams = Type.Object({
  orgID: Id("org"),
  modelProviderConfigID: Id("modelProviderConfig"),
  configuredModelID: Id("configuredModel"),
});
