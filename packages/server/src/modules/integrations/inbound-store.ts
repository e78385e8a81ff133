import { and, asc, desc, eq, inArray, isNotNull, sql } from "drizzle-orm";
import { integrationEventReceipts, integrations } from "../../db/schema/index.js";
import { dbNow, dbSecondsFromNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { newUuid } from "../../platform/ids.js";
import type { InboundEvent } from "./kind.js";
import type { IntegrationRow } from "./store.js";

type Db = AppDb | Tx;
export type ReceiptRow = typeof integrationEventReceipts.$inferSelect;

const i = integrations;
const r = integrationEventReceipts;

/** More integrations than this sharing one workspace and kind is not a setup svc routes to. */
const MAX_CANDIDATES = 50;

/**
 * The integrations of `kind` with a credential, in one provider tenant, newest first. Without a tenant
 * (Slack's URL verification names none) the newest of the kind: the one being set up is among them.
 */
export async function routableIntegrations(tx: Db, kind: string, tenantId: string | undefined): Promise<IntegrationRow[]> {
  return tx
    .select()
    .from(i)
    .where(and(eq(i.kind, kind), isNotNull(i.credentialSecretId), tenantId === undefined ? undefined : eq(i.providerTenantId, tenantId)))
    .orderBy(desc(i.updatedAt), desc(i.id))
    .limit(MAX_CANDIDATES);
}

/**
 * The integrations among `ids` that still have a credential, as they are now, with the database clock in
 * Unix seconds: a verified request's timestamp is judged by it, never by this process's clock.
 */
export async function signersNow(tx: Db, ids: readonly string[]): Promise<{ rows: IntegrationRow[]; now: number }> {
  const [clock] = await tx.select({ now: sql<number>`extract(epoch from ${dbNow})::float8` }).from(sql`(select 1) as one`);
  const rows = await tx
    .select()
    .from(i)
    .where(and(inArray(i.id, [...ids]), isNotNull(i.credentialSecretId)));
  return { rows, now: Math.floor(Number(clock!.now)) };
}

/** Keeps each event once per integration: a provider's retry of a delivery inserts nothing. Answers how many were new. */
export async function insertReceipts(tx: Tx, integrationId: string, events: readonly InboundEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const rows = events.map((event) => ({ id: newUuid(), integrationId, providerEventId: event.providerEventId, eventKind: event.eventKind, payload: event.payload }));
  const inserted = await tx.insert(r).values(rows).onConflictDoNothing().returning({ id: r.id });
  return inserted.length;
}

/**
 * Claims up to `limit` due receipts: each gets one more attempt and its retry_at moves `leaseSeconds`
 * ahead, so another process skips it while it is handled and a crashed handler's receipt comes back.
 */
export async function claimDue(tx: Tx, limit: number, leaseSeconds: number): Promise<Array<{ receipt: ReceiptRow; integration: IntegrationRow }>> {
  const due = tx
    .select({ id: r.id })
    .from(r)
    .where(and(eq(r.state, "pending"), sql`(${r.retryAt} IS NULL OR ${r.retryAt} <= ${dbNow})`))
    .orderBy(asc(r.receivedAt), asc(r.id))
    .limit(limit)
    .for("update", { skipLocked: true });
  const claimed = await tx
    .update(r)
    .set({ attempts: sql`${r.attempts} + 1`, retryAt: dbSecondsFromNow(leaseSeconds) })
    .where(sql`${r.id} IN (${due})`)
    .returning();
  if (claimed.length === 0) return [];
  const owners = await tx
    .select()
    .from(i)
    .where(sql`${i.id} IN (${sql.join(claimed.map((row) => sql`${row.integrationId}`), sql`, `)})`);
  const byId = new Map(owners.map((row) => [row.id, row]));
  // RETURNING keeps no order: oldest first, as received.
  claimed.sort((a, b) => a.receivedAt.getTime() - b.receivedAt.getTime() || (a.id < b.id ? -1 : 1));
  return claimed.flatMap((receipt) => {
    const integration = byId.get(receipt.integrationId);
    return integration ? [{ receipt, integration }] : [];
  });
}

/** Replaces a receipt's payload: what a handler learned on one try (a posted message's ts) that the next must reuse. */
export async function savePayload(tx: Tx, receiptId: string, payload: object): Promise<void> {
  await tx.update(r).set({ payload: payload as Record<string, unknown> }).where(eq(r.id, receiptId));
}

export async function markProcessed(tx: Tx, receiptId: string): Promise<void> {
  await tx.update(r).set({ state: "processed", retryAt: null, failure: null, processedAt: dbNow }).where(eq(r.id, receiptId));
}

/** Another try after `retryInSeconds`, or (null) none: the receipt failed for good and stays for diagnostics. */
export async function markFailure(tx: Tx, receiptId: string, failure: string, retryInSeconds: number | null): Promise<void> {
  const next = retryInSeconds === null ? { state: "failed", retryAt: null, processedAt: dbNow } : { retryAt: dbSecondsFromNow(retryInSeconds) };
  await tx
    .update(r)
    .set({ failure, ...next })
    .where(eq(r.id, receiptId));
}

/**
 * Keeps a receipt whose event waits for something not yet done (ReceiptHeld) for another try, without
 * spending one of its attempts: after half its age, at least a second and at most `maxDelaySeconds`, while
 * it is younger than `lifetimeSeconds` by the database clock. Older, it is settled as processed with `note`.
 * Answers the milliseconds to the next try, or null when it was settled.
 */
export async function holdReceipt(tx: Tx, receiptId: string, limits: { lifetimeSeconds: number; maxDelaySeconds: number }, note: string): Promise<number | null> {
  const age = sql`(${dbNow} - ${r.receivedAt})`;
  const young = sql`${age} < make_interval(secs => ${limits.lifetimeSeconds})`;
  const delay = sql`least(make_interval(secs => ${limits.maxDelaySeconds}), greatest(interval '1 second', ${age} / 2))`;
  const [row] = await tx
    .update(r)
    .set({
      attempts: sql`${r.attempts} - 1`,
      state: sql`CASE WHEN ${young} THEN 'pending' ELSE 'processed' END`,
      retryAt: sql`CASE WHEN ${young} THEN ${dbNow} + ${delay} END`,
      processedAt: sql`CASE WHEN ${young} THEN NULL ELSE ${dbNow} END`,
      failure: sql`CASE WHEN ${young} THEN NULL ELSE ${note}::text END`,
    })
    .where(eq(r.id, receiptId))
    .returning({ waitMs: sql<number | null>`(extract(epoch from ${r.retryAt} - ${dbNow}) * 1000)::float8` });
  return row?.waitMs ?? null;
}

/** Records that the provider failed the integration's runtime work, and when it will be tried again (spec: Integration, runtime_failure). */
export async function recordRuntimeFailure(tx: Tx, integrationId: string, message: string, retryInSeconds: number): Promise<void> {
  await tx
    .update(i)
    .set({ runtimeFailureMessage: message, runtimeFailureRetryAt: dbSecondsFromNow(retryInSeconds) })
    .where(eq(i.id, integrationId));
}

/** Clears a recorded runtime failure after a success; writes nothing when none is recorded. */
export async function clearRuntimeFailure(tx: Tx, integrationId: string): Promise<void> {
  await tx
    .update(i)
    .set({ runtimeFailureMessage: null, runtimeFailureRetryAt: null })
    .where(and(eq(i.id, integrationId), isNotNull(i.runtimeFailureMessage)));
}

/** Handled receipts are kept a day (Slack redelivers within hours), failed ones a week for diagnostics (reference docs: integrations/overview, "Delivery and failures"). */
const KEEP_PROCESSED_SECONDS = 24 * 60 * 60;
const KEEP_FAILED_SECONDS = 7 * 24 * 60 * 60;

/** Deletes settled receipts past their keeping time, at most `limit`; answers how many. */
export async function sweepSettled(tx: Tx, limit: number): Promise<number> {
  const old = tx
    .select({ id: r.id })
    .from(r)
    .where(
      sql`(${r.state} = 'processed' AND ${r.processedAt} < ${dbNow} - make_interval(secs => ${KEEP_PROCESSED_SECONDS}))
        OR (${r.state} = 'failed' AND ${r.processedAt} < ${dbNow} - make_interval(secs => ${KEEP_FAILED_SECONDS}))`,
    )
    .limit(limit);
  const deleted = await tx.delete(r).where(sql`${r.id} IN (${old})`).returning({ id: r.id });
  return deleted.length;
}
