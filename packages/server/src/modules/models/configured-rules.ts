import { isDeepStrictEqual } from "node:util";
import { Issues } from "./issues.js";
import type { CacheRetention, CreateConfiguredModelRequest, UpdateConfiguredModelRequest } from "./configured-schemas.js";
import type { ApiFormat } from "./providers-schemas.js";
import { pricingValues, type PricingValues } from "./pricing.js";

/** The runtime settings and prices one immutable revision holds; everything about a model but its name. */
export interface RevisionValues extends PricingValues {
  providerModelSlug: string;
  contextWindowTokens: number;
  maxOutputTokens: number;
  defaultMaxOutputTokens: number | null;
  defaultCacheRetention: CacheRetention;
  supportsTools: boolean;
  supportsReasoning: boolean;
  defaultReasoningEffort: string;
  supportedReasoningEfforts: string[];
  inputModalities: string[];
  outputModalities: string[];
  apiVariantOptions: Record<string, unknown>;
}

/** Defaults when a create request leaves them out (the reference's, except cache retention; see docs). */
export const DEFAULT_MAX_OUTPUT_CEILING = 8192;
export const DEFAULT_OUTPUT_CAP = 4096;
export const DEFAULT_CACHE_RETENTION: CacheRetention = "short";

export function revisionForCreate(format: ApiFormat, input: CreateConfiguredModelRequest): RevisionValues {
  const window = input.context_window_tokens;
  // Unless given, the ceiling is the smaller of 8192 and half the window, raised to a given default cap.
  const maxOutput =
    input.max_output_tokens ?? Math.max(Math.min(DEFAULT_MAX_OUTPUT_CEILING, Math.floor(window / 2)), input.default_max_output_tokens ?? 0);
  const values: RevisionValues = {
    providerModelSlug: input.provider_model_slug,
    contextWindowTokens: window,
    maxOutputTokens: maxOutput,
    defaultMaxOutputTokens: input.default_max_output_tokens ?? Math.min(DEFAULT_OUTPUT_CAP, maxOutput),
    defaultCacheRetention: input.default_cache_retention ?? DEFAULT_CACHE_RETENTION,
    supportsTools: input.supports_tools ?? true,
    supportsReasoning: input.supports_reasoning ?? false,
    defaultReasoningEffort: input.default_reasoning_effort ?? "",
    supportedReasoningEfforts: input.supported_reasoning_efforts ?? [],
    inputModalities: input.input_modalities ?? [],
    outputModalities: input.output_modalities ?? [],
    apiVariantOptions: input.api_variant_options ?? {},
    ...pricingValues(input.pricing),
  };
  checkRevision(format, values, input.max_output_tokens !== undefined);
  return values;
}

/** `current` with the runtime fields of an update applied and checked as a whole. */
export function revisionForUpdate(format: ApiFormat, current: RevisionValues, patch: UpdateConfiguredModelRequest): RevisionValues {
  const values: RevisionValues = {
    providerModelSlug: patch.provider_model_slug ?? current.providerModelSlug,
    contextWindowTokens: patch.context_window_tokens ?? current.contextWindowTokens,
    maxOutputTokens: patch.max_output_tokens ?? current.maxOutputTokens,
    defaultMaxOutputTokens: patch.default_max_output_tokens === undefined ? current.defaultMaxOutputTokens : patch.default_max_output_tokens,
    defaultCacheRetention: patch.default_cache_retention ?? current.defaultCacheRetention,
    supportsTools: patch.supports_tools ?? current.supportsTools,
    supportsReasoning: patch.supports_reasoning ?? current.supportsReasoning,
    defaultReasoningEffort: patch.default_reasoning_effort ?? current.defaultReasoningEffort,
    supportedReasoningEfforts: patch.supported_reasoning_efforts ?? current.supportedReasoningEfforts,
    inputModalities: patch.input_modalities ?? current.inputModalities,
    outputModalities: patch.output_modalities ?? current.outputModalities,
    apiVariantOptions: patch.api_variant_options ?? current.apiVariantOptions,
    ...(patch.pricing === undefined ? pricingOf(current) : pricingValues(patch.pricing)),
  };
  checkRevision(format, values, patch.max_output_tokens !== undefined);
  return values;
}

function pricingOf(v: PricingValues): PricingValues {
  return { inputPerMtok: v.inputPerMtok, outputPerMtok: v.outputPerMtok, cacheReadPerMtok: v.cacheReadPerMtok, cacheWritePerMtok: v.cacheWritePerMtok };
}

export function sameRevision(a: RevisionValues, b: RevisionValues): boolean {
  return isDeepStrictEqual(a, b);
}

/** The whole-model rules; each problem is an issue at the field a client would change. */
function checkRevision(format: ApiFormat, v: RevisionValues, maxOutputGiven: boolean): void {
  const issues = new Issues();
  if (v.maxOutputTokens >= v.contextWindowTokens) {
    issues.add(
      maxOutputGiven ? "/max_output_tokens" : "/context_window_tokens",
      `context_window_tokens (${v.contextWindowTokens}) must be greater than max_output_tokens (${v.maxOutputTokens})`,
    );
  }
  if (v.defaultMaxOutputTokens !== null && v.defaultMaxOutputTokens > v.maxOutputTokens) {
    issues.add("/default_max_output_tokens", `must not exceed max_output_tokens (${v.maxOutputTokens})`);
  }
  if (v.defaultMaxOutputTokens === null && format === "anthropic-messages") {
    issues.add("/default_max_output_tokens", "is required for anthropic-messages, which needs an output cap on every request");
  }
  checkReasoning(issues, v.supportsReasoning, v.defaultReasoningEffort, v.supportedReasoningEfforts);
  issues.throwIfAny();
}

/** Reasoning defaults need reasoning, and a default effort must be one of the listed ones, if any are. */
export function checkReasoning(issues: Issues, supportsReasoning: boolean, effort: string, efforts: readonly string[]): void {
  if (!supportsReasoning && effort !== "") issues.add("/default_reasoning_effort", "needs supports_reasoning");
  if (!supportsReasoning && efforts.length > 0) issues.add("/supported_reasoning_efforts", "needs supports_reasoning");
  if (supportsReasoning && effort !== "" && efforts.length > 0 && !efforts.includes(effort)) {
    issues.add("/default_reasoning_effort", `must be one of the supported reasoning efforts (${efforts.join(", ")})`);
  }
}
