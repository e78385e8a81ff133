import { refreshAuthorization } from "@modelcontextprotocol/sdk/client/auth.js";
import type { AuthorizationServerMetadata } from "@modelcontextprotocol/sdk/shared/auth.js";
import { and, eq, sql } from "drizzle-orm";
import { secretVersions } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { EnvelopeCipher } from "../../platform/crypto/envelope.js";
import type { Database, Tx } from "../../platform/db/index.js";
import { encodeId, newUuid } from "../../platform/ids.js";
import { openMaterial, payloadKeys, sealMaterial } from "./material.js";
import type { SecretKind, SecretMaterial } from "./schemas.js";
import * as store from "./store.js";

/**
 * Access tokens of `oauth_token_set` secrets for MCP servers (issue 24: refresh before expiry when an
 * agent uses the secret). A token within `REFRESH_MARGIN_SECONDS` of its expiry, by the database clock
 * from the time its version was written, is refreshed with the secret's refresh grant and stored as the
 * next version. Concurrent refreshes compare versions instead of holding a lock across the HTTP call: the
 * one that writes first wins, the other uses what it wrote. Within one process, uses of a secret that need
 * a refresh at the same time share one refresh.
 */

/** A token this close to its expiry is refreshed before use: long enough for one model turn's calls. */
export const REFRESH_MARGIN_SECONDS = 60;

type TokenSet = Extract<SecretMaterial, { kind: "oauth_token_set" }>;

/** Why a secret cannot give a usable token; the message names the secret and what to do. */
export class OAuthSecretError extends Error {
  override readonly name = "OAuthSecretError";
}

interface CurrentToken {
  secret: store.SecretRow;
  versionNumber: number;
  material: TokenSet;
  due: boolean;
}

