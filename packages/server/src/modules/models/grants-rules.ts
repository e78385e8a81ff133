import { isDeepStrictEqual } from "node:util";
import { checkReasoning, type RevisionValues } from "./configured-rules.js";
import type { CacheRetention } from "./configured-schemas.js";
import type { CreateProjectModelGrantRequest, UpdateProjectModelGrantRequest } from "./grants-schemas.js";
import { Issues } from "./issues.js";

/** A project's overrides of a model: null (or an empty list) inherits the model's value. */
export interface GrantOverrides {
  contextWindowTokens: number | null;
  maxOutputTokens: number | null;
  defaultMaxOutputTokens: number | null;
  defaultCacheRetention: CacheRetention | null;
  supportsTools: boolean | null;
  supportsReasoning: boolean | null;
  defaultReasoningEffort: string | null;
  supportedReasoningEfforts: string[];
  inputModalities: string[];
  outputModalities: string[];
}

export function overridesForCreate(input: CreateProjectModelGrantRequest): GrantOverrides {
  return {
    contextWindowTokens: input.context_window_tokens ?? null,
    maxOutputTokens: input.max_output_tokens ?? null,
    defaultMaxOutputTokens: input.default_max_output_tokens ?? null,
    defaultCacheRetention: input.default_cache_retention ?? null,
    supportsTools: input.supports_tools ?? null,
    supportsReasoning: input.supports_reasoning ?? null,
    defaultReasoningEffort: input.default_reasoning_effort || null,
    supportedReasoningEfforts: input.supported_reasoning_efforts ?? [],
    inputModalities: input.input_modalities ?? [],
    outputModalities: input.output_modalities ?? [],
  };
}

/** Omitted fields keep their value; null and "" (and [] for lists) clear the override. */
export function overridesForUpdate(current: GrantOverrides, patch: UpdateProjectModelGrantRequest): GrantOverrides {
  const pick = <T>(value: T | undefined, fallback: T): T => (value === undefined ? fallback : value);
  return {
    contextWindowTokens: pick(patch.context_window_tokens, current.contextWindowTokens),
    maxOutputTokens: pick(patch.max_output_tokens, current.maxOutputTokens),
    defaultMaxOutputTokens: pick(patch.default_max_output_tokens, current.defaultMaxOutputTokens),
    defaultCacheRetention: pick(patch.default_cache_retention, current.defaultCacheRetention),
    supportsTools: pick(patch.supports_tools, current.supportsTools),
    supportsReasoning: pick(patch.supports_reasoning, current.supportsReasoning),
    defaultReasoningEffort: patch.default_reasoning_effort === undefined ? current.defaultReasoningEffort : patch.default_reasoning_effort || null,
    supportedReasoningEfforts: pick(patch.supported_reasoning_efforts, current.supportedReasoningEfforts),
    inputModalities: pick(patch.input_modalities, current.inputModalities),
    outputModalities: pick(patch.output_modalities, current.outputModalities),
  };
}

export function sameOverrides(a: GrantOverrides, b: GrantOverrides): boolean {
  return isDeepStrictEqual(a, b);
}

/**
 * A grant may only narrow the model's current revision: smaller limits, tools or reasoning turned off,
 * subsets of its lists. The settings an agent of the project would get must still hold together.
 */
