import type { Database, Tx } from "../../platform/db/index.js";
import { isUniqueViolation } from "../../platform/db/index.js";
import { mintToken, randomHex, sha256Hex } from "../../platform/crypto/tokens.js";
import { conflict, notFound, stateConflict } from "../../platform/errors.js";
import type { Principal, UserPrincipal } from "../../platform/http/auth.js";
import type { Sort } from "../../platform/http/lists.js";
import { newUuid } from "../../platform/ids.js";
import { TtlCache } from "../../platform/ttl-cache.js";
import type { Memberships } from "../orgs/members-service.js";
import type { ProjectRole } from "../orgs/policy.js";
import * as store from "./store.js";

export type OrgApiKeyRole = "admin" | "member";

const ACTIVE_NAME_INDEX = "org_api_keys_active_name";

/**
 * Organization API keys: service accounts that act as their org with an org role and project roles,
 * held through an `org_memberships` row like a person's. Minting, renaming, re-roling and revoking are
 * for browser sessions (enforced by the routes); reading key metadata needs `org.manage`.
 */
/** Enough for every key in active use on one process; the least recently used go first beyond it. */
const BEARER_CACHE_ENTRIES = 10_000;

export function createOrgApiKeyService(deps: { db: Database; memberships: Memberships; authCacheTtlMs: number }) {
  const { db, memberships: m } = deps;
  // Token hash → principal for a few seconds (SVC_AUTH_CACHE_TTL_MS); unknown tokens are not cached.
  const keyPrincipals = new TtlCache<string, Extract<Principal, { kind: "org_api_key" }>>(deps.authCacheTtlMs, BEARER_CACHE_ENTRIES);

  return {
    /** Mints a key and its membership; the plaintext token is returned once and only its hash is kept. */
    async create(principal: UserPrincipal, orgId: string, input: { name: string; orgRole: OrgApiKeyRole }) {
      return withNameConflict(() =>
        db.tx(async (tx) => {
          await m.lockOrg(tx, orgId);
          await m.requireOrg(tx, principal, orgId, "org.manage");
          if (await store.findActiveKeyByName(tx, orgId, input.name)) throw nameTaken(input.name);
          const token = mintToken("organization");
          const key = await store.insertKey(tx, {
            id: newUuid(),
            orgId,
            name: input.name,
            tokenId: randomHex(10),
            tokenHash: sha256Hex(token),
            orgRole: input.orgRole,
            createdByUserId: principal.userId,
          });
          await m.addKey(tx, orgId, key.id, input.orgRole);
          return { token, key };
        }),
      );
    },

    async list(principal: Principal, orgId: string, page: { limit: number; cursor?: string; sort: Sort }) {
      return db.tx(async (tx) => {
        await m.requireOrg(tx, principal, orgId, "org.manage");
        return store.listKeys(tx, orgId, page);
      });
    },

    async get(principal: Principal, orgId: string, keyId: string) {
      return db.tx(async (tx) => {
        await m.requireOrg(tx, principal, orgId, "org.manage");
        return findKey(tx, orgId, keyId);
      });
    },

    /** Renames a key and/or changes its org role; a revoked key is frozen. */
    async update(principal: UserPrincipal, orgId: string, keyId: string, changes: { name?: string; orgRole?: OrgApiKeyRole }) {
      return withNameConflict(() =>
        db.tx(async (tx) => {
          await m.lockOrg(tx, orgId);
          await m.requireOrg(tx, principal, orgId, "org.manage");
          const key = await activeKey(tx, orgId, keyId);
          const rename = changes.name !== undefined && changes.name !== key.name;
          const rerole = changes.orgRole !== undefined && changes.orgRole !== key.orgRole;
          if (!rename && !rerole) return key;
          if (rename && (await store.findActiveKeyByName(tx, orgId, changes.name!))) throw nameTaken(changes.name!);
          if (rerole) {
            const membership = await m.findKeyMembership(tx, orgId, keyId);
            if (membership) await m.setRole(tx, membership.id, changes.orgRole!);
          }
          return store.updateKey(tx, keyId, { name: rename ? changes.name : undefined, orgRole: rerole ? changes.orgRole : undefined });
        }),
      );
    },

    /** Revokes for good and drops the key's org and project roles. Revoking twice changes nothing. */
    async revoke(principal: UserPrincipal, orgId: string, keyId: string) {
      const result = await db.tx(async (tx) => {
        await m.lockOrg(tx, orgId);
        await m.requireOrg(tx, principal, orgId, "org.manage");
        const key = await findKey(tx, orgId, keyId);
        if (key.revokedAt) return key;
        const revoked = await store.revokeKey(tx, keyId);
        const membership = await m.findKeyMembership(tx, orgId, keyId);
        if (membership) await m.remove(tx, membership.id);
        return revoked ?? key;
      });
      // This process refuses the key from now on; others within SVC_AUTH_CACHE_TTL_MS (docs/api.md).
      keyPrincipals.forget((cached) => cached.keyId === keyId);
      return result;
    },

    async listGrants(principal: Principal, orgId: string, keyId: string) {
      return db.tx(async (tx) => {
        await m.requireOrg(tx, principal, orgId, "org.manage");
        await findKey(tx, orgId, keyId);
        const membership = await m.findKeyMembership(tx, orgId, keyId);
        return membership ? m.grants(tx, membership.id) : [];
      });
    },

    async setGrant(principal: UserPrincipal, orgId: string, keyId: string, projectId: string, role: ProjectRole) {
      return db.tx(async (tx) => {
        await m.lockOrg(tx, orgId);
        const access = await m.requireProject(tx, principal, orgId, projectId, "project.access_manage");
        await activeKey(tx, orgId, keyId);
        const membership = await m.findKeyMembership(tx, orgId, keyId);
        if (!membership) throw stateConflict("this API key has been revoked");
        return m.setGrant(tx, access, membership.id, role);
      });
    },

    async removeGrant(principal: UserPrincipal, orgId: string, keyId: string, projectId: string): Promise<void> {
      await db.tx(async (tx) => {
        await m.lockOrg(tx, orgId);
        await m.requireProject(tx, principal, orgId, projectId, "project.access_manage");
        await findKey(tx, orgId, keyId);
        const membership = await m.findKeyMembership(tx, orgId, keyId);
        if (!membership) throw notFound("project role grant");
        await m.removeGrant(tx, membership.id, projectId);
      });
    },

    /** The principal behind an active key's token hash, or null. */
    async authenticate(tokenHash: string): Promise<Principal | null> {
      const principal = await keyPrincipals.readThrough(tokenHash, async () => {
        const key = await store.findActiveKeyByHash(db.read, tokenHash);
        if (!key) return undefined;
        // last_used_at moves at most once a minute, so most lookups write nothing.
        if (key.touchDue) await store.touchKey(db.write, key.id);
        return { kind: "org_api_key", keyId: key.id, orgId: key.orgId } as const;
      });
      return principal ?? null;
    },
  };
}

export type OrgApiKeyService = ReturnType<typeof createOrgApiKeyService>;

async function findKey(tx: Tx, orgId: string, keyId: string): Promise<store.OrgApiKeyRow> {
  const key = await store.findKey(tx, orgId, keyId);
  if (!key) throw notFound("API key");
  return key;
}

async function activeKey(tx: Tx, orgId: string, keyId: string): Promise<store.OrgApiKeyRow> {
  const key = await findKey(tx, orgId, keyId);
  if (key.revokedAt) throw stateConflict("this API key has been revoked; revoked keys cannot be changed");
  return key;
}

function nameTaken(name: string) {
  return conflict(`an active API key named "${name}" already exists in this organization`);
}

/** Two concurrent creations or renames to one name both pass the check; the unique index settles it. */
async function withNameConflict<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUniqueViolation(err, ACTIVE_NAME_INDEX)) throw conflict("an active API key with this name already exists in this organization");
    throw err;
  }
}
