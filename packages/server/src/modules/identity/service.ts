import type { Config } from "../../config.js";
import { dbNow, dbSecondsFromNow } from "../../db/schema/columns.js";
import { AppError, conflict, notFound } from "../../platform/errors.js";
import type { Database, Tx } from "../../platform/db/index.js";
import { isForeignKeyViolation, isUniqueViolation } from "../../platform/db/index.js";
import { newUuid } from "../../platform/ids.js";
import { decoyPasswordHash, hashPassword, verifyPassword } from "../../platform/crypto/passwords.js";
import { mintToken, randomHex, sha256Hex } from "../../platform/crypto/tokens.js";
import type { Principal, UserPrincipal } from "../../platform/http/auth.js";
import type { RateLimiter } from "../../platform/rate-limit.js";
import { TtlCache } from "../../platform/ttl-cache.js";
import type { Mailer } from "./mail.js";
import { createSignInThrottle } from "./sign-in-throttle.js";
import * as store from "./store.js";

export const MAX_ACTIVE_PATS = 1000;
const VERIFICATION_TTL_SECONDS = 24 * 3600;
/** Enough for every token in active use on one process; the least recently used go first beyond it. */
const BEARER_CACHE_ENTRIES = 10_000;

export interface MembershipDirectory {
  /** The organizations a user belongs to, for /me. */
  orgsOfUser(tx: Tx, userId: string): Promise<Array<{ id: string; name: string; role: string; createdAt: Date }>>;
}

/** What sign-up needs to know of invitations under SVC_SIGNUP=invite. */
export interface InvitedEmails {
  isInvited(tx: Tx, normalizedEmail: string): Promise<boolean>;
}

/**
 * A module that keeps something of a user's, readied for the account's deletion (DELETE /me) inside that
 * transaction: it refuses with a 409 while the account cannot go, and registers what must follow the
 * commit. Deleting the user row then removes the rest through the foreign keys (`store.deleteUser`).
 */
export type AccountHolder = (tx: Tx, userId: string) => Promise<void>;

export interface IdentityDeps {
  db: Database;
  config: Config;
  rateLimiter: RateLimiter;
  mailer: Mailer | null;
  directory: MembershipDirectory;
  invitations: InvitedEmails;
  /** Asked in this order before an account is deleted; the first refusal wins. */
  accountHolders: readonly AccountHolder[];
}

