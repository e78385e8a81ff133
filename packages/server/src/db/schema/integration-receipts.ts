import { sql } from "drizzle-orm";
import { index, integer, jsonb, pgTable, text, unique, uuid } from "drizzle-orm/pg-core";
import { idColumn, optionalTime, requiredTime } from "./columns.js";
import { integrations } from "./integrations.js";

/**
 * Inbound provider events (a Discord message, a GitHub delivery), stored before they are answered and
 * processed later from this table (reference docs: integrations/github, "Once a receipt is accepted, svc
 * retries processing failures through its internal inbox"). Unique per integration and provider event
 * id, so a redelivery is stored once.
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
    payload: jsonb("payload").$type<unknown>().notNull(),
    /** pending | processed | failed */
    state: text("state").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    retryAt: optionalTime("retry_at"),
    failure: text("failure"),
    receivedAt: requiredTime("received_at").default(sql`now()`),
    processedAt: optionalTime("processed_at"),
  },
  (t) => [
    unique("integration_event_receipts_event").on(t.integrationId, t.providerEventId),
    index("integration_event_receipts_due_idx").on(t.state, t.retryAt),
  ],
);
