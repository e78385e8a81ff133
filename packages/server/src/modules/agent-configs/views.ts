import { iso } from "../../platform/http/schemas.js";
import { encodeId } from "../../platform/ids.js";
import type { StoredDefinition } from "./compile.js";
import type { SourceFormat } from "./source.js";
import type { AgentConfigRow } from "./store.js";

/** A config as the API shows it. Everything comes from the row, so it reads the same for as long as it exists. */
export function agentConfigView(row: AgentConfigRow) {
  // Written only by compileConfig, which stores the model facts beside the definition (see StoredDefinition).
  const { model, modelFacts: facts } = row.compiledDefinition as StoredDefinition;
  return {
    id: encodeId("agentConfig", row.id),
    org_id: encodeId("org", row.orgId),
    project_id: encodeId("project", row.projectId),
    source: row.source,
    source_format: row.sourceFormat as SourceFormat,
    compiler_version: row.compilerVersion,
    effective_definition_hash: row.effectiveDefinitionHash,
    model: {
      provider_config: model.providerConfigName,
      name: model.name,
      provider_model_slug: model.providerModelSlug,
      configured_model_id: encodeId("configuredModel", model.configuredModelId),
      current_revision_id: encodeId("modelRevision", model.configuredModelRevisionId),
      api_format: model.apiFormat,
      api_variant: facts.apiVariant,
      context_window_tokens: model.contextWindowTokens,
      max_output_tokens: facts.maxOutputTokens,
      default_max_output_tokens: facts.defaultMaxOutputTokens,
      default_cache_retention: model.cacheRetention,
      supports_tools: facts.supportsTools,
      supports_reasoning: model.supportsReasoning,
      default_reasoning_effort: model.reasoningEffort,
      supported_reasoning_efforts: facts.supportedReasoningEfforts,
      input_modalities: facts.inputModalities,
      output_modalities: facts.outputModalities,
    },
    instruction_hash: row.instructionHash,
    created_at: iso(row.createdAt),
  };
}
