import type { Database, Tx } from "../../platform/db/index.js";
import { mintToken, sha256Hex } from "../../platform/crypto/tokens.js";
import { conflict, notFound } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import type { PageRequest } from "../../platform/http/lists.js";
import { newUuid } from "../../platform/ids.js";
import { requireMachine } from "./access.js";
import * as store from "./store.js";
import * as tokens from "./tokens-store.js";

/** The reference's default limit of active daemon tokens per BYO machine. */
export const MAX_ACTIVE_TOKENS = 20;

/**
 * Mints a daemon token for a locked machine: the plaintext `svc_daemon_v1_…` is returned once and only
 * its SHA-256 is kept, as for personal and org keys (`platform/crypto/tokens.ts`).
 */
export async function mintDaemonToken(tx: Tx, machine: store.MachineRow, input: { name: string; metadata: Record<string, string> }) {
  if (machine.sourceKind !== "byo") throw conflict("a pool machine's daemon gets its credentials from its pool; tokens are for BYO machines");
  if ((await tokens.countActiveTokens(tx, machine.id)) >= MAX_ACTIVE_TOKENS) {
    throw conflict(`a machine may have at most ${MAX_ACTIVE_TOKENS} active daemon tokens; revoke one first`);
  }
  const token = mintToken("daemon");
  const record = await tokens.insertToken(tx, {
    id: newUuid(),
    orgId: machine.orgId,
    machineId: machine.id,
    name: input.name,
    metadata: input.metadata,
    tokenHash: sha256Hex(token),
  });
  return { token, record };
}

/** Daemon tokens of BYO machines: minted, listed and revoked by whoever manages the machine. */
export function createDaemonTokenService(deps: { db: Database }) {
  const { db } = deps;

  return {
    async createToken(principal: Principal, orgId: string, machineId: string, input: { name?: string; metadata?: Record<string, string> }) {
      return db.tx(async (tx) => {
        const { machine } = await requireMachine(tx, principal, orgId, machineId, "manage");
        return mintDaemonToken(tx, machine, { name: input.name ?? "daemon", metadata: input.metadata ?? {} });
      });
    },

    async listTokens(principal: Principal, orgId: string, machineId: string, page: PageRequest) {
      return db.tx(async (tx) => {
        await requireMachine(tx, principal, orgId, machineId, "manage");
        return tokens.listTokens(tx, machineId, page);
      });
    },

    /** Revokes for good; the daemon holding it loses its lease and is told. Revoking twice changes nothing. */
    async revokeToken(principal: Principal, orgId: string, machineId: string, tokenId: string) {
      return db.tx(async (tx) => {
        await requireMachine(tx, principal, orgId, machineId, "manage");
        const token = await tokens.findToken(tx, machineId, tokenId);
        if (!token) throw notFound("daemon token");
        if (token.revokedAt) return token;
        const [revoked] = await tokens.revokeTokens(tx, machineId, "revoked", tokenId);
        await store.dropLeaseOfToken(tx, machineId, [tokenId]);
        await store.notifyDaemon(tx, machineId);
        return revoked ?? token;
      });
    },
  };
}
