import { and, eq, gt, isNull, lt, or, sql } from "drizzle-orm";
import type { PgInsertValue } from "drizzle-orm/pg-core";
import { browserSessions, emailVerificationTokens, personalAccessTokens, users } from "../../db/schema/index.js";
import { dbNow, dbSecondsAgo, dbSecondsFromNow, unsetOrOlderThan } from "../../db/schema/columns.js";
import { TOKEN_TOUCH_SECONDS } from "../../platform/crypto/tokens.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset, type Sort } from "../../platform/http/lists.js";

type Db = AppDb | Tx;

export type UserRow = typeof users.$inferSelect;
export type PatRow = typeof personalAccessTokens.$inferSelect;

export const SESSION_IDLE_SECONDS = 7 * 24 * 3600;
/** Touch writes are throttled: sessions every 5 minutes, token last-use once a minute. */
const SESSION_TOUCH_SECONDS = 300;

export async function insertUser(tx: Db, row: PgInsertValue<typeof users>): Promise<UserRow | undefined> {
  const [user] = await tx.insert(users).values(row).onConflictDoNothing({ target: users.normalizedEmail }).returning();
  return user;
}

/** Serializes sign-ups that must see whether an account exists yet (the first one under SVC_SIGNUP). */
export async function lockSignups(tx: Tx): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext('svc.signup'))`);
}

export async function anyUser(tx: Db): Promise<boolean> {
  const [row] = await tx.select({ id: users.id }).from(users).limit(1);
  return row !== undefined;
}

export async function findUserByEmail(tx: Db, normalizedEmail: string): Promise<UserRow | undefined> {
  const [user] = await tx.select().from(users).where(eq(users.normalizedEmail, normalizedEmail));
  return user;
}

export async function findUser(tx: Db, userId: string): Promise<UserRow | undefined> {
  const [user] = await tx.select().from(users).where(eq(users.id, userId));
  return user;
}

/** Locks the user row for the account's deletion: a second deletion waits, then finds no user. */
export async function lockUser(tx: Tx, userId: string): Promise<boolean> {
  const [row] = await tx.select({ id: users.id }).from(users).where(eq(users.id, userId)).for("update");
  return row !== undefined;
}

/**
 * Deletes the user row. Its foreign keys do the rest (src/db/schema): sessions, personal access tokens,
 * verification tokens, approved device logins and org memberships go with it, and with the memberships
 * their project roles and the user's secrets and skills; what the user created keeps existing with its
 * creator unset (orgs, projects, org API keys, invitations sent, actors).
 */
export async function deleteUser(tx: Tx, userId: string): Promise<void> {
  await tx.delete(users).where(eq(users.id, userId));
}

export async function markEmailVerified(tx: Db, userId: string): Promise<void> {
  await tx.update(users).set({ emailVerifiedAt: dbNow, updatedAt: dbNow }).where(and(eq(users.id, userId), isNull(users.emailVerifiedAt)));
}

export async function insertVerificationToken(tx: Db, row: PgInsertValue<typeof emailVerificationTokens>): Promise<void> {
  await tx.insert(emailVerificationTokens).values(row);
}

/** Consumes a live verification token in one statement; returns its user, or nothing if spent or expired. */
export async function consumeVerificationToken(tx: Db, tokenHash: string): Promise<string | undefined> {
  const [row] = await tx
    .update(emailVerificationTokens)
    .set({ consumedAt: dbNow })
    .where(
      and(
        eq(emailVerificationTokens.tokenHash, tokenHash),
        isNull(emailVerificationTokens.consumedAt),
        gt(emailVerificationTokens.expiresAt, dbNow),
      ),
    )
    .returning({ userId: emailVerificationTokens.userId });
  return row?.userId;
}

export async function insertSession(tx: Db, row: { id: string; userId: string; tokenHash: string; csrfHash: string }) {
  await tx.insert(browserSessions).values({
    ...row,
    lastSeenAt: dbNow,
    expiresAt: dbSecondsFromNow(SESSION_IDLE_SECONDS),
  });
}

export async function findLiveSession(tx: Db, tokenHash: string) {
  const [row] = await tx
    .select()
    .from(browserSessions)
    .where(and(eq(browserSessions.tokenHash, tokenHash), isNull(browserSessions.revokedAt), gt(browserSessions.expiresAt, dbNow)));
  return row;
}

/** Slides the idle timeout forward, at most once every few minutes per session. */
export async function touchSession(tx: Db, sessionId: string): Promise<void> {
  await tx
    .update(browserSessions)
    .set({ lastSeenAt: dbNow, expiresAt: dbSecondsFromNow(SESSION_IDLE_SECONDS) })
    .where(
      and(
        eq(browserSessions.id, sessionId),
        lt(browserSessions.lastSeenAt, dbSecondsAgo(SESSION_TOUCH_SECONDS)),
      ),
    );
}

export async function revokeSession(tx: Db, sessionId: string): Promise<void> {
  await tx.update(browserSessions).set({ revokedAt: dbNow }).where(and(eq(browserSessions.id, sessionId), isNull(browserSessions.revokedAt)));
}

export async function deleteExpiredSessions(tx: Db): Promise<number> {
  const rows = await tx
    .delete(browserSessions)
    .where(or(lt(browserSessions.expiresAt, dbNow), lt(browserSessions.revokedAt, sql`${dbNow} - interval '1 day'`)))
    .returning({ id: browserSessions.id });
  return rows.length;
}

export async function insertPat(tx: Db, row: PgInsertValue<typeof personalAccessTokens>): Promise<PatRow> {
  const [pat] = await tx.insert(personalAccessTokens).values(row).returning();
  return pat!;
}

export async function countActivePats(tx: Db, userId: string): Promise<number> {
  const [row] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(personalAccessTokens)
    .where(and(eq(personalAccessTokens.userId, userId), isNull(personalAccessTokens.revokedAt)));
  return row?.n ?? 0;
}

export async function listPats(tx: Db, userId: string, page: { limit: number; cursor?: string; sort: Sort }) {
  const ks = keyset(page.sort, { created_at: personalAccessTokens.createdAt, id: personalAccessTokens.id }, page.cursor);
  return tx
    .select()
    .from(personalAccessTokens)
    .where(allOf(eq(personalAccessTokens.userId, userId), ks.where))
    .orderBy(...ks.orderBy)
    .limit(page.limit + 1);
}

export async function findPat(tx: Db, userId: string, patId: string): Promise<PatRow | undefined> {
  const [row] = await tx
    .select()
    .from(personalAccessTokens)
    .where(and(eq(personalAccessTokens.id, patId), eq(personalAccessTokens.userId, userId)));
  return row;
}

/** Revokes once; a revoked token keeps its first revocation time. */
export async function revokePat(tx: Db, userId: string, patId: string): Promise<PatRow | undefined> {
  await tx
    .update(personalAccessTokens)
    .set({ revokedAt: dbNow })
    .where(and(eq(personalAccessTokens.id, patId), eq(personalAccessTokens.userId, userId), isNull(personalAccessTokens.revokedAt)));
  return findPat(tx, userId, patId);
}

/** An active token by hash, and whether its last use is due to be recorded (decided by the database clock). */
export async function findActivePatByHash(tx: Db, tokenHash: string) {
  const [row] = await tx
    .select({
      id: personalAccessTokens.id,
      userId: personalAccessTokens.userId,
      touchDue: sql<boolean>`${unsetOrOlderThan(personalAccessTokens.lastUsedAt, TOKEN_TOUCH_SECONDS)}`,
    })
    .from(personalAccessTokens)
    .where(and(eq(personalAccessTokens.tokenHash, tokenHash), isNull(personalAccessTokens.revokedAt)));
  return row;
}

export async function touchPat(tx: Db, patId: string): Promise<void> {
  await tx
    .update(personalAccessTokens)
    .set({ lastUsedAt: dbNow })
    .where(
      and(
        eq(personalAccessTokens.id, patId),
        unsetOrOlderThan(personalAccessTokens.lastUsedAt, TOKEN_TOUCH_SECONDS),
      ),
    );
}

