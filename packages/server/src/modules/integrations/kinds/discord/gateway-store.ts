import { and, eq, isNotNull, sql } from "drizzle-orm";
import { discordGatewaySessions, integrations } from "../../../../db/schema/index.js";
import { dbSecondsFromNow } from "../../../../db/schema/columns.js";
import type { AppDb, Database } from "../../../../platform/db/index.js";
import { isForeignKeyViolation, rawRows } from "../../../../platform/db/index.js";
import { insertReceipts } from "../../inbound-store.js";

const g = discordGatewaySessions;
/** The most integrations one scan considers: a bounded list, as everywhere. */
const MAX_SCANNED = 500;

export interface GatewayTarget {
  integrationId: string;
  orgId: string;
  projectId: string;
  credentialSecretId: string;
  /** A reconnect or a new credential moves it: the connection starts over at once, whatever it was waiting for. */
  setupRevision: number;
}

/** Where a session stands: what the next connection resumes, or nulls for a fresh IDENTIFY. */
export interface StoredSession {
  sessionId: string | null;
  resumeGatewayUrl: string | null;
  seq: number | null;
}

/** A lease held elsewhere, or taken over after this holder's expired: whoever stored nothing must stop. */
export class LeaseLost extends Error {
  override name = "LeaseLost";
}

/** The active discord_thread integrations, each needing one Gateway connection somewhere. */
export async function activeDiscordIntegrations(db: AppDb): Promise<GatewayTarget[]> {
  const rows = await db
    .select({ integrationId: integrations.id, orgId: integrations.orgId, projectId: integrations.projectId, credentialSecretId: integrations.credentialSecretId, setupRevision: integrations.setupRevision })
    .from(integrations)
    .where(and(eq(integrations.kind, "discord_thread"), eq(integrations.state, "active"), isNotNull(integrations.credentialSecretId)))
    .orderBy(integrations.id)
    .limit(MAX_SCANNED);
  return rows.map((row) => ({ ...row, credentialSecretId: row.credentialSecretId! }));
}

/**
 * Takes the lease for `seconds` if nobody holds it or its holder let it expire (the database clock
 * decides); answers the stored session to resume, or undefined when another holder has it.
 */
export async function claimLease(db: AppDb, integrationId: string, holder: string, seconds: number): Promise<StoredSession | undefined> {
  const [row] = await rawRows<{ session_id: string | null; resume_gateway_url: string | null; seq: string | number | null }>(
    db,
    sql`INSERT INTO discord_gateway_sessions (integration_id, holder, lease_expires_at)
        VALUES (${integrationId}, ${holder}, ${dbSecondsFromNow(seconds)})
        ON CONFLICT (integration_id) DO UPDATE SET holder = excluded.holder, lease_expires_at = excluded.lease_expires_at
        WHERE discord_gateway_sessions.holder IS NULL OR discord_gateway_sessions.holder = excluded.holder
           OR discord_gateway_sessions.lease_expires_at < statement_timestamp()
        RETURNING session_id, resume_gateway_url, seq`,
  ).catch((err: unknown) => {
    // The integration was deleted since the scan read it: nothing to hold.
    if (isForeignKeyViolation(err)) return [];
    throw err;
  });
  if (!row) return undefined;
  return { sessionId: row.session_id, resumeGatewayUrl: row.resume_gateway_url, seq: row.seq === null ? null : Number(row.seq) };
}

/** Extends a lease this holder still has; false when it is gone (taken over, or the integration deleted). */
export async function renewLease(db: AppDb, integrationId: string, holder: string, seconds: number): Promise<boolean> {
  const rows = await db
    .update(g)
    .set({ leaseExpiresAt: dbSecondsFromNow(seconds) })
    .where(and(eq(g.integrationId, integrationId), eq(g.holder, holder)))
    .returning({ id: g.integrationId });
  return rows.length > 0;
}

/** Gives the lease up; `forget` also drops the session, so the next holder starts a fresh one. */
export async function releaseLease(db: AppDb, integrationId: string, holder: string, forget: boolean): Promise<void> {
  await db
    .update(g)
    .set({ holder: null, leaseExpiresAt: null, ...(forget ? { sessionId: null, resumeGatewayUrl: null, seq: null } : {}) })
    .where(and(eq(g.integrationId, integrationId), eq(g.holder, holder)));
}

/** Saves the session READY named (or clears it), while this holder still has the lease. */
export async function saveSession(db: AppDb, integrationId: string, holder: string, session: StoredSession): Promise<void> {
  const rows = await db
    .update(g)
    .set({ sessionId: session.sessionId, resumeGatewayUrl: session.resumeGatewayUrl, seq: session.seq })
    .where(and(eq(g.integrationId, integrationId), eq(g.holder, holder)))
    .returning({ id: g.integrationId });
  if (rows.length === 0) throw new LeaseLost("the Gateway lease was lost");
}

/**
 * Stores a received message as an inbound receipt (once per message id) and the sequence number that
 * carried it, in one transaction and only while this holder has the lease: a resumed session never
 * skips a message it had not stored, and a holder that lost the lease stores nothing.
 */
export async function recordMessage(db: Database, integrationId: string, holder: string, seq: number, message: { id: string; payload: Record<string, unknown> }): Promise<void> {
  await db.tx(async (tx) => {
    const rows = await tx
      .update(g)
      .set({ seq })
      .where(and(eq(g.integrationId, integrationId), eq(g.holder, holder)))
      .returning({ id: g.integrationId });
    if (rows.length === 0) throw new LeaseLost("the Gateway lease was lost");
    await insertReceipts(tx, integrationId, [{ providerEventId: message.id, eventKind: "MESSAGE_CREATE", payload: message.payload }]);
  });
}

/**
 * The integration's runtime_failure (spec: Integration, shown by Get integration): the latest connection
 * error and the earliest time of the next attempt, `retrySeconds` from now on the database clock.
 */
export async function recordRuntimeFailure(db: AppDb, integrationId: string, message: string, retrySeconds: number): Promise<void> {
  await db
    .update(integrations)
    .set({ runtimeFailureMessage: message.slice(0, 1000), runtimeFailureRetryAt: dbSecondsFromNow(retrySeconds) })
    .where(eq(integrations.id, integrationId));
}

/** A new attempt starts: the failure it retries is no longer the latest word (reference docs: integrations/discord, "Restarts and deployments"). */
export async function clearRuntimeFailure(db: AppDb, integrationId: string): Promise<void> {
  await db
    .update(integrations)
    .set({ runtimeFailureMessage: null, runtimeFailureRetryAt: null })
    .where(and(eq(integrations.id, integrationId), isNotNull(integrations.runtimeFailureMessage)));
}
