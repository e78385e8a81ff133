import { and, eq, gt, inArray, isNull, lt, sql } from "drizzle-orm";
import { deviceFlows } from "../../db/schema/index.js";
import { dbNow, dbSecondsFromNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";

type Db = AppDb | Tx;

/**
 * A poll this much sooner than the interval still counts as on time: clients that schedule polls from
 * when they sent the last one see request latency jitter, and the clock is kept to milliseconds.
 */
const POLL_GRACE_MS = 250;

/** A flow as its decision logic sees it; `expired` and `tooFast` are computed with the database clock. */
export interface FlowState {
  id: string;
  clientName: string;
  tokenName: string;
  intervalSeconds: number;
  expiresAt: Date;
  approvedByUserId: string | null;
  deniedAt: Date | null;
  consumedAt: Date | null;
  expired: boolean;
  tooFast: boolean;
}

const stateColumns = {
  id: deviceFlows.id,
  clientName: deviceFlows.clientName,
  tokenName: deviceFlows.tokenName,
  intervalSeconds: deviceFlows.intervalSeconds,
  expiresAt: deviceFlows.expiresAt,
  approvedByUserId: deviceFlows.approvedByUserId,
  deniedAt: deviceFlows.deniedAt,
  consumedAt: deviceFlows.consumedAt,
  expired: sql<boolean>`${deviceFlows.expiresAt} <= ${dbNow}`.mapWith(Boolean),
  tooFast: sql<boolean>`coalesce(${deviceFlows.lastPolledAt} > ${dbNow}
    - make_interval(secs => ${deviceFlows.intervalSeconds}) + make_interval(secs => ${POLL_GRACE_MS / 1000}), false)`.mapWith(Boolean),
};

/** Inserts a new flow; false when a code hash collided with an existing flow (the caller draws new codes). */
export async function insertFlow(
  tx: Db,
  row: { id: string; deviceCodeHash: string; userCodeHash: string; clientName: string; tokenName: string; intervalSeconds: number; ttlSeconds: number },
): Promise<boolean> {
  const { ttlSeconds, ...values } = row;
  const inserted = await tx
    .insert(deviceFlows)
    .values({ ...values, expiresAt: dbSecondsFromNow(ttlSeconds) })
    .onConflictDoNothing()
    .returning({ id: deviceFlows.id });
  return inserted.length === 1;
}

/** The flow behind a device code, locked so concurrent polls cannot both mint a token. */
export async function lockByDeviceCode(tx: Tx, deviceCodeHash: string): Promise<FlowState | undefined> {
  const [row] = await tx.select(stateColumns).from(deviceFlows).where(eq(deviceFlows.deviceCodeHash, deviceCodeHash)).for("update");
  return row;
}

/** The flow behind a user code, locked for a decision. */
export async function lockByUserCode(tx: Tx, userCodeHash: string): Promise<FlowState | undefined> {
  const [row] = await tx.select(stateColumns).from(deviceFlows).where(eq(deviceFlows.userCodeHash, userCodeHash)).for("update");
  return row;
}

/** A flow still waiting for its user's decision and not yet expired. */
export async function findPendingByUserCode(tx: Db, userCodeHash: string) {
  const [row] = await tx
    .select({ clientName: deviceFlows.clientName, tokenName: deviceFlows.tokenName, expiresAt: deviceFlows.expiresAt })
    .from(deviceFlows)
    .where(
      and(
        eq(deviceFlows.userCodeHash, userCodeHash),
        isNull(deviceFlows.approvedAt),
        isNull(deviceFlows.deniedAt),
        isNull(deviceFlows.consumedAt),
        gt(deviceFlows.expiresAt, dbNow),
      ),
    );
  return row;
}

export async function markPolled(tx: Tx, flowId: string): Promise<void> {
  await tx.update(deviceFlows).set({ lastPolledAt: dbNow }).where(eq(deviceFlows.id, flowId));
}

/** RFC 8628 §3.5: a too-fast poll raises the interval by 5 seconds for this and every later poll. */
export async function slowDown(tx: Tx, flowId: string, maxIntervalSeconds: number): Promise<number> {
  const [row] = await tx
    .update(deviceFlows)
    .set({ lastPolledAt: dbNow, intervalSeconds: sql`least(${deviceFlows.intervalSeconds} + 5, ${maxIntervalSeconds})` })
    .where(eq(deviceFlows.id, flowId))
    .returning({ intervalSeconds: deviceFlows.intervalSeconds });
  return row!.intervalSeconds;
}

export async function markConsumed(tx: Tx, flowId: string): Promise<void> {
  await tx.update(deviceFlows).set({ consumedAt: dbNow, lastPolledAt: dbNow }).where(eq(deviceFlows.id, flowId));
}

/** Records a decision on an undecided, unexpired flow; false if it was decided or expired meanwhile. */
export async function decide(tx: Tx, flowId: string, decision: { approvedBy: string } | "deny"): Promise<boolean> {
  const set = decision === "deny" ? { deniedAt: dbNow } : { approvedByUserId: decision.approvedBy, approvedAt: dbNow };
  const rows = await tx
    .update(deviceFlows)
    .set(set)
    .where(and(eq(deviceFlows.id, flowId), isNull(deviceFlows.approvedAt), isNull(deviceFlows.deniedAt), gt(deviceFlows.expiresAt, dbNow)))
    .returning({ id: deviceFlows.id });
  return rows.length === 1;
}

/** Deletes up to `limit` flows that expired more than a day ago. */
export async function deleteExpired(tx: Tx, limit: number): Promise<number> {
  const batch = tx
    .select({ id: deviceFlows.id })
    .from(deviceFlows)
    .where(lt(deviceFlows.expiresAt, sql`${dbNow} - interval '1 day'`))
    .limit(limit);
  const rows = await tx.delete(deviceFlows).where(inArray(deviceFlows.id, batch)).returning({ id: deviceFlows.id });
  return rows.length;
}
