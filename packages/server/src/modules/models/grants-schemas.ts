import { Type, type Static } from "typebox";
import { Cursor, Limit, NameFilter, ResourceSort } from "../../platform/http/lists.js";
import { Id, Timestamp } from "../../platform/http/schemas.js";
import { CACHE_RETENTIONS, CacheRetentionSchema, ConfiguredModelSummary, ContextWindow, Labels, TokenCount } from "./configured-schemas.js";
import { component } from "../../platform/http/components.js";

const strict = { additionalProperties: false } as const;
const NullableInt = (description: string) => Type.Union([Type.Integer(), Type.Null()], { description });
const NullableBool = (description: string) => Type.Union([Type.Boolean(), Type.Null()], { description });

export const ProjectModelGrant = component("ProjectModelGrant", Type.Object(
  {
    id: Id("modelGrant"),
    org_id: Id("org"),
    project_id: Id("project"),
    configured_model_id: Id("configuredModel"),
    context_window_tokens: Type.Optional(NullableInt("Project limit; null inherits the model's.")),
    max_output_tokens: Type.Optional(NullableInt("Project output ceiling; null inherits the model's.")),
    default_max_output_tokens: Type.Optional(NullableInt("Project default output cap; null inherits the model's.")),
    default_cache_retention: Type.Optional(CacheRetentionSchema),
    supports_tools: Type.Optional(NullableBool("Project tool gate; null inherits the model's.")),
    supports_reasoning: Type.Optional(NullableBool("Project reasoning gate; null inherits the model's.")),
    default_reasoning_effort: Type.Optional(Type.String({ description: "Omitted when inherited." })),
    supported_reasoning_efforts: Type.Array(Type.String(), { description: "Subset of the model's; empty inherits." }),
    input_modalities: Type.Array(Type.String(), { description: "Subset of the model's; empty inherits." }),
    output_modalities: Type.Array(Type.String(), { description: "Subset of the model's; empty inherits." }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  strict,
));

export const ProjectModelGrantEnvelope = component("ProjectModelGrantEnvelope", Type.Object({ grant: ProjectModelGrant }, strict));
export const ProjectModelGrantListItem = component("ProjectModelGrantListItem", Type.Object({ grant: ProjectModelGrant, model: ConfiguredModelSummary }, strict));

const narrowHelp = "Can only narrow the configured model's current revision, never widen it.";

export const CreateProjectModelGrantRequest = component("CreateProjectModelGrantRequest", Type.Object(
  {
    configured_model_id: Id("configuredModel"),
    context_window_tokens: Type.Optional(ContextWindow("At most the model's context window.")),
    max_output_tokens: Type.Optional(TokenCount("At most the model's ceiling, and below the effective context window.")),
    default_max_output_tokens: Type.Optional(TokenCount("At most the effective output ceiling.")),
    default_cache_retention: Type.Optional(CacheRetentionSchema),
    supports_tools: Type.Optional(Type.Boolean({ description: "Can turn tools off, not on." })),
    supports_reasoning: Type.Optional(Type.Boolean({ description: "Can turn reasoning off, not on." })),
    default_reasoning_effort: Type.Optional(Type.String({ maxLength: 64, description: "Empty inherits." })),
    supported_reasoning_efforts: Type.Optional(Labels("Subset of the model's reasoning efforts.")),
    input_modalities: Type.Optional(Labels("Subset of the model's input types.")),
    output_modalities: Type.Optional(Labels("Subset of the model's output types.")),
  },
  { additionalProperties: false, description: `Gives the project the model. Omitted overrides inherit from the model. ${narrowHelp}` },
));
export type CreateProjectModelGrantRequest = Static<typeof CreateProjectModelGrantRequest>;

export const UpdateProjectModelGrantRequest = component("UpdateProjectModelGrantRequest", Type.Object(
  {
    context_window_tokens: Type.Optional(Type.Union([ContextWindow(), Type.Null()])),
    max_output_tokens: Type.Optional(Type.Union([TokenCount(), Type.Null()])),
    default_max_output_tokens: Type.Optional(Type.Union([TokenCount(), Type.Null()])),
    default_cache_retention: Type.Optional(Type.Union([Type.Enum([...CACHE_RETENTIONS]), Type.Null()])),
    supports_tools: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    supports_reasoning: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    default_reasoning_effort: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()], { description: "null or empty clears it." })),
    supported_reasoning_efforts: Type.Optional(Labels("Empty clears the override.")),
    input_modalities: Type.Optional(Labels("Empty clears the override.")),
    output_modalities: Type.Optional(Labels("Empty clears the override.")),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description:
      "Omitted fields keep their values; null (an empty array for lists) clears an override so the project inherits. " +
      `Checked against the model's current revision. ${narrowHelp} Agents re-apply the grant on their next model call.`,
  },
));
export type UpdateProjectModelGrantRequest = Static<typeof UpdateProjectModelGrantRequest>;

export const ListProjectModelGrantsQuery = Type.Object(
  { name: Type.Optional(NameFilter), sort: Type.Optional(ResourceSort), limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) },
  strict,
);

export const ProjectParams = Type.Object({ orgID: Id("org"), projectID: Id("project") });
export const GrantParams = Type.Object({ orgID: Id("org"), projectID: Id("project"), modelGrantID: Id("modelGrant") });