export function checkOverrides(model: RevisionValues, o: GrantOverrides): void {
  const issues = new Issues();
  if (o.contextWindowTokens !== null && o.contextWindowTokens > model.contextWindowTokens) {
    issues.add("/context_window_tokens", `must not exceed the model's context window (${model.contextWindowTokens})`);
  }
  const window = o.contextWindowTokens ?? model.contextWindowTokens;
  if (o.maxOutputTokens !== null) {
    if (o.maxOutputTokens > model.maxOutputTokens) issues.add("/max_output_tokens", `must not exceed the model's max_output_tokens (${model.maxOutputTokens})`);
    else if (o.maxOutputTokens >= window) issues.add("/max_output_tokens", `must be below the project's context window (${window})`);
  }
  const maxOutput = o.maxOutputTokens ?? model.maxOutputTokens;
  const defaultOutput = o.defaultMaxOutputTokens ?? model.defaultMaxOutputTokens;
  if (defaultOutput !== null) {
    // An inherited default that no longer fits is fixed by overriding it too.
    const which = o.defaultMaxOutputTokens === null ? `the model's default (${defaultOutput}); set one for the project` : `${defaultOutput}`;
    if (defaultOutput > maxOutput) issues.add("/default_max_output_tokens", `${which} must not exceed max_output_tokens (${maxOutput})`);
    else if (defaultOutput >= window) issues.add("/default_max_output_tokens", `${which} must be below the context window (${window})`);
  }
  if (o.supportsTools === true && !model.supportsTools) issues.add("/supports_tools", "cannot enable tools the model does not support");
  if (o.supportsReasoning === true && !model.supportsReasoning) {
    issues.add("/supports_reasoning", "cannot enable reasoning the model does not support");
  }
  const reasoning = o.supportsReasoning ?? model.supportsReasoning;
  if (model.supportedReasoningEfforts.length > 0) subset(issues, "/supported_reasoning_efforts", o.supportedReasoningEfforts, model.supportedReasoningEfforts);
  if (model.inputModalities.length > 0) subset(issues, "/input_modalities", o.inputModalities, model.inputModalities);
  if (model.outputModalities.length > 0) subset(issues, "/output_modalities", o.outputModalities, model.outputModalities);
  // What the project would use: its own lists and default, else the model's (none once reasoning is off).
  const efforts = o.supportedReasoningEfforts.length > 0 ? o.supportedReasoningEfforts : reasoning ? model.supportedReasoningEfforts : [];
  const effort = o.defaultReasoningEffort ?? (reasoning ? model.defaultReasoningEffort : "");
  checkReasoning(issues, reasoning, effort, efforts);
  issues.throwIfAny();
}

function subset(issues: Issues, path: string, values: readonly string[], allowed: readonly string[]): void {
  const extra = values.filter((value) => !allowed.includes(value));
  if (extra.length > 0) issues.add(path, `${extra.join(", ")} not offered by the model (${allowed.join(", ")})`);
}

/**
 * What a project gets of a model: the revision narrowed by the grant. Overrides were checked when they were
 * written, but the model may have been revised since, so every value is narrowed again here: the smaller
 * limit, a capability only where both allow it, lists reduced to what both offer.
 */
export function effectiveModel(model: RevisionValues, o: GrantOverrides): RevisionValues {
  const window = Math.min(model.contextWindowTokens, o.contextWindowTokens ?? Infinity);
  const maxOutput = Math.min(model.maxOutputTokens, o.maxOutputTokens ?? Infinity, window - 1);
  const defaultOutput = o.defaultMaxOutputTokens ?? model.defaultMaxOutputTokens;
  const reasoning = model.supportsReasoning && o.supportsReasoning !== false;
  const efforts = reasoning ? narrowList(model.supportedReasoningEfforts, o.supportedReasoningEfforts) : [];
  const effort = reasoning ? (o.defaultReasoningEffort ?? model.defaultReasoningEffort) : "";
  return {
    ...model,
    contextWindowTokens: window,
    maxOutputTokens: maxOutput,
    defaultMaxOutputTokens: defaultOutput === null ? null : Math.min(defaultOutput, maxOutput),
    defaultCacheRetention: o.defaultCacheRetention ?? model.defaultCacheRetention,
    supportsTools: model.supportsTools && o.supportsTools !== false,
    supportsReasoning: reasoning,
    defaultReasoningEffort: efforts.length > 0 && !efforts.includes(effort) ? "" : effort,
    supportedReasoningEfforts: efforts,
    inputModalities: narrowList(model.inputModalities, o.inputModalities),
    outputModalities: narrowList(model.outputModalities, o.outputModalities),
  };
}

/** An empty list leaves it unspecified, so the other side's list applies; two lists keep what both hold. */
function narrowList(model: readonly string[], override: readonly string[]): string[] {
  if (override.length === 0) return [...model];
  if (model.length === 0) return [...override];
  return override.filter((value) => model.includes(value));
}
