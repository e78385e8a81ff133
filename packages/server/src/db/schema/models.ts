import { sql } from "drizzle-orm";
import { boolean, check, foreignKey, index, integer, jsonb, numeric, pgTable, text, unique, uuid, type PgTableExtraConfigValue } from "drizzle-orm/pg-core";
import { createdAt, idColumn, updatedAt } from "./columns.js";
import { orgs, projects } from "./orgs.js";
import { secrets } from "./secrets.js";

/*
 * Model providers, configured models and their revisions, and project grants. Every row carries org_id
 * and points at its parents through (org_id, id) keys, so nothing can reference another org's rows.
 * References that block deletion (a provider's credential, a model's provider, a grant's model) are
 * ON DELETE RESTRICT; the services check first and answer 409, the keys are the backstop. Deleting an
 * organization or a project still cascades through all of them in one statement.
 */

export const modelProviderConfigs = pgTable(
  "model_provider_configs",
  {
    id: idColumn(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    managementKind: text("management_kind").notNull().default("tenant"),
    name: text("name").notNull(),
    apiFormat: text("api_format").notNull(),
    apiVariant: text("api_variant").notNull().default("default"),
    baseUrl: text("base_url").notNull(),
    endpointPath: text("endpoint_path").notNull(),
    requestTimeoutMs: integer("request_timeout_ms").notNull().default(600000),
    authKind: text("auth_kind").notNull(),
    /** The header carrying the credential with `api_key_header`; null with `bearer_token`. */
    authHeaderName: text("auth_header_name"),
    credentialSecretId: uuid("credential_secret_id").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    unique("model_provider_configs_org_id_id").on(t.orgId, t.id),
    unique("model_provider_configs_org_name").on(t.orgId, t.name),
    foreignKey({
      name: "model_provider_configs_credential_fk",
      columns: [t.orgId, t.credentialSecretId],
      foreignColumns: [secrets.orgId, secrets.id],
    }).onDelete("restrict"),
    check("model_provider_configs_management_kind", sql`${t.managementKind} IN ('tenant', 'cluster')`),
    check("model_provider_configs_api_format", sql`${t.apiFormat} IN ('openai-responses', 'openai-chat-completions', 'anthropic-messages')`),
    check("model_provider_configs_api_variant", sql`${t.apiVariant} IN ('default', 'openrouter', 'bedrock')`),
    check("model_provider_configs_base_url", sql`${t.baseUrl} ~ '^https?://' AND ${t.baseUrl} NOT LIKE '%/'`),
    check("model_provider_configs_endpoint_path", sql`${t.endpointPath} LIKE '/%'`),
    check("model_provider_configs_timeout", sql`${t.requestTimeoutMs} > 0`),
    check(
      "model_provider_configs_auth",
      sql`(${t.authKind} = 'bearer_token' AND ${t.authHeaderName} IS NULL)
        OR (${t.authKind} = 'api_key_header' AND ${t.authHeaderName} IS NOT NULL)`,
    ),
    index("model_provider_configs_org_created_idx").on(t.orgId, t.createdAt, t.id),
    index("model_provider_configs_credential_idx").on(t.orgId, t.credentialSecretId),
  ],
);

export const configuredModels = pgTable(
  "configured_models",
  {
    id: idColumn(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    modelProviderConfigId: uuid("model_provider_config_id").notNull(),
    managementKind: text("management_kind").notNull().default("tenant"),
    name: text("name").notNull(),
    /** Null only inside the transaction that creates the model, between its row and its first revision. */
    currentRevisionId: uuid("current_revision_id"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  // Annotated: this table and its revisions reference each other.
  (t): PgTableExtraConfigValue[] => [
    unique("configured_models_org_id_id").on(t.orgId, t.id),
    unique("configured_models_provider_name").on(t.modelProviderConfigId, t.name),
    foreignKey({
      name: "configured_models_provider_fk",
      columns: [t.orgId, t.modelProviderConfigId],
      foreignColumns: [modelProviderConfigs.orgId, modelProviderConfigs.id],
    }).onDelete("restrict"),
    // The current revision must be one of this model's own revisions (which go when the model goes).
    foreignKey({
      name: "configured_models_current_revision_fk",
      columns: [t.orgId, t.id, t.currentRevisionId],
      foreignColumns: [configuredModelRevisions.orgId, configuredModelRevisions.configuredModelId, configuredModelRevisions.id],
    }),
    check("configured_models_management_kind", sql`${t.managementKind} IN ('tenant', 'cluster')`),
    index("configured_models_provider_created_idx").on(t.modelProviderConfigId, t.createdAt, t.id),
  ],
);

/** Immutable: an update of a model's runtime settings adds a revision; agents pin the one they launched with. */
export const configuredModelRevisions = pgTable(
  "configured_model_revisions",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    configuredModelId: uuid("configured_model_id").notNull(),
    providerModelSlug: text("provider_model_slug").notNull(),
    contextWindowTokens: integer("context_window_tokens").notNull(),
    maxOutputTokens: integer("max_output_tokens").notNull(),
    defaultMaxOutputTokens: integer("default_max_output_tokens"),
    defaultCacheRetention: text("default_cache_retention").notNull(),
    supportsTools: boolean("supports_tools").notNull(),
    supportsReasoning: boolean("supports_reasoning").notNull(),
    defaultReasoningEffort: text("default_reasoning_effort").notNull().default(""),
    supportedReasoningEfforts: jsonb("supported_reasoning_efforts").$type<string[]>().notNull().default([]),
    inputModalities: jsonb("input_modalities").$type<string[]>().notNull().default([]),
    outputModalities: jsonb("output_modalities").$type<string[]>().notNull().default([]),
    apiVariantOptions: jsonb("api_variant_options").$type<Record<string, unknown>>().notNull().default({}),
    /**
     * US dollars per million tokens, up to 6 decimals (docs/usage-and-budgets.md). Input and output are both
     * set or both null (no pricing); the cache prices are optional beside them.
     */
    inputPerMtok: numeric("input_per_mtok", { precision: 18, scale: 6 }),
    outputPerMtok: numeric("output_per_mtok", { precision: 18, scale: 6 }),
    cacheReadPerMtok: numeric("cache_read_per_mtok", { precision: 18, scale: 6 }),
    cacheWritePerMtok: numeric("cache_write_per_mtok", { precision: 18, scale: 6 }),
    createdAt: createdAt(),
  },
  (t) => [
    unique("configured_model_revisions_model_id").on(t.orgId, t.configuredModelId, t.id),
    foreignKey({
      name: "configured_model_revisions_model_fk",
      columns: [t.orgId, t.configuredModelId],
      foreignColumns: [configuredModels.orgId, configuredModels.id],
    }).onDelete("cascade"),
    check("configured_model_revisions_window", sql`${t.maxOutputTokens} >= 1 AND ${t.contextWindowTokens} > ${t.maxOutputTokens}`),
    check(
      "configured_model_revisions_default_output",
      sql`${t.defaultMaxOutputTokens} IS NULL OR (${t.defaultMaxOutputTokens} >= 1 AND ${t.defaultMaxOutputTokens} <= ${t.maxOutputTokens})`,
    ),
    check("configured_model_revisions_cache_retention", sql`${t.defaultCacheRetention} IN ('none', 'short', 'long')`),
    check(
      "configured_model_revisions_pricing",
      sql`((${t.inputPerMtok} IS NULL) = (${t.outputPerMtok} IS NULL))
        AND (${t.inputPerMtok} IS NOT NULL OR (${t.cacheReadPerMtok} IS NULL AND ${t.cacheWritePerMtok} IS NULL))
        AND coalesce(${t.inputPerMtok} >= 0 AND ${t.outputPerMtok} >= 0, true)
        AND coalesce(${t.cacheReadPerMtok} >= 0, true) AND coalesce(${t.cacheWritePerMtok} >= 0, true)`,
    ),
  ],
);

/** A project's access to a configured model; every override column is null (or empty) when inherited. */
export const projectModelGrants = pgTable(
  "project_model_grants",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    projectId: uuid("project_id").notNull(),
    configuredModelId: uuid("configured_model_id").notNull(),
    contextWindowTokens: integer("context_window_tokens"),
    maxOutputTokens: integer("max_output_tokens"),
    defaultMaxOutputTokens: integer("default_max_output_tokens"),
    defaultCacheRetention: text("default_cache_retention"),
    supportsTools: boolean("supports_tools"),
    supportsReasoning: boolean("supports_reasoning"),
    defaultReasoningEffort: text("default_reasoning_effort"),
    supportedReasoningEfforts: jsonb("supported_reasoning_efforts").$type<string[]>().notNull().default([]),
    inputModalities: jsonb("input_modalities").$type<string[]>().notNull().default([]),
    outputModalities: jsonb("output_modalities").$type<string[]>().notNull().default([]),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    unique("project_model_grants_org_id_id").on(t.orgId, t.id),
    unique("project_model_grants_project_model").on(t.projectId, t.configuredModelId),
    foreignKey({ columns: [t.orgId, t.projectId], foreignColumns: [projects.orgId, projects.id] }).onDelete("cascade"),
    foreignKey({
      name: "project_model_grants_model_fk",
      columns: [t.orgId, t.configuredModelId],
      foreignColumns: [configuredModels.orgId, configuredModels.id],
    }).onDelete("restrict"),
    check(
      "project_model_grants_cache_retention",
      sql`${t.defaultCacheRetention} IS NULL OR ${t.defaultCacheRetention} IN ('none', 'short', 'long')`,
    ),
    index("project_model_grants_model_idx").on(t.configuredModelId),
    index("project_model_grants_project_created_idx").on(t.projectId, t.createdAt, t.id),
  ],
);
