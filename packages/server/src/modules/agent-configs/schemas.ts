import { Type, type Static } from "typebox";
import { Id, Issue, ResourceName, Timestamp } from "../../platform/http/schemas.js";
import { idPattern } from "../../platform/ids.js";
import { component } from "../../platform/http/components.js";
import { Cursor, Limit } from "../../platform/http/lists.js";

export const TAG = "Agent configs and profiles";

const strict = { additionalProperties: false } as const;

export const SOURCE_FORMATS = ["yaml", "json"] as const;
export const MAX_SOURCE_LENGTH = 128 * 1024;

const SourceFormatSchema = component("AgentConfigSourceFormat", Type.Enum([...SOURCE_FORMATS], { description: "How `source` is written." }));

/** The body that creates a config; the agents module takes the same pair when it launches or reconfigures an agent. */
export const AgentConfigSource = component("AgentConfigSource", Type.Object(
  {
    source: Type.String({
      minLength: 1,
      // Parsing YAML costs about a second per MiB of CPU on the event loop; a config is far smaller.
      maxLength: MAX_SOURCE_LENGTH,
      description: "The config document (`version: v1`, `instruction`, `model`, optional `tools`), at most 131072 characters. See docs/agent-configs.md.",
    }),
    source_format: SourceFormatSchema,
  },
  strict,
));
export type AgentConfigSource = Static<typeof AgentConfigSource>;

export const AgentConfigModel = component("AgentConfigModel", Type.Object(
  {
    provider_config: ResourceName,
    name: ResourceName,
    provider_model_slug: Type.String(),
    configured_model_id: Id("configuredModel"),
    current_revision_id: Type.String({
      pattern: idPattern("modelRevision"),
      description: "The model revision the config was compiled against; the config keeps it when the model changes.",
    }),
    api_format: Type.Enum(["openai-responses", "openai-chat-completions", "anthropic-messages"]),
    api_variant: Type.String({ description: "Extensible: default, openrouter, bedrock." }),
    context_window_tokens: Type.Integer(),
    max_output_tokens: Type.Integer({ description: "The output ceiling in this project, below the context window." }),
    default_max_output_tokens: Type.Union([Type.Integer(), Type.Null()], {
      description: "The output cap sent with each request; null when neither the config nor the model sets one (the ceiling is sent).",
    }),
    default_cache_retention: Type.Enum(["none", "short", "long"]),
    supports_tools: Type.Boolean(),
    supports_reasoning: Type.Boolean(),
    default_reasoning_effort: Type.String({ description: "The effort sent with each request; empty for the provider's own default." }),
    supported_reasoning_efforts: Type.Array(Type.String()),
    input_modalities: Type.Array(Type.String()),
    output_modalities: Type.Array(Type.String()),
  },
  { ...strict, description: "The model the config runs on, with the limits that apply to it in the project, fixed at compile time." },
));

const Warning = component("Warning", Type.Object({ code: Type.String(), message: Type.String() }, strict));

export const AgentConfig = component("AgentConfig", Type.Object(
  {
    id: Id("agentConfig"),
    org_id: Id("org"),
    project_id: Id("project"),
    source: Type.Optional(Type.String()),
    source_format: Type.Optional(SourceFormatSchema),
    compiler_version: Type.Optional(Type.String()),
    effective_definition_hash: Type.String({ description: "sha256 of the compiled definition; equal hashes run the same." }),
    model: AgentConfigModel,
    instruction_hash: Type.Optional(Type.String()),
    warnings: Type.Optional(Type.Array(Warning, { minItems: 1, description: "Non-fatal remarks; omitted when there are none." })),
    created_at: Timestamp,
  },
  { ...strict, description: "An immutable, compiled agent config." },
));

/** Configs have no name: they are listed by when they were made. */
export const ListAgentConfigsQuery = Type.Object(
  {
    sort: Type.Optional(Type.Enum(["-created_at", "created_at"], { default: "-created_at" })),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);

export const AgentConfigParams = Type.Object({ orgID: Id("org"), projectID: Id("project"), agentConfigID: Id("agentConfig") });

/** What checking a source without saving it found (`POST …/agent-configs/validate`). */
export const AgentConfigValidation = component("AgentConfigValidation", Type.Object(
  {
    issues: Type.Array(Issue, {
      description: "Every problem a create would report for this source, each with a JSON Pointer and, when locatable, its line and column; empty when it compiles.",
    }),
  },
  { ...strict, description: "The result of checking a config source without saving it." },
));

export const AgentConfigJsonSchema = component("AgentConfigJsonSchema", Type.Record(Type.String(), Type.Unknown(), {
  description: "A JSON Schema (2020-12) of the config document, for editors (completion and hover). The compiler's checks are the judge.",
}));
