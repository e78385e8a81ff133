import { index, integer, jsonb, pgTable, text, unique, uuid } from "drizzle-orm/pg-core";
import { idColumn, optionalTime } from "./columns.js";
import { integrations } from "./integrations.js";

/**
 * One inbound provider event (a Slack event or interaction, a Discord or GitHub delivery), kept from the
 * moment svc answered the provider until it was handled: the provider's answer never waits on the work,
 * and a crash after the answer loses nothing. Unique per provider event id, so a provider's retry of the
 * same delivery is a no-op. `retry_at` is when a pending receipt may next be tried (null: now); a claim
 * moves it forward as a lease. States: pending, processed, failed. Shared contract of every kind (docs/architecture.md, "Inbound events").
 */
export const integrationEventReceipts = pgTable(
  "integration_event_receipts",
  {
    id: idColumn(),
    integrationId: uuid("integration_id")
      .notNull()
      .references(() => integrations.id, { onDelete: "cascade" }),
    providerEventId: text("provider_event_id").notNull(),
    eventKind: text("event_kind").notNull(),
    payload: jsonb("payload").$type<Record<string, unknown>>().notNull(),
    state: text("state").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    retryAt: optionalTime("retry_at"),
    failure: text("failure"),
    receivedAt: optionalTime("received_at").notNull().defaultNow(),
    processedAt: optionalTime("processed_at"),
  },
  (t) => [
    unique("integration_event_receipts_event").on(t.integrationId, t.providerEventId),
    index("integration_event_receipts_due_idx").on(t.state, t.retryAt),
  ],
);
