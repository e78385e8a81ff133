import type { ModelBinding, ModelPricing } from "../../runtime/definition.js";
import type { PricingValues } from "../models/pricing.js";
import type { ProjectModelLookup } from "../models/project-models.js";
import type { ModelChoice } from "./document.js";
import type { ConfigIssues } from "./issues.js";

/**
 * What the API shows about a config's model beyond what the loop needs (`ModelBinding`). Kept in the
 * stored definition beside it, so a config reads the same forever, whatever happens to the model later.
 */
export interface ModelFacts {
  apiVariant: string;
  /** The output ceiling: the model's for this project, below the config's context window. */
  maxOutputTokens: number;
  /** The config's output cap, else the model's default for this project; null when neither sets one. */
  defaultMaxOutputTokens: number | null;
  supportsTools: boolean;
  supportedReasoningEfforts: string[];
  inputModalities: string[];
  outputModalities: string[];
}

export interface BoundModel {
  binding: ModelBinding;
  facts: ModelFacts;
}

/**
 * Binds the config's model choice to the model the project may use. Missing names and missing grants
 * are issues at the field to change; settings in the config may only narrow the project's limits.
 * Returns undefined when the model could not be found.
 */
export function bindModel(choice: ModelChoice, lookup: ProjectModelLookup, issues: ConfigIssues): BoundModel | undefined {
  if (lookup.found === "nothing") {
    issues.add(["model", "provider_config"], `the organization has no model provider config named "${choice.providerConfig}"`);
    return undefined;
  }
  if (lookup.found === "provider") {
    issues.add(["model", "name"], `provider config "${choice.providerConfig}" has no model named "${choice.name}"`);
    return undefined;
  }
  if (lookup.found === "model") {
    issues.add(
      ["model", "name"],
      `model "${choice.name}" of provider config "${choice.providerConfig}" is not granted to this project; a project admin can grant it`,
    );
    return undefined;
  }
  const { provider, model, revision, effective } = lookup;

  const window = choice.contextWindowTokens ?? effective.contextWindowTokens;
  if (window > effective.contextWindowTokens) {
    issues.add(["model", "context_window_tokens"], `must not exceed the model's context window in this project (${effective.contextWindowTokens})`);
  }
  const ceiling = Math.min(effective.maxOutputTokens, window - 1);
  const cap = choice.defaultMaxOutputTokens ?? effective.defaultMaxOutputTokens;
  if (choice.defaultMaxOutputTokens !== undefined) {
    if (choice.defaultMaxOutputTokens > effective.maxOutputTokens) {
      issues.add(["model", "default_max_output_tokens"], `must not exceed the model's max_output_tokens in this project (${effective.maxOutputTokens})`);
    } else if (choice.defaultMaxOutputTokens >= window) {
      issues.add(["model", "default_max_output_tokens"], `must be below the context window (${window})`);
    }
  } else if (cap !== null && cap >= window) {
    issues.add(
      ["model", "context_window_tokens"],
      `must be above the model's default output cap (${cap}); set a smaller default_max_output_tokens as well`,
    );
  }

  if (choice.reasoning !== undefined && !effective.supportsReasoning) {
    issues.add(["model", "reasoning"], "the model does not support reasoning in this project; remove reasoning");
  }
  const effort = choice.reasoning?.effort;
  const efforts = effective.supportedReasoningEfforts;
  if (effort !== undefined && effective.supportsReasoning && efforts.length > 0 && !efforts.includes(effort)) {
    issues.add(["model", "reasoning", "effort"], `must be one of the model's reasoning efforts: ${efforts.join(", ")}`);
  }

  return {
    binding: {
      modelProviderConfigId: provider.id,
      providerConfigName: provider.name,
      configuredModelId: model.id,
      configuredModelRevisionId: revision.id,
      name: model.name,
      apiFormat: provider.apiFormat as ModelBinding["apiFormat"],
      providerModelSlug: effective.providerModelSlug,
      contextWindowTokens: window,
      // The loop sends this with every request: the config's cap, else the model's default, else the ceiling.
      maxOutputTokens: cap ?? ceiling,
      cacheRetention: choice.cacheRetention ?? effective.defaultCacheRetention,
      supportsReasoning: effective.supportsReasoning,
      reasoningEffort: effective.supportsReasoning ? (effort ?? effective.defaultReasoningEffort) : "",
      ...pricingBinding(effective),
    },
    facts: {
      apiVariant: provider.apiVariant,
      maxOutputTokens: ceiling,
      defaultMaxOutputTokens: cap,
      supportsTools: effective.supportsTools,
      supportedReasoningEfforts: efforts,
      inputModalities: effective.inputModalities,
      outputModalities: effective.outputModalities,
    },
  };
}

/** The revision's prices for the loop, left out when it has none (so configs of unpriced models compile as before). */
function pricingBinding(values: PricingValues): { pricing?: ModelPricing } {
  if (values.inputPerMtok === null || values.outputPerMtok === null) return {};
  const pricing: ModelPricing = { inputPerMtok: values.inputPerMtok, outputPerMtok: values.outputPerMtok };
  if (values.cacheReadPerMtok !== null) pricing.cacheReadPerMtok = values.cacheReadPerMtok;
  if (values.cacheWritePerMtok !== null) pricing.cacheWritePerMtok = values.cacheWritePerMtok;
  return { pricing };
}