export interface NewSession {
  id: string;
  token: string;
  csrf: string;
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function createIdentityService(deps: IdentityDeps) {
  const { db, config, rateLimiter, mailer } = deps;
  const limits = config.rateLimits;
  const signInThrottle = createSignInThrottle(rateLimiter, limits);
  const decoyHash = decoyPasswordHash(config.passwordHashCost);
  // Token hash → principal for a few seconds: most API calls come in bursts from one token. Unknown
  // tokens are not cached, so guessing cannot fill it and a new token works at once.
  const patPrincipals = new TtlCache<string, Extract<Principal, { via: "pat" }>>(config.authCacheTtlMs, BEARER_CACHE_ENTRIES);

  async function openSession(tx: Tx, userId: string): Promise<NewSession> {
    const session = { id: newUuid(), token: randomHex(32), csrf: randomHex(32) };
    await store.insertSession(tx, {
      id: session.id,
      userId,
      tokenHash: sha256Hex(session.token),
      csrfHash: sha256Hex(session.csrf),
    });
    return session;
  }

  /**
   * Whether the sign-up policy admits this address (SVC_SIGNUP). The first account is always admitted, so
   * a server started with `invite` or `closed` can get its operator; the lock keeps two from both being first.
   */
  async function admitSignup(tx: Tx, normalizedEmail: string): Promise<void> {
    if (config.signup === "open") return;
    await store.lockSignups(tx);
    if (!(await store.anyUser(tx))) return;
    if (config.signup === "invite" && (await deps.invitations.isInvited(tx, normalizedEmail))) return;
    throw new AppError(
      "forbidden",
      config.signup === "invite" ? "sign-up on this server needs an invitation to an organization for this email address" : "sign-up is closed on this server; ask its operator for an account",
    );
  }

  async function sendVerification(tx: Tx, user: store.UserRow): Promise<() => Promise<void>> {
    const token = randomHex(32);
    await store.insertVerificationToken(tx, {
      id: newUuid(),
      userId: user.id,
      tokenHash: sha256Hex(token),
      expiresAt: dbSecondsFromNow(VERIFICATION_TTL_SECONDS),
    });
    const link = `${config.publicUrl}/api/auth/verify-email?token=${token}`;
    return async () => mailer?.sendVerification({ to: user.email, displayName: user.displayName, link });
  }

  return {
    /** Signs a new user up; without a mail transport the user is verified and signed in at once. */
    async signup(input: { email: string; password: string; displayName: string }, client: string) {
      await rateLimiter.hit(`signup:${client}`, limits.authPerWindow, limits.windowSeconds);
      const passwordHash = await hashPassword(input.password, config.passwordHashCost);
      const verificationRequired = mailer !== null;
      try {
        let deliver: (() => Promise<void>) | undefined;
        const result = await db.tx(async (tx) => {
          await admitSignup(tx, normalizeEmail(input.email));
          const user = await store.insertUser(tx, {
            id: newUuid(),
            email: input.email.trim(),
            normalizedEmail: normalizeEmail(input.email),
            displayName: input.displayName,
            passwordHash,
            emailVerifiedAt: verificationRequired ? null : dbNow,
          });
          if (!user) throw conflict("an account with this email already exists");
          if (verificationRequired) {
            deliver = await sendVerification(tx, user);
            return { user, session: null };
          }
          return { user, session: await openSession(tx, user.id) };
        });
        // The account exists either way; a failed mail is reported, and signing in sends a new link.
        const mailError = deliver ? await deliver().then(() => undefined, (err: unknown) => err ?? new Error("mail failed")) : undefined;
        return { ...result, mailError };
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict("an account with this email already exists");
        throw err;
      }
    },

    async login(input: { email: string; password: string }, client: string) {
      await rateLimiter.hit(`login:${client}`, limits.authPerWindow, limits.windowSeconds);
      const email = normalizeEmail(input.email);
      const passwordWasRight = await signInThrottle.attempt(email, client);
      const user = await store.findUserByEmail(db.read, email);
      const ok = await verifyPassword(input.password, user?.passwordHash ?? decoyHash);
      if (!user || !ok) throw new AppError("unauthorized", "email or password is incorrect");
      await passwordWasRight();
      if (!user.emailVerifiedAt) {
        // Right password, unverified address: send a fresh link, so a lost or failed mail is never a dead end.
        const deliver = await db.tx((tx) => sendVerification(tx, user));
        try {
          await deliver();
        } catch (err) {
          throw new AppError("service_unavailable", "could not send the verification email; try again later", {}, err);
        }
        throw new AppError("forbidden", "verify your email address before signing in; a new verification link was sent");
      }
      const session = await db.tx((tx) => openSession(tx, user.id));
      return { user, session };
    },

    async logout(sessionId: string): Promise<void> {
      await db.tx((tx) => store.revokeSession(tx, sessionId));
    },

    /** Consumes a verification link; false when it is unknown, spent or expired. */
    async verifyEmail(token: string): Promise<boolean> {
      if (!/^[0-9a-f]{64}$/.test(token)) return false;
      return db.tx(async (tx) => {
        const userId = await store.consumeVerificationToken(tx, sha256Hex(token));
        if (!userId) return false;
        await store.markEmailVerified(tx, userId);
        return true;
      });
    },

    async me(userId: string) {
      return db.tx(async (tx) => {
        const user = await store.findUser(tx, userId);
        if (!user) throw notFound("user");
        return { user, orgs: await deps.directory.orgsOfUser(tx, userId) };
      });
    },

    /**
     * Deletes the account in one transaction: the holders' checks (the last owner of an org, a secret or
     * skill still in use), then the user row with everything its foreign keys remove. The email address
     * is free again at once; a new account made with it is a new user. This process refuses the user's
     * tokens from the commit on; others within SVC_AUTH_CACHE_TTL_MS, as after a revocation.
     */
    async deleteAccount(userId: string): Promise<void> {
      try {
        await db.tx(async (tx) => {
          if (!(await store.lockUser(tx, userId))) throw notFound("user");
          for (const holder of deps.accountHolders) await holder(tx, userId);
          await store.deleteUser(tx, userId);
          tx.afterCommit(() => patPrincipals.forget((principal) => principal.userId === userId));
        });
      } catch (err) {
        // A reference no holder checks (RESTRICT): refused whole, like deleting a secret in use.
        if (isForeignKeyViolation(err)) throw conflict("something still uses one of your secrets or skills; stop using it, then delete the account");
        throw err;
      }
    },

    /** Mints a personal token; the plaintext is returned once and only its hash is kept. */
    async createPat(userId: string, name: string, tx?: Tx) {
      const token = mintToken("personal");
      const work = async (t: Tx) => {
        if ((await store.countActivePats(t, userId)) >= MAX_ACTIVE_PATS) {
          throw conflict(`a user can hold at most ${MAX_ACTIVE_PATS} active personal access tokens; revoke some first`);
        }
        const record = await store.insertPat(t, {
          id: newUuid(),
          userId,
          name,
          tokenId: randomHex(10),
          tokenHash: sha256Hex(token),
        });
        return { token, record };
      };
      return tx ? work(tx) : db.tx(work);
    },

    listPats(userId: string, page: { limit: number; cursor?: string }) {
      return store.listPats(db.read, userId, { ...page, sort: "-created_at" });
    },

    async revokePat(userId: string, patId: string) {
      const record = await db.tx((tx) => store.revokePat(tx, userId, patId));
      if (!record) throw notFound("personal access token");
      // This process refuses the token from now on; others within SVC_AUTH_CACHE_TTL_MS (docs/api.md).
      patPrincipals.forget((principal) => principal.patId === patId);
      return record;
    },

    async authenticatePat(tokenHash: string): Promise<Principal | null> {
      const principal = await patPrincipals.readThrough(tokenHash, async () => {
        const pat = await store.findActivePatByHash(db.read, tokenHash);
        if (!pat) return undefined;
        // last_used_at moves at most once a minute, so most lookups write nothing.
        if (pat.touchDue) await store.touchPat(db.write, pat.id);
        return { kind: "user", userId: pat.userId, via: "pat", patId: pat.id } as const;
      });
      return principal ?? null;
    },

    async authenticateSession(tokenHash: string): Promise<{ principal: UserPrincipal; csrfHash: string } | null> {
      const session = await store.findLiveSession(db.read, tokenHash);
      if (!session) return null;
      await store.touchSession(db.write, session.id);
      return { principal: { kind: "user", userId: session.userId, via: "session", sessionId: session.id }, csrfHash: session.csrfHash };
    },

    openSession: (tx: Tx, userId: string) => openSession(tx, userId),

    async sweepExpired(): Promise<number> {
      return db.tx((tx) => store.deleteExpiredSessions(tx));
    },
  };
}

export type IdentityService = ReturnType<typeof createIdentityService>;