export function createOAuthTokens(deps: { db: Database; cipher: EnvelopeCipher; fetch: typeof fetch; timeoutMs: number }) {
  const { db, cipher } = deps;
  /** Refreshes under way in this process, by secret id. */
  const inflight = new Map<string, Promise<string>>();
  const bounded = ((input: string | URL | Request, init?: RequestInit) =>
    deps.fetch(input, { ...init, signal: AbortSignal.timeout(deps.timeoutMs) })) as typeof fetch;

  /** The secret's current token, if the project can use the secret; undefined otherwise. */
  async function current(tx: Tx, orgId: string, projectId: string, secretId: string): Promise<CurrentToken | undefined> {
    const found = await store.findProjectSecret(tx, orgId, projectId, secretId);
    if (!found || found.secret.kind !== "oauth_token_set") return undefined;
    const { secret } = found;
    const [version] = await tx
      .select({ envelope: secretVersions.envelope, ageSeconds: sql<number>`extract(epoch from (${dbNow} - ${secretVersions.createdAt}))::float8` })
      .from(secretVersions)
      .where(and(eq(secretVersions.secretId, secretId), eq(secretVersions.versionNumber, secret.currentVersionNumber)));
    if (!version) return undefined;
    const sealed = { orgId, secretId, versionNumber: secret.currentVersionNumber, kind: secret.kind as SecretKind };
    const material = openMaterial(cipher, sealed, version.envelope) as TokenSet;
    const lifetime = material.access_token_expires_in_seconds;
    const due = lifetime !== undefined && Number(version.ageSeconds) >= lifetime - REFRESH_MARGIN_SECONDS;
    return { secret, versionNumber: secret.currentVersionNumber, material, due };
  }

  function described(secret: store.SecretRow): string {
    return `the OAuth secret "${secret.name}" (${encodeId("secret", secret.id)})`;
  }

  /** Stores `material` as the version after `from`, unless another refresh already did: then its token. */
  async function storeRefreshed(orgId: string, secretId: string, from: number, material: TokenSet): Promise<string> {
    return db.tx(async (tx) => {
      const secret = await store.lockSecret(tx, orgId, secretId);
      if (!secret) throw new OAuthSecretError("the OAuth secret was deleted while its token was refreshed");
      if (secret.currentVersionNumber !== from) {
        const version = await store.findVersion(tx, secretId, secret.currentVersionNumber);
        const sealed = { orgId, secretId, versionNumber: secret.currentVersionNumber, kind: secret.kind as SecretKind };
        const theirs = openMaterial(cipher, sealed, version!.envelope);
        if (theirs.kind === "oauth_token_set") return theirs.access_token;
      }
      const versionNumber = secret.currentVersionNumber + 1;
      const envelope = sealMaterial(cipher, { orgId, secretId, versionNumber, kind: "oauth_token_set" }, material);
      await store.insertVersion(tx, { id: newUuid(), orgId, secretId, versionNumber, envelope });
      await store.updateSecret(tx, orgId, secretId, { currentVersionNumber: versionNumber, payloadKeys: payloadKeys(material) });
      return material.access_token;
    });
  }

  async function refresh(orgId: string, projectId: string, token: CurrentToken): Promise<string> {
    const { secret, material } = token;
    const grant = material.refresh;
    if (!grant) {
      throw new OAuthSecretError(`${described(secret)} holds an expired access token and no refresh token; connect it again with POST /orgs/{orgID}/secrets/mcp-oauth`);
    }
    let fresh: Awaited<ReturnType<typeof refreshAuthorization>>;
    try {
      // Only the token endpoint is known here; the SDK needs no more of the server's metadata to refresh.
      const metadata = { issuer: grant.token_endpoint, authorization_endpoint: grant.token_endpoint, token_endpoint: grant.token_endpoint, response_types_supported: ["code"] } as AuthorizationServerMetadata;
      fresh = await refreshAuthorization(grant.token_endpoint, {
        metadata,
        clientInformation: { client_id: grant.client_id, ...(grant.client_secret ? { client_secret: grant.client_secret } : {}) },
        refreshToken: grant.refresh_token,
        resource: new URL(grant.resource),
        fetchFn: bounded,
      });
    } catch (err) {
      // A refresh token is often single-use: a concurrent refresh that won leaves this one refused.
      const now = await db.tx((tx) => current(tx, orgId, projectId, secret.id));
      if (now && now.versionNumber !== token.versionNumber && !now.due) return now.material.access_token;
      const reason = err instanceof Error ? err.message : String(err);
      throw new OAuthSecretError(`${described(secret)} could not refresh its access token (${reason.slice(0, 300)}); connect it again with POST /orgs/{orgID}/secrets/mcp-oauth`);
    }
    const next: TokenSet = {
      ...material,
      access_token: fresh.access_token,
      refresh: { ...grant, refresh_token: fresh.refresh_token ?? grant.refresh_token },
    };
    if (fresh.expires_in !== undefined && fresh.expires_in >= 1) next.access_token_expires_in_seconds = Math.min(Math.floor(fresh.expires_in), 2147483647);
    else delete next.access_token_expires_in_seconds;
    if (fresh.id_token) next.id_token = fresh.id_token;
    if (fresh.scope) next.scopes = fresh.scope;
    return storeRefreshed(orgId, secret.id, token.versionNumber, next);
  }

  return {
    /**
     * A usable access token of the `oauth_token_set` secret `secretId`, which the project owns or was
     * granted: refreshed first when it is near expiry, or when it is `rejected` (the server answered 401 to
     * it). Throws OAuthSecretError naming the secret when no usable token can be had.
     */
    async accessToken(orgId: string, projectId: string, secretId: string, rejected?: string): Promise<string> {
      const read = async () => {
        const token = await db.tx((tx) => current(tx, orgId, projectId, secretId));
        if (!token) throw new OAuthSecretError(`the OAuth secret ${encodeId("secret", secretId)} is no longer an oauth_token_set secret available to the project`);
        return token;
      };
      const seen = await read();
      if (!seen.due && seen.material.access_token !== rejected) return seen.material.access_token;
      const running = inflight.get(secretId);
      if (running) return running;
      const started = (async () => {
        // Read again once alone: a refresh that finished since `seen` was read has stored a usable token.
        const now = await read();
        if (now.versionNumber !== seen.versionNumber && !now.due) return now.material.access_token;
        return refresh(orgId, projectId, now);
      })().finally(() => inflight.delete(secretId));
      inflight.set(secretId, started);
      return started;
    },
  };
}

export type OAuthTokens = ReturnType<typeof createOAuthTokens>;
