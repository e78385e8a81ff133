import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * An OAuth 2.1 authorization server for tests, as MCP's authorization spec expects one: metadata at
 * /.well-known/oauth-authorization-server (RFC 8414), dynamic client registration at /register (RFC 7591),
 * /authorize that approves at once (the person said yes) and redirects with a code, and /token for the
 * authorization_code grant (PKCE S256 checked, redirect_uri and resource matched) and the refresh_token
 * grant (refresh tokens rotate: each is good once). An MCP server asks `isValid` about a bearer token.
 */

export interface FakeAuthorizationServer {
  issuer: string;
  /** Whether `token` is an access token this server issued and has not revoked. */
  isValid(token: string | undefined): boolean;
  /** Revokes every access token issued so far, as a token's expiry would (no clock involved). */
  revokeAccessTokens(): void;
  /** The lifetime, in seconds, of the access tokens issued from now on. */
  setAccessTokenSeconds(seconds: number): void;
  /** While set, every refresh_token grant is refused with invalid_grant. */
  failRefresh(fail: boolean): void;
  /** While set, /authorize redirects with error=access_denied. */
  deny(deny: boolean): void;
  /** Requests received, by endpoint: registrations, authorizations, code exchanges and refreshes. */
  counts: { register: number; authorize: number; code: number; refresh: number };
  /** The resource indicator of the last token request (RFC 8707). */
  lastResource(): string | undefined;
  reset(): void;
  close(): Promise<void>;
}

interface PendingCode {
  clientId: string;
  redirectUri: string;
  challenge: string;
  resource: string | undefined;
  scope: string | undefined;
}

const random = () => randomBytes(16).toString("hex");

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function startFakeAuthorizationServer(): Promise<FakeAuthorizationServer> {
  const clients = new Map<string, string[]>();
  const codes = new Map<string, PendingCode>();
  const refreshTokens = new Map<string, { clientId: string; scope: string | undefined }>();
  let accessTokens = new Set<string>();
  let accessSeconds = 3600;
  let refuseRefresh = false;
  let denying = false;
  let resource: string | undefined;
  const counts = { register: 0, authorize: 0, code: 0, refresh: 0 };
  let issuer = "";

  const json = (res: ServerResponse, status: number, body: unknown) =>
    void res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" }).end(JSON.stringify(body));
  const oauthError = (res: ServerResponse, error: string, description: string) => json(res, 400, { error, error_description: description });

  function issue(res: ServerResponse, clientId: string, scope: string | undefined): void {
    const accessToken = `at-${random()}`;
    const refreshToken = `rt-${random()}`;
    accessTokens.add(accessToken);
    refreshTokens.set(refreshToken, { clientId, scope });
    json(res, 200, { access_token: accessToken, token_type: "Bearer", expires_in: accessSeconds, refresh_token: refreshToken, ...(scope ? { scope } : {}) });
  }

  function token(res: ServerResponse, form: URLSearchParams): void {
    resource = form.get("resource") ?? undefined;
    const clientId = form.get("client_id") ?? "";
    if (!clients.has(clientId)) return oauthError(res, "invalid_client", "unknown client");
    if (form.get("grant_type") === "authorization_code") {
      counts.code += 1;
      const code = codes.get(form.get("code") ?? "");
      codes.delete(form.get("code") ?? "");
      if (!code || code.clientId !== clientId) return oauthError(res, "invalid_grant", "unknown or used code");
      if (code.redirectUri !== form.get("redirect_uri")) return oauthError(res, "invalid_grant", "redirect_uri differs");
      const verifier = form.get("code_verifier") ?? "";
      if (createHash("sha256").update(verifier).digest("base64url") !== code.challenge) return oauthError(res, "invalid_grant", "PKCE verification failed");
      if (code.resource !== resource) return oauthError(res, "invalid_target", "resource differs from the authorization request");
      return issue(res, clientId, code.scope);
    }
    if (form.get("grant_type") === "refresh_token") {
      counts.refresh += 1;
      const presented = form.get("refresh_token") ?? "";
      const grant = refreshTokens.get(presented);
      if (refuseRefresh || !grant || grant.clientId !== clientId) return oauthError(res, "invalid_grant", "the refresh token is not valid");
      refreshTokens.delete(presented);
      return issue(res, clientId, grant.scope);
    }
    oauthError(res, "unsupported_grant_type", "only authorization_code and refresh_token");
  }

  function authorize(res: ServerResponse, query: URLSearchParams): void {
    counts.authorize += 1;
    const clientId = query.get("client_id") ?? "";
    const redirectUri = query.get("redirect_uri") ?? "";
    if (!clients.get(clientId)?.includes(redirectUri)) return void res.writeHead(400).end("unknown client or redirect_uri");
    if (query.get("response_type") !== "code" || query.get("code_challenge_method") !== "S256" || !query.get("code_challenge")) {
      return void res.writeHead(400).end("PKCE S256 and response_type=code are required");
    }
    const target = new URL(redirectUri);
    const state = query.get("state");
    if (state) target.searchParams.set("state", state);
    if (denying) target.searchParams.set("error", "access_denied");
    else {
      const code = `code-${random()}`;
      codes.set(code, { clientId, redirectUri, challenge: query.get("code_challenge")!, resource: query.get("resource") ?? undefined, scope: query.get("scope") ?? undefined });
      target.searchParams.set("code", code);
    }
    res.writeHead(302, { location: target.href }).end();
  }

  const http = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", issuer);
      if (req.method === "GET" && url.pathname === "/.well-known/oauth-authorization-server") {
        return json(res, 200, {
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          registration_endpoint: `${issuer}/register`,
          response_types_supported: ["code"],
          grant_types_supported: ["authorization_code", "refresh_token"],
          code_challenge_methods_supported: ["S256"],
          token_endpoint_auth_methods_supported: ["none"],
          scopes_supported: ["docs:read", "docs:write"],
        });
      }
      if (req.method === "POST" && url.pathname === "/register") {
        counts.register += 1;
        const body = JSON.parse(await readBody(req)) as { redirect_uris?: string[] };
        const clientId = `client-${random()}`;
        clients.set(clientId, body.redirect_uris ?? []);
        return json(res, 201, { ...body, client_id: clientId, token_endpoint_auth_method: "none" });
      }
      if (req.method === "GET" && url.pathname === "/authorize") return authorize(res, url.searchParams);
      if (req.method === "POST" && url.pathname === "/token") return token(res, new URLSearchParams(await readBody(req)));
      res.writeHead(404).end("not found");
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

  return {
    issuer,
    isValid: (value) => value !== undefined && accessTokens.has(value),
    revokeAccessTokens: () => void (accessTokens = new Set()),
    setAccessTokenSeconds: (seconds) => void (accessSeconds = seconds),
    failRefresh: (fail) => void (refuseRefresh = fail),
    deny: (value) => void (denying = value),
    counts,
    lastResource: () => resource,
    reset() {
      accessSeconds = 3600;
      refuseRefresh = false;
      denying = false;
      for (const key of Object.keys(counts) as Array<keyof typeof counts>) counts[key] = 0;
    },
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
