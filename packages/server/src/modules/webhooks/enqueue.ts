import { sql, type SQL } from "drizzle-orm";
import { rawRows, type Tx } from "../../platform/db/index.js";
import { newUuid } from "../../platform/ids.js";
import { WEBHOOK_CHANNEL } from "./channel.js";

/**
 * The event types svc sends (docs/webhooks.md). `webhook.test` is sent only by `POST …/test`, to the one
 * endpoint asked, whatever its event_types.
 */
export const WEBHOOK_EVENT_TYPES = [
  "agent.waiting",
  "agent.idle",
  "agent.failed",
  "budget.warning",
  "budget.exceeded",
  "integration.failed",
  "machine.offline",
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export interface WebhookEvent {
  /** Internal uuid of the organization. */
  orgId: string;
  /** Internal uuid of the project the event is about, or null for an organization's event (an org-wide budget, a machine). */
  projectId: string | null;
  type: WebhookEventType;
  /** The event's `data`, with public ids (it is sent as it is). */
  data: Record<string, unknown>;
}

/**
 * A UUIDv7 made by the database for each row of a multi-row INSERT … SELECT (the application cannot know
 * how many endpoints match): the clock's milliseconds over a random v4 uuid's first 48 bits, and the
 * version bits 0100 turned into 0111 (bits 52 and 53 of the bytea, counted from each byte's low end).
 */
const DB_UUIDV7 = sql`encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) placing substring(int8send((extract(epoch from clock_timestamp()) * 1000)::bigint) from 3) from 1 for 6), 52, 1), 53, 1), 'hex')::uuid`;

/**
 * The INSERT … SELECT that writes one pending delivery per enabled endpoint of the organization whose
 * event_types and project_ids select the event, `RETURNING 1` per row. For a caller that folds it into
 * a statement of its own as a CTE (the engine's record statement, so a model step keeps its statement
 * count); `when` is an extra condition that may name that statement's other CTEs. Pair it with
 * `webhookNotifySql` so the sender hears of it on commit.
 */
export function webhookDeliveriesSql(event: WebhookEvent, when?: SQL): SQL {
  return sql`INSERT INTO webhook_deliveries (id, org_id, endpoint_id, message_id, event_type, occurred_at, data, status, next_attempt_at)
    SELECT ${DB_UUIDV7}, e.org_id, e.id, ${newUuid()}::uuid, ${event.type}::text, date_trunc('milliseconds', statement_timestamp()),
      ${JSON.stringify(event.data)}::jsonb, 'pending', date_trunc('milliseconds', statement_timestamp())
    FROM webhook_endpoints e
    WHERE e.org_id = ${event.orgId}::uuid AND NOT e.disabled
      AND (cardinality(e.event_types) = 0 OR ${event.type}::text = ANY (e.event_types))
      AND (cardinality(e.project_ids) = 0 OR ${event.projectId}::uuid = ANY (e.project_ids))
      ${when ? sql`AND ${when}` : sql``}
    RETURNING 1`;
}

/** A scalar that NOTIFYs the webhook sender on commit when the CTE `cte` (a `webhookDeliveriesSql`) wrote a row. */
export function webhookNotifySql(cte: string): SQL {
  return sql`(SELECT pg_notify(${WEBHOOK_CHANNEL}, '') FROM (SELECT 1 FROM ${sql.identifier(cte)} LIMIT 1) AS written)`;
}

/**
 * Writes the event to the webhook outbox inside `tx`, the transaction that makes the change it reports,
 * so the event is sent exactly when the change commits, and at least once (modules/webhooks/sender.ts).
 * One statement, whether or not any endpoint wants it (then it writes nothing); the sender is woken on
 * commit. `when`, a condition on the caller's own tables, lets the statement decide whether the event
 * happened at all (an integration that was failing already). Answers how many deliveries it wrote.
 */
export async function enqueueWebhookEvents(tx: Tx, event: WebhookEvent, when?: SQL): Promise<number> {
  const [row] = await rawRows<{ written: number }>(
    tx,
    sql`WITH written AS (${webhookDeliveriesSql(event, when)})
      SELECT (SELECT count(*) FROM written)::int AS written, ${webhookNotifySql("written")} AS notified`,
  );
  return row?.written ?? 0;
}
