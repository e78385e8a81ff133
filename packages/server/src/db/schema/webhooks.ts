import { sql } from "drizzle-orm";
import { boolean, check, foreignKey, index, integer, jsonb, pgTable, text, unique, uuid } from "drizzle-orm/pg-core";
import { createdAt, idColumn, optionalTime, requiredTime, updatedAt } from "./columns.js";
import type { SecretEnvelope } from "./secrets.js";
import { orgs } from "./orgs.js";

/*
 * Outbound webhooks (docs/webhooks.md; Standard Webhooks). An endpoint belongs to its organization; its
 * signing secret is sealed like every other secret (envelope encryption under the master key), and after a
 * rotation the previous one keeps signing beside the new one until `previous_secret_expires_at`.
 */
export const webhookEndpoints = pgTable(
  "webhook_endpoints",
  {
    id: idColumn(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    description: text("description").notNull().default(""),
    /** The event types sent to it; empty sends every type. */
    eventTypes: text("event_types").array().notNull().default(sql`'{}'::text[]`),
    /** The projects whose events it gets; empty means every project (and the organization's own events). */
    projectIds: uuid("project_ids").array().notNull().default(sql`'{}'::uuid[]`),
    disabled: boolean("disabled").notNull().default(false),
    /** Why svc disabled it (five days of failures), or null; cleared when it is enabled again. */
    disabledReason: text("disabled_reason"),
    secret: jsonb("secret").$type<SecretEnvelope>().notNull(),
    previousSecret: jsonb("previous_secret").$type<SecretEnvelope>(),
    previousSecretExpiresAt: optionalTime("previous_secret_expires_at"),
    /** When its current run of failed attempts began; null after any success. */
    failingSince: optionalTime("failing_since"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    unique("webhook_endpoints_org_id_id").on(t.orgId, t.id),
    index("webhook_endpoints_org_created_idx").on(t.orgId, t.createdAt, t.id),
  ],
);

/**
 * The outbox: one row per event and endpoint, written in the transaction that makes the change it reports
 * (modules/webhooks/enqueue.ts), sent by the webhook sender (modules/webhooks/sender.ts) at least once.
 * `message_id` is the `webhook-id` header: the same on every retry and on a redelivery. A pending row's
 * `next_attempt_at` is when it is due; a claim moves it ahead as a lease, so a crashed sender's row comes back.
 */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    endpointId: uuid("endpoint_id").notNull(),
    messageId: uuid("message_id").notNull(),
    eventType: text("event_type").notNull(),
    /** The event's time, sent as the body's `timestamp`. */
    occurredAt: requiredTime("occurred_at"),
    data: jsonb("data").$type<Record<string, unknown>>().notNull(),
    status: text("status").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    nextAttemptAt: optionalTime("next_attempt_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    foreignKey({ columns: [t.orgId, t.endpointId], foreignColumns: [webhookEndpoints.orgId, webhookEndpoints.id] }).onDelete("cascade"),
    check("webhook_deliveries_status", sql`${t.status} IN ('pending', 'succeeded', 'failed')`),
    check("webhook_deliveries_pending_scheduled", sql`(${t.status} = 'pending') = (${t.nextAttemptAt} IS NOT NULL)`),
    index("webhook_deliveries_endpoint_created_idx").on(t.endpointId, t.createdAt, t.id),
    // The sender's claim reads the earliest due rows.
    index("webhook_deliveries_due_idx").on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
  ],
);
