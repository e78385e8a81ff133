import type { Config } from "../../config.js";
import type { Database, Tx } from "../../platform/db/index.js";
import { notFound, stateConflict } from "../../platform/errors.js";
import { newUuid } from "../../platform/ids.js";
import { randomHex, sha256Hex } from "../../platform/crypto/tokens.js";
import type { RateLimiter } from "../../platform/rate-limit.js";
import * as store from "./store.js";

export const DEFAULT_CLIENT_NAME = "Device";
export const DEFAULT_TOKEN_NAME = "Device login";
/** slow_down raises a flow's interval by 5 s each time, up to this. */
export const MAX_POLL_INTERVAL_SECONDS = 60;
const SWEEP_BATCH = 1000;
const INSERT_ATTEMPTS = 3;

/** Mints the personal access token a device receives; the identity module implements it. */
export interface PatIssuer {
  createPat(userId: string, name: string, tx?: Tx): Promise<{ token: string }>;
}

export interface DeviceLoginDeps {
  db: Database;
  config: Config;
  rateLimiter: RateLimiter;
  tokens: PatIssuer;
}

/** What a poll of the token endpoint found (RFC 8628 §3.5). */
export type PollOutcome =
  | { kind: "token"; accessToken: string }
  | { kind: "authorization_pending" | "slow_down"; interval: number }
  | { kind: "access_denied" | "expired_token" | "invalid_grant" };

/** User codes are typed by people: compare them upper-cased, without dashes or spaces. */
export function normalizeUserCode(input: string): string {
  return input.toUpperCase().replace(/[\s-]/g, "");
}

export function formatUserCode(normalized: string): string {
  return `${normalized.slice(0, 5)}-${normalized.slice(5)}`;
}

const USER_CODE = /^[0-9A-F]{10}$/;
const DEVICE_CODE = /^[0-9a-f]{64}$/;

export function createDeviceLoginService(deps: DeviceLoginDeps) {
  const { db, config, rateLimiter, tokens } = deps;
  const limits = config.rateLimits;
  const flowConfig = config.deviceLogin;

  /** Hash of a well-formed user code; malformed input can match nothing, so it is "not found". */
  function userCodeHash(input: string): { hash: string; code: string } {
    const code = normalizeUserCode(input);
    if (!USER_CODE.test(code)) throw notFound("device login request");
    return { hash: sha256Hex(code), code };
  }

  async function decide(userId: string, userCode: string, decision: "approve" | "deny"): Promise<void> {
    await rateLimiter.hit(`device-decide:${userId}`, limits.devicePerWindow, limits.windowSeconds);
    const { hash } = userCodeHash(userCode);
    await db.tx(async (tx) => {
      const flow = await store.lockByUserCode(tx, hash);
      if (!flow) throw notFound("device login request");
      if (flow.approvedByUserId !== null || flow.deniedAt !== null || flow.consumedAt !== null) {
        throw stateConflict("this device login request was already approved or denied");
      }
      if (flow.expired) throw stateConflict("this device login request has expired");
      const done = await store.decide(tx, flow.id, decision === "deny" ? "deny" : { approvedBy: userId });
      if (!done) throw stateConflict("this device login request was already decided or has expired");
    });
  }

  return {
    /** Opens a flow for a device; only hashes of both codes are stored. */
    async start(input: { clientName?: string; tokenName?: string }, client: string) {
      await rateLimiter.hit(`device-code:${client}`, limits.devicePerWindow, limits.windowSeconds);
      const clientName = input.clientName || DEFAULT_CLIENT_NAME;
      const tokenName = input.tokenName || DEFAULT_TOKEN_NAME;
      // 40-bit user codes can collide with a live flow; a collision inserts nothing and new codes are drawn.
      for (let attempt = 0; attempt < INSERT_ATTEMPTS; attempt++) {
        const deviceCode = randomHex(32);
        const userCode = randomHex(5).toUpperCase();
        const inserted = await db.tx((tx) =>
          store.insertFlow(tx, {
            id: newUuid(),
            deviceCodeHash: sha256Hex(deviceCode),
            userCodeHash: sha256Hex(userCode),
            clientName,
            tokenName,
            intervalSeconds: flowConfig.pollIntervalSeconds,
            ttlSeconds: flowConfig.codeTtlSeconds,
          }),
        );
        if (inserted) {
          return {
            deviceCode,
            userCode: formatUserCode(userCode),
            expiresIn: flowConfig.codeTtlSeconds,
            interval: flowConfig.pollIntervalSeconds,
          };
        }
      }
      throw new Error("could not allocate unique device-login codes");
    },

    /**
     * One poll by the device. A pending flow records the poll time, and a poll sooner than the interval
     * after the previous one gets slow_down. The first poll after approval mints the token and consumes
     * the flow in the same transaction, so the token is handed out exactly once.
     */
    async poll(deviceCode: string, client: string): Promise<PollOutcome> {
      await rateLimiter.hit(`device-token:${client}`, limits.devicePerWindow, limits.windowSeconds);
      if (!DEVICE_CODE.test(deviceCode)) return { kind: "invalid_grant" };
      return db.tx(async (tx): Promise<PollOutcome> => {
        const flow = await store.lockByDeviceCode(tx, sha256Hex(deviceCode));
        if (!flow) return { kind: "invalid_grant" };
        if (flow.consumedAt !== null || flow.expired) return { kind: "expired_token" };
        if (flow.deniedAt !== null) return { kind: "access_denied" };
        if (flow.approvedByUserId !== null) {
          const { token } = await tokens.createPat(flow.approvedByUserId, flow.tokenName, tx);
          await store.markConsumed(tx, flow.id);
          return { kind: "token", accessToken: token };
        }
        if (flow.tooFast) {
          return { kind: "slow_down", interval: await store.slowDown(tx, flow.id, MAX_POLL_INTERVAL_SECONDS) };
        }
        await store.markPolled(tx, flow.id);
        return { kind: "authorization_pending", interval: flow.intervalSeconds };
      });
    },

    /** What the approval page shows for a code: only undecided, unexpired flows are found. */
    async pending(userId: string, userCode: string) {
      await rateLimiter.hit(`device-decide:${userId}`, limits.devicePerWindow, limits.windowSeconds);
      const { hash, code } = userCodeHash(userCode);
      const flow = await store.findPendingByUserCode(db.read, hash);
      if (!flow) throw notFound("device login request");
      return { userCode: formatUserCode(code), ...flow };
    },

    approve: (userId: string, userCode: string) => decide(userId, userCode, "approve"),
    deny: (userId: string, userCode: string) => decide(userId, userCode, "deny"),

    /** Maintenance: forgets flows that expired more than a day ago, one bounded batch per run. */
    sweepExpired(): Promise<number> {
      return db.tx((tx) => store.deleteExpired(tx, SWEEP_BATCH));
    },
  };
}

export type DeviceLoginService = ReturnType<typeof createDeviceLoginService>;
