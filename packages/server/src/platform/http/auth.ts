import "@fastify/cookie";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../../config.js";
import { AppError, forbidden, unauthorized } from "../errors.js";
import { sha256Hex, tokenKind, type TokenKind } from "../crypto/tokens.js";

/** Who is calling. A user acts through a browser session or a personal token; an org key acts as its org. */
export type Principal =
  | { kind: "user"; userId: string; via: "session"; sessionId: string }
  | { kind: "user"; userId: string; via: "pat"; patId: string }
  | { kind: "org_api_key"; keyId: string; orgId: string };

export type UserPrincipal = Extract<Principal, { kind: "user" }>;

/** A connected machine's daemon, known by its token: it acts only on the daemon routes, as that machine. */
export interface DaemonPrincipal {
  tokenId: string;
  machineId: string;
  orgId: string;
}

/**
 * What a route demands of its caller:
 * - `public`: nothing (sign-in, device code);
 * - `principal`: any valid credential (the default under /api/v1);
 * - `user`: a user, through a personal token or a browser session;
 * - `session`: a signed-in browser, so one API key can never mint or escalate another;
 * - `daemon`: a machine daemon token, and nothing else (the machine daemon routes);
 * - `bearer`: a personal access token or an org API key in the Authorization header; cookies are not
 *   looked at (the MCP endpoint, whose clients are programs holding a token, never a browser session).
 */
export type AuthMode = "public" | "principal" | "user" | "session" | "daemon" | "bearer";

/** Credentials of people and service accounts; daemon tokens never act as either (spec, Authentication 10). */
export type AccountTokenKind = Exclude<TokenKind, "daemon">;

/** Looks credentials up; implemented by the identity module. Inputs are already shape-checked. */
export interface Authenticator {
  bearer(kind: AccountTokenKind, tokenHash: string): Promise<Principal | null>;
  session(tokenHash: string): Promise<{ principal: UserPrincipal; csrfHash: string } | null>;
  /** An active daemon token of a live machine. */
  daemon(tokenHash: string): Promise<DaemonPrincipal | null>;
}

export const SESSION_COOKIE = { plain: "svc_session", secure: "__Host-svc_session" } as const;
export const CSRF_COOKIE = { plain: "svc_csrf", secure: "__Host-svc_csrf" } as const;
export const CSRF_HEADER = "x-svc-csrf";

declare module "fastify" {
  interface FastifyRequest {
    principal: Principal | null;
    daemon: DaemonPrincipal | null;
  }
  interface FastifyInstance {
    /**
     * The principal `request`'s credentials name now, or null when they no longer name one (a revoked key or
     * token, an ended session): a long-lived response re-checks its caller with it (access-watch.ts).
     */
    principalAgain(request: FastifyRequest): Promise<Principal | null>;
  }
  interface FastifyContextConfig {
    auth?: AuthMode;
    /**
     * A public route that starts a browser session (sign-up, sign-in): a request from another origin is
     * refused as a cookie mutation is, so no site can sign a visitor in to an account of its choosing.
     * A request without Origin or Referer (curl, a script) is not a browser's and passes.
     */
    startsSession?: boolean;
  }
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export function cookieNames(config: Config) {
  return {
    session: config.secureCookies ? SESSION_COOKIE.secure : SESSION_COOKIE.plain,
    csrf: config.secureCookies ? CSRF_COOKIE.secure : CSRF_COOKIE.plain,
  };
}

/**
 * Resolves the caller for every request and enforces the route's AuthMode and the CSRF rules; its
 * `principalAgain` resolves a request's credentials once more, for a stream that outlives the request.
 */
export function authHook(config: Config, authenticator: Authenticator) {
  const names = cookieNames(config);
  return Object.assign(authenticate, { principalAgain });

  async function principalAgain(request: FastifyRequest): Promise<Principal | null> {
    try {
      return await resolvePrincipal(request);
    } catch (err) {
      if (err instanceof AppError && err.code === "unauthorized") return null;
      throw err;
    }
  }

  async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    // Routes are authenticated unless they say otherwise; unmatched URLs answer 404 to anyone.
    const matched = request.routeOptions.url !== undefined;
    const mode = matched ? (request.routeOptions.config.auth ?? "principal") : "public";
    // Public routes (sign-in, device code) never look at credentials, so a stale cookie cannot fail them.
    if (mode === "public") {
      const origin = originOf(request);
      if (matched && request.routeOptions.config.startsSession && origin !== undefined && origin !== config.publicUrl) throw foreignOrigin(origin);
      return;
    }
    if (mode === "daemon") {
      request.daemon = await resolveDaemon(request);
      return;
    }
    const principal = mode === "bearer" && request.headers.authorization === undefined ? null : await resolvePrincipal(request);
    request.principal = principal;
    if (!principal) throw unauthorized();
    if (mode === "user" && principal.kind !== "user") throw forbidden("this endpoint is for users; use a personal access token");
    if (mode === "session" && !(principal.kind === "user" && principal.via === "session")) {
      throw forbidden("this action needs a signed-in browser session; API keys cannot perform it");
    }
  }

