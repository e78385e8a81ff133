import { bigint, date, pgTable, primaryKey, smallint, text, uuid, unique } from "drizzle-orm/pg-core";
import { orgs } from "./orgs.js";

/*
 * Model usage rolled up per UTC day, written by the statement that records each model call
 * (runtime/store/record.ts), so usage reads (modules/usage) sum a few rows a day instead of scanning events.
 * Only the organization is a foreign key: usage outlives the projects, agents, profiles, actors and models it
 * names, which are kept as plain ids (a deleted one still adds up in the totals).
 */
export const usageDaily = pgTable(
  "usage_daily",
  {
    orgId: uuid("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    /** The UTC day of the database clock when the call was recorded. */
    day: date("day", { mode: "string" }).notNull(),
    projectId: uuid("project_id").notNull(),
    agentId: uuid("agent_id").notNull(),
    /** Null for an agent launched from a config rather than a profile. */
    agentProfileId: uuid("agent_profile_id"),
    /** The actor of the input that opened the turn; null when an organization key sent it naming no actor. */
    actorId: uuid("actor_id"),
    /** The organization API key that sent that input when it named no actor (then actor_id is null); else null. */
    apiKeyId: uuid("api_key_id"),
    configuredModelId: uuid("configured_model_id").notNull(),
    modelCalls: bigint("model_calls", { mode: "number" }).notNull(),
    inputTokens: bigint("input_tokens", { mode: "number" }).notNull(),
    outputTokens: bigint("output_tokens", { mode: "number" }).notNull(),
    cacheReadInputTokens: bigint("cache_read_input_tokens", { mode: "number" }).notNull(),
    cacheWriteInputTokens: bigint("cache_write_input_tokens", { mode: "number" }).notNull(),
    reasoningOutputTokens: bigint("reasoning_output_tokens", { mode: "number" }).notNull(),
    costMicroUsd: bigint("cost_micro_usd", { mode: "number" }).notNull(),
  },
  // The key leads with (org, day): the upsert's conflict target and every usage read's range scan.
  (t) => [
    unique("usage_daily_key")
      .on(t.orgId, t.day, t.projectId, t.agentId, t.agentProfileId, t.actorId, t.apiKeyId, t.configuredModelId)
      .nullsNotDistinct(),
  ],
);

/*
 * The same usage rolled up per budget scope and UTC day: one row per (scope kind, scope id, day) for the org,
 * the project, the agent profile, the agent and the actor of each call, written beside `usage_daily` by the
 * same statement. A budget's measure (runtime/store/budgets.ts) sums at most one row per shard and day of its period
 * from a range of this key, however many agents, actors and models the organization has (docs/performance.md,
 * "A model step with a budget in force"). An org row's scope id is the org's id. A scope's day is split into
 * `USAGE_SCOPE_SHARDS` rows by the calling agent, so that the model calls of many agents of one organization
 * (or project, or actor) do not all wait on one row's lock until the call before them committed.
 */
export const USAGE_SCOPE_SHARDS = 8;

export const usageScopeDaily = pgTable(
  "usage_scope_daily",
  {
    orgId: uuid("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    /** One of the budget scope kinds: org, project, agent_profile, agent, actor. */
    scopeKind: text("scope_kind").notNull(),
    scopeId: uuid("scope_id").notNull(),
    /** The UTC day of the database clock when the call was recorded. */
    day: date("day", { mode: "string" }).notNull(),
    /** 0 to USAGE_SCOPE_SHARDS - 1, from the calling agent's id; a budget sums every shard of its days. */
    shard: smallint("shard").notNull(),
    inputTokens: bigint("input_tokens", { mode: "number" }).notNull(),
    outputTokens: bigint("output_tokens", { mode: "number" }).notNull(),
    costMicroUsd: bigint("cost_micro_usd", { mode: "number" }).notNull(),
  },
  // Led by the org so that deleting an org (the cascade) finds its rows by the key too.
  (t) => [primaryKey({ name: "usage_scope_daily_pkey", columns: [t.orgId, t.scopeKind, t.scopeId, t.day, t.shard] })],
);
