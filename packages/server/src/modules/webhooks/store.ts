import { and, eq, sql } from "drizzle-orm";
import type { PgInsertValue, PgUpdateSetSource } from "drizzle-orm/pg-core";
import { webhookDeliveries, webhookEndpoints } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import { rawRows, type AppDb, type Tx } from "../../platform/db/index.js";
import { allOf, keyset, type PageRequest } from "../../platform/http/lists.js";
import type { SecretEnvelope } from "../../db/schema/secrets.js";

type Db = AppDb | Tx;
export type EndpointRow = typeof webhookEndpoints.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

const e = webhookEndpoints;
const d = webhookDeliveries;

/* Endpoints. */

export async function insertEndpoint(tx: Db, row: PgInsertValue<typeof webhookEndpoints>): Promise<EndpointRow> {
  const [inserted] = await tx.insert(e).values(row).returning();
  return inserted!;
}

export async function countInOrg(tx: Db, orgId: string): Promise<number> {
  const [row] = await tx.select({ n: sql<number>`count(*)::int` }).from(e).where(eq(e.orgId, orgId));
  return row?.n ?? 0;
}

export async function findEndpoint(tx: Db, orgId: string, id: string, lock?: "update"): Promise<EndpointRow | undefined> {
  const query = tx.select().from(e).where(and(eq(e.orgId, orgId), eq(e.id, id)));
  const [row] = lock ? await query.for(lock) : await query;
  return row;
}

export async function updateEndpoint(tx: Db, id: string, changes: PgUpdateSetSource<typeof webhookEndpoints>): Promise<EndpointRow> {
  const [row] = await tx
    .update(e)
    .set({ ...changes, updatedAt: dbNow })
    .where(eq(e.id, id))
    .returning();
  return row!;
}

/** A rotation: the current secret becomes the previous one, signing beside the new one for `overlapSeconds`. */
export async function rotateSecret(tx: Db, id: string, secret: SecretEnvelope, overlapSeconds: number): Promise<EndpointRow> {
  const [row] = await tx
    .update(e)
    .set({ previousSecret: sql`${e.secret}`, previousSecretExpiresAt: sql`${dbNow} + make_interval(secs => ${overlapSeconds})`, secret, updatedAt: dbNow })
    .where(eq(e.id, id))
    .returning();
  return row!;
}

export async function deleteEndpoint(tx: Db, orgId: string, id: string): Promise<boolean> {
  const deleted = await tx
    .delete(e)
    .where(and(eq(e.orgId, orgId), eq(e.id, id)))
    .returning({ id: e.id });
  return deleted.length > 0;
}

export async function listEndpoints(tx: Db, orgId: string, page: PageRequest): Promise<EndpointRow[]> {
  const ks = keyset(page.sort, { created_at: e.createdAt, updated_at: e.updatedAt, id: e.id }, page.cursor);
  return tx
    .select()
    .from(e)
    .where(allOf(eq(e.orgId, orgId), ks.where))
    .orderBy(...ks.orderBy)
    .limit(page.limit + 1);
}

/** Pending deliveries of an endpoint that is being disabled end as failed, saying why (a redelivery sends them again). */
export async function failPendingOf(tx: Db, endpointId: string, reason: string): Promise<void> {
  await tx
    .update(d)
    .set({ status: "failed", nextAttemptAt: null, lastError: reason, updatedAt: dbNow })
    .where(and(eq(d.endpointId, endpointId), eq(d.status, "pending")));
}

/* Deliveries. */

export async function findDelivery(tx: Db, endpointId: string, id: string): Promise<DeliveryRow | undefined> {
  const [row] = await tx
    .select()
    .from(d)
    .where(and(eq(d.endpointId, endpointId), eq(d.id, id)));
  return row;
}

export async function insertDelivery(tx: Db, row: PgInsertValue<typeof webhookDeliveries>): Promise<DeliveryRow> {
  const [inserted] = await tx.insert(d).values(row).returning();
  return inserted!;
}

export async function listDeliveries(tx: Db, endpointId: string, filter: { status?: string }, page: PageRequest): Promise<DeliveryRow[]> {
  const ks = keyset(page.sort, { created_at: d.createdAt, updated_at: d.updatedAt, id: d.id }, page.cursor);
  return tx
    .select()
    .from(d)
    .where(allOf(eq(d.endpointId, endpointId), filter.status === undefined ? undefined : eq(d.status, filter.status), ks.where))
    .orderBy(...ks.orderBy)
    .limit(page.limit + 1);
}

/* The sender's statements. */

/** A claimed delivery with what sending it needs. */
export interface ClaimedDelivery {
  id: string;
  message_id: string;
  org_id: string;
  endpoint_id: string;
  event_type: string;
  occurred_at_ms: number;
  data: Record<string, unknown>;
  attempts: number;
  url: string;
  secret: SecretEnvelope;
  previous_secret: SecretEnvelope | null;
  /** The database clock when claimed, in Unix seconds: the attempt's `webhook-timestamp`. */
  now_seconds: number;
}

/**
 * Claims up to `limit` due deliveries of enabled endpoints in one statement (`FOR UPDATE SKIP LOCKED`, so
 * concurrent senders never take one row twice): counts the attempt and moves `next_attempt_at` ahead by
 * `leaseSeconds`, so a sender that crashes mid-send leaves a row that comes due again by itself. The
 * previous secret comes along only while it still signs.
 */
