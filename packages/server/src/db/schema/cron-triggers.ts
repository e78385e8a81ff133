import { sql } from "drizzle-orm";
import { boolean, check, foreignKey, index, integer, jsonb, pgTable, text, unique, uuid } from "drizzle-orm/pg-core";
import { createdAt, idColumn, optionalTime, updatedAt } from "./columns.js";
import { agents } from "./agents.js";
import { integrations } from "./integrations.js";
import { projects } from "./orgs.js";

/** What a failed firing left for the trigger's readers (reference: CronTriggerFailureReport). */
export interface FailureReport {
  message: string;
  will_retry: boolean;
  failed_at: string;
}

/**
 * Cron triggers (reference design brief §4, `cron_triggers`), and the durable schedule the scheduler
 * fires: a due row (`next_fire_at` at or before the database clock) is claimed by one process with a
 * claim token and a lease (`claimed_until`); its effect and its advance commit in one transaction. A
 * failed firing keeps its `next_fire_at` and waits out `claimed_until` (the backoff) before it is tried
 * again. The target is an agent or a profile (`target_kind`); the agent is a foreign key, the profile
 * is not: a deleted profile makes the next firing fail visibly and disable the trigger. An integration
 * target (`integration_id`, its schedule capability's `settings`) is a foreign key: deleting the
 * integration deletes its schedules.
 */
export const cronTriggers = pgTable(
  "cron_triggers",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    projectId: uuid("project_id").notNull(),
    name: text("name").notNull(),
    targetKind: text("target_kind").notNull(),
    agentId: uuid("agent_id"),
    agentProfileId: uuid("agent_profile_id"),
    integrationId: uuid("integration_id"),
    /** An integration target's settings, as its kind's schedule capability takes them. */
    settings: jsonb("settings").$type<Record<string, unknown>>(),
    cron: text("cron").notNull(),
    timezone: text("timezone").notNull(),
    messageTemplate: text("message_template").notNull(),
    enabled: boolean("enabled").notNull(),
    nextFireAt: optionalTime("next_fire_at"),
    lastFiredAt: optionalTime("last_fired_at"),
    failureReport: jsonb("failure_report").$type<FailureReport>(),
    /** Failed attempts at the current slot; sets the backoff, and returns to 0 when a firing succeeds. */
    failedAttempts: integer("failed_attempts").notNull().default(0),
    claimToken: uuid("claim_token"),
    claimedUntil: optionalTime("claimed_until"),
    idempotencyKey: text("idempotency_key"),
    requestDigest: text("request_digest").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    unique("cron_triggers_project_idempotency_key").on(t.projectId, t.idempotencyKey),
    foreignKey({ columns: [t.orgId, t.projectId], foreignColumns: [projects.orgId, projects.id] }).onDelete("cascade"),
    foreignKey({ columns: [t.orgId, t.agentId], foreignColumns: [agents.orgId, agents.id] }).onDelete("cascade"),
    foreignKey({ columns: [t.orgId, t.integrationId], foreignColumns: [integrations.orgId, integrations.id] }).onDelete("cascade"),
    check(
      "cron_triggers_target",
      sql`(${t.targetKind} = 'agent' AND ${t.agentId} IS NOT NULL AND ${t.agentProfileId} IS NULL) OR (${t.targetKind} = 'profile' AND ${t.agentProfileId} IS NOT NULL AND ${t.agentId} IS NULL) OR (${t.targetKind} = 'integration' AND ${t.integrationId} IS NOT NULL AND ${t.settings} IS NOT NULL AND ${t.agentId} IS NULL AND ${t.agentProfileId} IS NULL)`,
    ),
    check("cron_triggers_disabled_not_scheduled", sql`${t.enabled} OR ${t.nextFireAt} IS NULL`),
    index("cron_triggers_project_created_idx").on(t.projectId, t.createdAt, t.id),
    index("cron_triggers_agent_idx").on(t.agentId),
    index("cron_triggers_profile_idx").on(t.agentProfileId),
    index("cron_triggers_integration_idx").on(t.integrationId),
    // The scheduler's claim reads the earliest due rows.
    index("cron_triggers_due_idx").on(t.nextFireAt).where(sql`${t.enabled}`),
  ],
);
