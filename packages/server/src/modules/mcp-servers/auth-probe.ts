import { discoverOAuthServerInfo, extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js";
import type { McpServerAuthHint } from "./schemas.js";

/** What a server's refusal said in `WWW-Authenticate` (RFC 6750, RFC 9728): where its metadata is, which scopes. */
export interface AuthChallenge {
  resourceMetadataUrl?: URL;
  scope?: string;
}

/**
 * Wraps an MCP `fetch` to keep the challenge of the last 401 or 403 it saw; the MCP SDK's error only
 * carries the status. It reads headers only: the request and its answer pass unchanged.
 */
export function watchAuthChallenges(inner: typeof fetch): { fetch: typeof fetch; challenge(): AuthChallenge | undefined } {
  let challenge: AuthChallenge | undefined;
  const watched = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const response = await inner(input, init);
    if (response.status === 401 || response.status === 403) challenge = extractWWWAuthenticateParams(response);
    return response;
  };
  return { fetch: watched as typeof fetch, challenge: () => challenge };
}

/**
 * Which authentication a server that refused ours expects. `oauth` when it advertises an authorization
 * server as MCP's authorization spec says (protected resource metadata, RFC 9728, found from the challenge
 * or at the well-known paths; or, as older servers do, authorization server metadata at its own origin);
 * `bearer` otherwise, which usually means a static API token. Every lookup goes through `fetch` (the
 * SSRF guard) and ends with `signal`; a lookup that fails counts as no metadata.
 */
export async function probeAuth(url: string, challenge: AuthChallenge | undefined, fetch: typeof globalThis.fetch, signal: AbortSignal): Promise<McpServerAuthHint> {
  const bounded = ((input: string | URL | Request, init?: RequestInit) => fetch(input, { ...init, signal })) as typeof globalThis.fetch;
  const challengeScopes = challenge?.scope?.split(" ").filter(Boolean);
  try {
    const info = await discoverOAuthServerInfo(url, { resourceMetadataUrl: challenge?.resourceMetadataUrl, fetchFn: bounded });
    const server = info.authorizationServerMetadata;
    if (server) {
      const scopes = challengeScopes ?? info.resourceMetadata?.scopes_supported ?? server.scopes_supported;
      return { type: "oauth", authorization_server: server.issuer, ...(scopes?.length ? { scopes } : {}) };
    }
  } catch {
    // No usable metadata: the server wants a token it does not describe.
  }
  return { type: "bearer", ...(challengeScopes?.length ? { scopes: challengeScopes } : {}) };
}