export async function claimDue(tx: Db, limit: number, leaseSeconds: number): Promise<ClaimedDelivery[]> {
  const rows = await rawRows<ClaimedDelivery & { data: unknown }>(
    tx,
    sql`WITH due AS (
        SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.status = 'pending' AND d.next_attempt_at <= statement_timestamp() AND NOT e.disabled
        ORDER BY d.next_attempt_at LIMIT ${limit}
        FOR UPDATE OF d SKIP LOCKED
      )
      UPDATE webhook_deliveries d SET attempts = d.attempts + 1,
        next_attempt_at = date_trunc('milliseconds', statement_timestamp()) + make_interval(secs => ${leaseSeconds}),
        updated_at = date_trunc('milliseconds', statement_timestamp())
      FROM due, webhook_endpoints e
      WHERE d.id = due.id AND e.id = d.endpoint_id
      RETURNING d.id, d.message_id, d.org_id, d.endpoint_id, d.event_type, (extract(epoch from d.occurred_at) * 1000)::float8 AS occurred_at_ms,
        d.data, d.attempts, e.url, e.secret,
        CASE WHEN e.previous_secret_expires_at > statement_timestamp() THEN e.previous_secret END AS previous_secret,
        floor(extract(epoch from statement_timestamp()))::float8 AS now_seconds`,
  );
  return rows.map((row) => ({ ...row, data: (typeof row.data === "string" ? JSON.parse(row.data) : row.data) as Record<string, unknown> }));
}

/** Milliseconds until the soonest pending delivery is due (0 when one is due now), or null when none is pending. */
export async function msUntilNextDue(tx: Db): Promise<number | null> {
  const [row] = await rawRows<{ ms: number | null }>(
    tx,
    // GREATEST skips NULLs: over no pending row it would answer 0 ("due now"), and the sender would ask again at once.
    sql`SELECT (extract(epoch from (min(next_attempt_at) - statement_timestamp())) * 1000)::float8 AS ms
      FROM webhook_deliveries WHERE status = 'pending'`,
  );
  return row?.ms === null || row?.ms === undefined ? null : Math.max(0, row.ms);
}

/**
 * A 2xx: the delivery succeeded, and its endpoint is failing no more. Guarded by the attempt it claimed, so
 * an attempt whose lease ran out and was claimed again records nothing over the newer one.
 */
export async function recordSuccess(tx: Db, delivery: { id: string; endpointId: string; attempts: number }, statusCode: number): Promise<void> {
  await rawRows(
    tx,
    sql`WITH done AS (
        UPDATE webhook_deliveries SET status = 'succeeded', next_attempt_at = NULL, last_status_code = ${statusCode}, last_error = NULL,
          updated_at = date_trunc('milliseconds', statement_timestamp())
        WHERE id = ${delivery.id} AND status = 'pending' AND attempts = ${delivery.attempts}
        RETURNING endpoint_id
      )
      UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ${delivery.endpointId} AND failing_since IS NOT NULL AND EXISTS (SELECT 1 FROM done)`,
  );
}

/**
 * A failed attempt: due again after `retryInSeconds`, or failed for good when null. The endpoint's run of
 * failures starts now unless it had started; answers whether that run is now `disableAfterSeconds` old.
 */
export async function recordFailure(
  tx: Db,
  delivery: { id: string; endpointId: string; attempts: number },
  outcome: { statusCode: number | null; error: string; retryInSeconds: number | null },
  disableAfterSeconds: number,
): Promise<{ failingTooLong: boolean }> {
  const [row] = await rawRows<{ failing_too_long: boolean }>(
    tx,
    sql`WITH failed AS (
        UPDATE webhook_deliveries SET
          status = CASE WHEN ${outcome.retryInSeconds}::float8 IS NULL THEN 'failed' ELSE 'pending' END,
          next_attempt_at = date_trunc('milliseconds', statement_timestamp()) + make_interval(secs => ${outcome.retryInSeconds}::float8),
          last_status_code = ${outcome.statusCode}::int, last_error = ${outcome.error},
          updated_at = date_trunc('milliseconds', statement_timestamp())
        WHERE id = ${delivery.id} AND status = 'pending' AND attempts = ${delivery.attempts}
        RETURNING endpoint_id
      ),
      failing AS (
        UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, date_trunc('milliseconds', statement_timestamp()))
        WHERE id = ${delivery.endpointId} AND EXISTS (SELECT 1 FROM failed)
        RETURNING failing_since
      )
      SELECT coalesce((SELECT failing_since <= statement_timestamp() - make_interval(secs => ${disableAfterSeconds}) FROM failing), false) AS failing_too_long`,
  );
  return { failingTooLong: row?.failing_too_long ?? false };
}

/** Deletes up to `limit` settled deliveries older than `days` (the deliveries list keeps a month of history); answers how many. */
export async function sweepSettled(tx: Db, days: number, limit: number): Promise<number> {
  const rows = await rawRows<{ id: string }>(
    tx,
    sql`DELETE FROM webhook_deliveries WHERE id IN (
        SELECT id FROM webhook_deliveries WHERE status <> 'pending' AND updated_at < statement_timestamp() - make_interval(days => ${days}) LIMIT ${limit}
      ) RETURNING id`,
  );
  return rows.length;
}