  async function resolvePrincipal(request: FastifyRequest): Promise<Principal | null> {
    const header = request.headers.authorization;
    if (header !== undefined) {
      // A bearer header takes precedence over cookies; a malformed one is an error, not "anonymous".
      const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
      const kind = match ? tokenKind(match[1]!) : null;
      if (!match || !kind) throw unauthorized("invalid bearer token");
      // Refused before any lookup: a daemon token is not a credential of this API, valid or not.
      if (kind === "daemon") throw unauthorized("machine daemon tokens are valid only on the machine daemon routes");
      const principal = await lookup(() => authenticator.bearer(kind, sha256Hex(match[1]!)));
      if (!principal) throw unauthorized("invalid or revoked bearer token");
      return principal;
    }
    const sessionToken = request.cookies[names.session];
    if (!sessionToken) return null;
    const session = await lookup(() => authenticator.session(sha256Hex(sessionToken)));
    if (!session) return null;
    if (!SAFE_METHODS.has(request.method)) checkCsrf(request, session.csrfHash);
    return session.principal;
  }

  /**
   * Daemon routes take a daemon token only; people's credentials are not even looked up. A well-formed
   * token of another kind, or a session cookie, is 403: whatever it is worth, it is not for this route.
   */
  async function resolveDaemon(request: FastifyRequest): Promise<DaemonPrincipal> {
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(request.headers.authorization ?? "");
    const kind = match ? tokenKind(match[1]!) : null;
    const someoneElse = kind !== null ? kind !== "daemon" : request.headers.authorization === undefined && request.cookies[names.session] !== undefined;
    if (someoneElse) throw forbidden("this route is for machine daemons and takes a machine daemon token (svc_daemon_v1_…)");
    if (!match || kind !== "daemon") throw unauthorized("this route takes a machine daemon token (svc_daemon_v1_…)");
    const daemon = await lookup(() => authenticator.daemon(sha256Hex(match[1]!)));
    if (!daemon) throw unauthorized("invalid or revoked daemon token, or its machine was deleted");
    return daemon;
  }

  function checkCsrf(request: FastifyRequest, csrfHash: string): void {
    const origin = originOf(request);
    if (origin !== config.publicUrl) throw foreignOrigin(origin);
    const header = request.headers[CSRF_HEADER];
    const cookie = request.cookies[names.csrf];
    if (typeof header !== "string" || !header || header !== cookie || sha256Hex(header) !== csrfHash) {
      throw new AppError("csrf_check_failed", `missing or wrong ${CSRF_HEADER} header`);
    }
  }

  function foreignOrigin(origin: string | undefined): AppError {
    // Named both ways: `127.0.0.1` against `localhost` is the usual cause, and the fix is to open the expected one.
    const seen = origin === undefined ? "a request without an Origin or Referer" : `a request from ${origin.slice(0, 200)}`;
    return new AppError("csrf_check_failed", `${seen} does not match this server's public URL; open svc at ${config.publicUrl} (or set SVC_PUBLIC_URL)`);
  }
}

function originOf(request: FastifyRequest): string | undefined {
  return request.headers.origin ?? refererOrigin(request.headers.referer);
}

async function lookup<T>(query: () => Promise<T>): Promise<T> {
  try {
    return await query();
  } catch (err) {
    throw new AppError("authentication_unavailable", "authentication is temporarily unavailable", {}, err);
  }
}

function refererOrigin(referer: string | undefined): string | undefined {
  if (!referer) return undefined;
  try {
    return new URL(referer).origin;
  } catch {
    return undefined;
  }
}
