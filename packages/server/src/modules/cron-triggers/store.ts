import { and, asc, count, eq, isNull, lte, or, sql } from "drizzle-orm";
import type { PgInsertValue, PgUpdateSetSource } from "drizzle-orm/pg-core";
import { cronTriggers, type FailureReport } from "../../db/schema/index.js";
import { dbNow, dbSecondsFromNow } from "../../db/schema/columns.js";
import type { AppDb, Database, Tx } from "../../platform/db/index.js";
import { allOf, keyset, nameMatches, type PageRequest } from "../../platform/http/lists.js";

type Db = AppDb | Tx;
export type TriggerRow = typeof cronTriggers.$inferSelect;

const t = cronTriggers;
const sortColumns = { name: t.name, created_at: t.createdAt, updated_at: t.updatedAt, id: t.id };

/** Inserts the trigger unless its Idempotency-Key was used in the project (or commits first); then undefined. */
export async function insertTrigger(tx: Db, row: PgInsertValue<typeof cronTriggers>): Promise<TriggerRow | undefined> {
  const [inserted] = await tx.insert(t).values(row).onConflictDoNothing({ target: [t.projectId, t.idempotencyKey] }).returning();
  return inserted;
}

export async function countInProject(tx: Db, projectId: string): Promise<number> {
  const [row] = await tx.select({ n: count() }).from(t).where(eq(t.projectId, projectId));
  return row?.n ?? 0;
}

export async function findTrigger(tx: Db, orgId: string, projectId: string, id: string, lock?: "update"): Promise<TriggerRow | undefined> {
  const query = tx
    .select()
    .from(t)
    .where(and(eq(t.orgId, orgId), eq(t.projectId, projectId), eq(t.id, id)));
  const [row] = lock ? await query.for(lock) : await query;
  return row;
}

export async function findByIdempotencyKey(tx: Db, projectId: string, key: string): Promise<TriggerRow | undefined> {
  const [row] = await tx.select().from(t).where(and(eq(t.projectId, projectId), eq(t.idempotencyKey, key)));
  return row;
}

export async function updateTrigger(tx: Db, id: string, changes: PgUpdateSetSource<typeof cronTriggers>): Promise<TriggerRow> {
  const [row] = await tx
    .update(t)
    .set({ ...changes, updatedAt: dbNow })
    .where(eq(t.id, id))
    .returning();
  return row!;
}

export async function deleteTrigger(tx: Db, orgId: string, projectId: string, id: string): Promise<boolean> {
  const deleted = await tx
    .delete(t)
    .where(and(eq(t.orgId, orgId), eq(t.projectId, projectId), eq(t.id, id)))
    .returning({ id: t.id });
  return deleted.length > 0;
}

export async function listTriggers(
  tx: Db,
  input: { orgId: string; projectId: string; name?: string; agentId?: string; profileId?: string; page: PageRequest },
): Promise<TriggerRow[]> {
  const ks = keyset(input.page.sort, sortColumns, input.page.cursor);
  return tx
    .select()
    .from(t)
    .where(
      allOf(
        eq(t.orgId, input.orgId),
        eq(t.projectId, input.projectId),
        nameMatches(t.name, input.name),
        input.agentId === undefined ? undefined : eq(t.agentId, input.agentId),
        input.profileId === undefined ? undefined : eq(t.agentProfileId, input.profileId),
        ks.where,
      ),
    )
    .orderBy(...ks.orderBy)
    .limit(input.page.limit + 1);
}

/* The scheduler's statements. */

/** The database clock, for a scheduler run that was not given its own `now`. */
export async function databaseNow(db: Db): Promise<Date> {
  const [row] = await db.select({ now: sql<string>`${dbNow}::text` }).from(sql`(SELECT 1) AS clock`);
  return new Date(row!.now);
}

/**
 * Claims up to `limit` due triggers for `token`: enabled, `next_fire_at` at or before `at`, and not held
 * by a live claim or a retry's backoff (`claimed_until`, on the database clock). Rows another process is
 * claiming at this moment are skipped, not waited for.
 */
export async function claimDue(db: Database, at: Date, token: string, leaseSeconds: number, limit: number): Promise<TriggerRow[]> {
  return db.tx(async (tx) => {
    const due = tx
      .select({ id: t.id })
      .from(t)
      .where(and(eq(t.enabled, true), lte(t.nextFireAt, at), or(isNull(t.claimedUntil), lte(t.claimedUntil, dbNow))))
      .orderBy(asc(t.nextFireAt))
      .limit(limit)
      .for("update", { skipLocked: true });
    return tx
      .update(t)
      .set({ claimToken: token, claimedUntil: dbSecondsFromNow(leaseSeconds) })
      .where(sql`${t.id} IN (${due})`)
      .returning();
  });
}

/** The claimed trigger, locked for its firing; undefined when the claim was lost (edited, deleted or taken over). */
export async function lockClaimed(tx: Tx, id: string, token: string): Promise<TriggerRow | undefined> {
  const [row] = await tx
    .select()
    .from(t)
    .where(and(eq(t.id, id), eq(t.claimToken, token)))
    .for("update");
  return row;
}

/** A firing's advance: the slot it fired, the next one, and the claim and any failure cleared. */
export async function advance(tx: Tx, id: string, firedSlot: Date, next: Date | null): Promise<TriggerRow> {
  const [row] = await tx
    .update(t)
    .set({
      lastFiredAt: firedSlot,
      nextFireAt: next,
      // A schedule with no occurrence left stops, as a disabled one does (enabled implies a next firing).
      enabled: next !== null,
      failureReport: null,
      failedAttempts: 0,
      claimToken: null,
      claimedUntil: null,
    })
    .where(eq(t.id, id))
    .returning();
  return row!;
}

/**
 * Records a failed firing if `token` still holds the claim. A retry keeps `next_fire_at` and waits out
 * `retryAfterSeconds` as its claim's expiry; otherwise the trigger is disabled.
 */
/** A slot given up: the report says why, and the trigger waits for `next` (none left: it stops, as `advance` does). */
export async function recordSkip(db: Database, id: string, token: string, message: string, next: Date | null): Promise<void> {
  await db.write
    .update(t)
    .set({
      nextFireAt: next,
      enabled: next !== null,
      claimToken: null,
      claimedUntil: null,
      failedAttempts: 0,
      failureReport: sql`${failureReport(message, false)}` as unknown as FailureReport,
    })
    .where(and(eq(t.id, id), eq(t.claimToken, token)));
}

export async function recordFailure(db: Database, id: string, token: string, message: string, retryAfterSeconds: number | null): Promise<void> {
  const report = failureReport(message, retryAfterSeconds !== null);
  const changes =
    retryAfterSeconds === null
      ? { enabled: false, nextFireAt: null, claimToken: null, claimedUntil: null, failedAttempts: sql`${t.failedAttempts} + 1` }
      : { claimToken: null, claimedUntil: dbSecondsFromNow(retryAfterSeconds), failedAttempts: sql`${t.failedAttempts} + 1` };
  await db.write
    .update(t)
    .set({ ...changes, failureReport: sql`${report}` as unknown as FailureReport })
    .where(and(eq(t.id, id), eq(t.claimToken, token)));
}

/** `failure_report` as the API shows it, stamped by the database clock. */
function failureReport(message: string, willRetry: boolean) {
  return sql`jsonb_build_object('message', ${message}::text, 'will_retry', ${willRetry}::boolean, 'failed_at', to_char(${dbNow} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`;
}
