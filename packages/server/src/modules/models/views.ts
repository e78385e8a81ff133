import { iso } from "../../platform/http/schemas.js";
import { encodeId } from "../../platform/ids.js";
import type { ModelRow, ModelWithRevision, RevisionRow } from "./configured-store.js";
import type { CacheRetention } from "./configured-schemas.js";
import type { GrantListRow, GrantRow } from "./grants-store.js";
import type { ApiFormat, AuthKind, ManagementKind } from "./providers-schemas.js";
import type { ProviderRow } from "./providers-store.js";
import { pricingView, storedPricing } from "./pricing.js";

export function providerView(row: ProviderRow) {
  return {
    id: encodeId("modelProviderConfig", row.id),
    org_id: encodeId("org", row.orgId),
    management_kind: row.managementKind as ManagementKind,
    name: row.name,
    api_format: row.apiFormat as ApiFormat,
    api_variant: row.apiVariant,
    base_url: row.baseUrl,
    endpoint_path: row.endpointPath,
    request_timeout_ms: row.requestTimeoutMs,
    auth_kind: row.authKind as AuthKind,
    auth_options: row.authHeaderName === null ? {} : { header_name: row.authHeaderName },
    credential_secret_id: encodeId("secret", row.credentialSecretId),
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

export function configuredModelView({ model, revision }: ModelWithRevision) {
  return {
    id: encodeId("configuredModel", model.id),
    org_id: encodeId("org", model.orgId),
    model_provider_config_id: encodeId("modelProviderConfig", model.modelProviderConfigId),
    management_kind: model.managementKind as ManagementKind,
    name: model.name,
    current_revision_id: encodeId("modelRevision", revision.id),
    ...revisionFields(revision),
    created_at: iso(model.createdAt),
    updated_at: iso(model.updatedAt),
    revision_created_at: iso(revision.createdAt),
  };
}

function revisionFields(revision: RevisionRow) {
  return {
    provider_model_slug: revision.providerModelSlug,
    context_window_tokens: revision.contextWindowTokens,
    max_output_tokens: revision.maxOutputTokens,
    default_max_output_tokens: revision.defaultMaxOutputTokens,
    default_cache_retention: revision.defaultCacheRetention as CacheRetention,
    supports_tools: revision.supportsTools,
    supports_reasoning: revision.supportsReasoning,
    default_reasoning_effort: revision.defaultReasoningEffort,
    supported_reasoning_efforts: revision.supportedReasoningEfforts,
    input_modalities: revision.inputModalities,
    output_modalities: revision.outputModalities,
    api_variant_options: revision.apiVariantOptions,
    pricing: pricingView(storedPricing(revision)),
  };
}

export function modelSummaryView(model: ModelRow, providerName: string) {
  return {
    id: encodeId("configuredModel", model.id),
    org_id: encodeId("org", model.orgId),
    model_provider_config_id: encodeId("modelProviderConfig", model.modelProviderConfigId),
    name: model.name,
    provider_config: providerName,
    created_at: iso(model.createdAt),
    updated_at: iso(model.updatedAt),
  };
}

/** A grant: unset numeric and boolean overrides show as null, unset string overrides are left out. */
export function grantView(grant: GrantRow) {
  return {
    id: encodeId("modelGrant", grant.id),
    org_id: encodeId("org", grant.orgId),
    project_id: encodeId("project", grant.projectId),
    configured_model_id: encodeId("configuredModel", grant.configuredModelId),
    context_window_tokens: grant.contextWindowTokens,
    max_output_tokens: grant.maxOutputTokens,
    default_max_output_tokens: grant.defaultMaxOutputTokens,
    ...(grant.defaultCacheRetention === null ? {} : { default_cache_retention: grant.defaultCacheRetention as CacheRetention }),
    supports_tools: grant.supportsTools,
    supports_reasoning: grant.supportsReasoning,
    ...(grant.defaultReasoningEffort === null ? {} : { default_reasoning_effort: grant.defaultReasoningEffort }),
    supported_reasoning_efforts: grant.supportedReasoningEfforts,
    input_modalities: grant.inputModalities,
    output_modalities: grant.outputModalities,
    created_at: iso(grant.createdAt),
    updated_at: iso(grant.updatedAt),
  };
}

export function grantListItemView(row: GrantListRow) {
  return { grant: grantView(row.grant), model: modelSummaryView(row.model, row.providerName) };
}
