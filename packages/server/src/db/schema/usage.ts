import { bigint, date, pgTable, uuid, unique } from "drizzle-orm/pg-core";
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
      .on(t.orgId, t.day, t.projectId, t.agentId, t.agentProfileId, t.actorId, t.configuredModelId)
      .nullsNotDistinct(),
  ],
);
