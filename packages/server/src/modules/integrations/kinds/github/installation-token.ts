import { createHash } from "node:crypto";
import { AppError } from "../../../../platform/errors.js";
import { scalarMember, type RestClient } from "../rest.js";
import { appJwt, appPrivateKey } from "./app-jwt.js";
import { GITHUB_HEADERS } from "./api.js";

/** A token is dropped this long before GitHub's `expires_at`, so a call never starts with one about to lapse (and clock drift is absorbed). */
const EXPIRY_MARGIN_MS = 5 * 60_000;
/** An answer without a usable `expires_at` is kept this long; GitHub's tokens last an hour. */
const FALLBACK_LIFETIME_MS = 10 * 60_000;
/** Bounds the cache: one entry per installation a deployment's integrations use. */
const MAX_ENTRIES = 1000;

export interface AppCredential {
  appId: string;
  privateKeyPem: string;
  installationId: string;
}

/** What minting answered: a token, or GitHub's refusal for the model to read. */
export type MintedToken = { token: string } | { refused: string };

export interface InstallationTokens {
  /** A current installation access token, minted when none is cached. */
  get(credential: AppCredential): Promise<MintedToken>;
  /** Forgets a token GitHub no longer accepts (revoked, or the installation's permissions changed). */
  forget(credential: AppCredential): void;
}

/**
 * Installation access tokens (GitHub docs: "Generating an installation access token for a GitHub App"):
 * minted with the app JWT by `POST /app/installations/{id}/access_tokens` and kept in memory per
 * installation and key until shortly before their `expires_at`, so tool calls do not mint one each. The
 * cache key includes a digest of the private key: a token is only handed to a credential that could mint it.
 */
export function createInstallationTokens(rest: RestClient): InstallationTokens {
  const cache = new Map<string, { token: string; expiresAt: number }>();
  const minting = new Map<string, Promise<MintedToken>>();
  const keyOf = (c: AppCredential) => `${c.appId}:${c.installationId}:${createHash("sha256").update(c.privateKeyPem).digest("hex")}`;

  async function mint(credential: AppCredential, key: string): Promise<MintedToken> {
    const privateKey = appPrivateKey(credential.privateKeyPem);
    if (!privateKey) return { refused: "the integration's credential has no usable RSA private key; reconnect the GitHub App" };
    const headers = { ...GITHUB_HEADERS, authorization: `Bearer ${appJwt(credential.appId, privateKey)}` };
    const answer = await rest.call("POST", `/app/installations/${credential.installationId}/access_tokens`, headers, {});
    const token = scalarMember(answer.body, "token");
    if (answer.status !== 201 || !token) {
      if (answer.status === 401 || answer.status === 403 || answer.status === 404) {
        return { refused: `GitHub refused a token for installation ${credential.installationId} (HTTP ${answer.status}); the App may be suspended or uninstalled` };
      }
      throw new AppError("upstream_unavailable", `GitHub answered the installation token request with HTTP ${answer.status}`);
    }
    const expiresAt = Date.parse(scalarMember(answer.body, "expires_at") ?? "");
    if (cache.size >= MAX_ENTRIES) cache.clear();
    cache.set(key, { token, expiresAt: Number.isFinite(expiresAt) ? expiresAt - EXPIRY_MARGIN_MS : Date.now() + FALLBACK_LIFETIME_MS });
    return { token };
  }

  return {
    async get(credential) {
      const key = keyOf(credential);
      const cached = cache.get(key);
      // In-memory only: the comparison is with GitHub's expires_at, so the process clock is the right one here.
      if (cached && cached.expiresAt > Date.now()) return { token: cached.token };
      let pending = minting.get(key);
      if (!pending) {
        pending = mint(credential, key).finally(() => minting.delete(key));
        minting.set(key, pending);
      }
      return pending;
    },
    forget(credential) {
      cache.delete(keyOf(credential));
    },
  };
}
