import { discoverOAuthServerInfo, exchangeAuthorization, registerClient, startAuthorization } from "@modelcontextprotocol/sdk/client/auth.js";
import type { AuthorizationServerMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { OAuthError, ServerError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { CapabilitySigner } from "../../platform/crypto/capabilities.js";
import type { EnvelopeCipher } from "../../platform/crypto/envelope.js";
import type { Database } from "../../platform/db/index.js";
import { isUniqueViolation } from "../../platform/db/index.js";
import { sqlState } from "../../platform/db/pg-errors.js";
import { AppError, conflict, forbidden, invalidRequest } from "../../platform/errors.js";
import type { UserPrincipal } from "../../platform/http/auth.js";
import { decodeId, encodeId, newUuid } from "../../platform/ids.js";
import { OutboundRefusedError } from "../../platform/net/outbound.js";
import { mcpUrlProblem } from "../agent-configs/mcp-section.js";
import { requireOwnerManage } from "./authority.js";
import { checkMaterial, payloadKeys, sealMaterial } from "./material.js";
import * as flows from "./mcp-oauth-store.js";
import type { OwnerKind, SecretMaterial } from "./schemas.js";
import * as store from "./store.js";

/**
 * MCP OAuth for secrets (reference: startSecretMCPOAuth; MCP's authorization spec): discovery of the
 * server's protected resource metadata (RFC 9728) and its authorization server's metadata (RFC 8414),
 * dynamic client registration (RFC 7591) when no client is given, and the authorization code grant with
 * PKCE (OAuth 2.1), all on the official MCP SDK and through the SSRF guard. The callback stores the
 * tokens as an `oauth_token_set` secret; `oauth-tokens.ts` refreshes them when agents use it.
 */

/** How long a person has to approve at the authorization server. */
export const FLOW_TTL_SECONDS = 600;
/** The metadata key svc sets on the secret to the flow's MCP URL (reference: MCPOAuthStartMetadata). */
export const RESERVED_METADATA_KEY = "mcp_url";
export const CALLBACK_PATH = "/api/auth/mcp-oauth/callback";

export interface StartInput {
  owner: { kind: OwnerKind; projectId?: string };
  mcpUrl: string;
  name: string;
  returnTo?: string;
  clientId?: string;
  clientSecret?: string;
  scopes?: string[];
  metadata?: Record<string, string>;
}

/** What the callback tells the browser: where to go, and whether a secret was stored. */
export interface CallbackOutcome {
  flowId?: string;
  secretId?: string;
  returnTo?: string | null;
  error?: string;
}

/** The sealed part of a flow: what must never be readable from the database alone. */
interface FlowSecrets {
  code_verifier: string;
  client_secret?: string;
  token_endpoint_auth_method?: string;
}

export function createMcpOAuthService(deps: {
  db: Database;
  cipher: EnvelopeCipher;
  signer: CapabilitySigner;
  publicUrl: string;
  fetch: typeof fetch;
  timeoutMs: number;
}) {
  const { db, cipher, signer } = deps;
  const redirectUri = `${deps.publicUrl}${CALLBACK_PATH}`;
  const bounded = ((input: string | URL | Request, init?: RequestInit) =>
    deps.fetch(input, { ...init, signal: AbortSignal.timeout(deps.timeoutMs) })) as typeof fetch;

  const flowAad = (flowId: string) => `svc.mcp-oauth-flow.v1:${flowId}`;
  const stateOf = (publicFlowId: string) => `${publicFlowId}.${signer.sign([publicFlowId])}`;

  /** The flow id a state names, when svc signed it; anything else is undefined. */
  function flowOfState(state: string): string | undefined {
    const [publicFlowId, mac] = state.split(".");
    if (!publicFlowId || !mac || !signer.verify([publicFlowId], mac)) return undefined;
    return decodeId("mcpOAuthFlow", publicFlowId) ?? undefined;
  }

  async function discover(mcpUrl: string, scopes: string[] | undefined) {
    // The SDK takes a failed metadata request for missing metadata; a server that never answered (or only
    // with 5xx) is unavailable, not one without OAuth.
    let answered = false;
    let failure: unknown;
    const watched = (async (input: string | URL | Request, init?: RequestInit) => {
      try {
        const response = await bounded(input, init);
        if (response.status < 500) answered = true;
        else failure ??= new Error(`HTTP ${response.status} from ${String(input instanceof Request ? input.url : input)}`);
        return response;
      } catch (err) {
        failure ??= err;
        throw err;
      }
    }) as typeof fetch;
    const info = await discoverOAuthServerInfo(mcpUrl, { fetchFn: watched }).catch((err: unknown) => {
      throw upstreamError(err, "the MCP server's OAuth metadata could not be read");
    });
    const server = info.authorizationServerMetadata;
    if (!server && !answered) throw upstreamError(failure, "the MCP server could not be reached");
    if (!server) throw new AppError("unprocessable", "the MCP server advertises no OAuth authorization server (no protected resource or authorization server metadata)");
    for (const [field, url] of [["authorization_endpoint", server.authorization_endpoint], ["token_endpoint", server.token_endpoint]] as const) {
      if (!httpsOrLoopback(url)) throw new AppError("unprocessable", `the authorization server's ${field} must use https (http only on a loopback host); got ${url}`);
    }
    const resource = info.resourceMetadata?.resource ?? canonicalResource(mcpUrl);
    const chosen = scopes ?? info.resourceMetadata?.scopes_supported ?? server.scopes_supported;
    return { authorizationServer: info.authorizationServerUrl, server, resource, scope: chosen?.length ? chosen.join(" ") : undefined };
  }

  async function client(input: StartInput, server: AuthorizationServerMetadata, scope: string | undefined) {
    if (input.clientId !== undefined) return { client_id: input.clientId, ...(input.clientSecret ? { client_secret: input.clientSecret } : {}) };
    if (!server.registration_endpoint) {
      throw new AppError("unprocessable", "the authorization server offers no dynamic client registration; register svc there and give client_id (and client_secret)");
    }
    return registerClient(server.issuer, {
      metadata: server,
      clientMetadata: {
        client_name: "svc",
        redirect_uris: [redirectUri],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      },
      scope,
      fetchFn: bounded,
    }).catch((err: unknown) => {
      throw upstreamError(err, "the authorization server refused to register svc as a client");
    });
  }

  return {
    /** Checks the caller may create the secret, discovers the server, registers if needed and records the flow. */
    async start(principal: UserPrincipal, orgId: string, input: StartInput) {
      const problem = mcpUrlProblem(input.mcpUrl);
      if (problem) throw invalidRequest(`mcp_url ${problem}`);
      const returnTo = input.returnTo === undefined ? null : checkedReturnTo(input.returnTo, deps.publicUrl);
      const owner = await db.tx(async (tx) => {
        const checked = await requireOwnerManage(tx, principal, orgId, input.owner);
        if (await store.findSecretByOwnerName(tx, orgId, checked, input.name)) throw conflict(`a secret named "${input.name}" already exists for this owner`);
        return checked;
      });
      const { authorizationServer, server, resource, scope } = await discover(input.mcpUrl, input.scopes);
      const registered = await client(input, server, scope);
      const flowId = newUuid();
      const publicFlowId = encodeId("mcpOAuthFlow", flowId);
      const { authorizationUrl, codeVerifier } = await startAuthorization(authorizationServer, {
        metadata: server,
        clientInformation: registered,
        redirectUrl: redirectUri,
        scope,
        state: stateOf(publicFlowId),
        resource: new URL(resource),
      }).catch((err: unknown) => {
        throw new AppError("unprocessable", `the authorization server cannot be used: ${message(err)}`, {}, err);
      });
      const secrets: FlowSecrets = {
        code_verifier: codeVerifier,
        ...(registered.client_secret ? { client_secret: registered.client_secret } : {}),
        ...("token_endpoint_auth_method" in registered && registered.token_endpoint_auth_method ? { token_endpoint_auth_method: registered.token_endpoint_auth_method } : {}),
      };
      const flow = await flows.insertFlow(
        db.write,
        {
          id: flowId,
          orgId,
          startedByUserId: principal.userId,
          ownerKind: owner.kind,
          ownerProjectId: owner.projectId,
          ownerUserId: owner.userId,
          name: input.name,
          metadata: input.metadata ?? {},
          mcpUrl: input.mcpUrl,
          resource,
          authorizationServer,
          tokenEndpoint: server.token_endpoint,
          clientId: registered.client_id,
          scopes: scope ?? null,
          redirectUri,
          returnTo,
          sealed: cipher.seal(Buffer.from(JSON.stringify(secrets), "utf8"), flowAad(flowId)),
        },
        FLOW_TTL_SECONDS,
      );
      return { flowId: publicFlowId, authorizationUrl: authorizationUrl.href, expiresAt: flow.expiresAt };
    },

    /**
     * The authorization server's redirect back, in the browser of the user who started the flow: verifies
     * the signed state, refuses anyone else (as the Slack install callback does, so that a victim who opens
     * an attacker's authorization link cannot store the victim's tokens in the attacker's org), uses the
     * flow once, exchanges the code (with the PKCE verifier) and stores the tokens as a new secret whose
     * version names the flow.
     */
    async callback(principal: UserPrincipal, query: { state?: string; code?: string; error?: string; error_description?: string }): Promise<CallbackOutcome> {
      const flowId = query.state ? flowOfState(query.state) : undefined;
      if (!flowId) return { error: "the state parameter is missing or was not issued by svc" };
      const started = await flows.findFlow(db.read, flowId);
      if (started && started.startedByUserId !== principal.userId) throw forbidden("this authorization was started by another user; sign in as that user");
      const flow = await flows.consumeFlow(db.write, flowId, principal.userId);
      const publicFlowId = encodeId("mcpOAuthFlow", flowId);
      if (!flow) return { flowId: publicFlowId, error: "this authorization has expired or was already used; start it again" };
      const failed = (error: string): CallbackOutcome => ({ flowId: publicFlowId, returnTo: flow.returnTo, error });
      if (query.error) return failed(`the authorization server answered ${query.error}${query.error_description ? `: ${query.error_description}` : ""}`);
      if (!query.code) return failed("the authorization server sent no code");
      const sealed = JSON.parse(cipher.open(flow.sealed, flowAad(flowId)).toString("utf8")) as FlowSecrets;
      let tokens: OAuthTokens;
      try {
        tokens = await exchangeAuthorization(flow.authorizationServer, {
          metadata: { issuer: flow.authorizationServer, authorization_endpoint: flow.tokenEndpoint, token_endpoint: flow.tokenEndpoint, response_types_supported: ["code"] },
          clientInformation: {
            client_id: flow.clientId,
            ...(sealed.client_secret ? { client_secret: sealed.client_secret } : {}),
            ...(sealed.token_endpoint_auth_method ? { token_endpoint_auth_method: sealed.token_endpoint_auth_method } : {}),
          },
          authorizationCode: query.code,
          codeVerifier: sealed.code_verifier,
          redirectUri: flow.redirectUri,
          resource: new URL(flow.resource),
          fetchFn: bounded,
        });
      } catch (err) {
        return failed(`the authorization server did not issue tokens: ${message(err)}`);
      }
      const material = tokenMaterial(flow, tokens, sealed.client_secret);
      try {
        checkMaterial(material, "");
        const secretId = await storeSecret(flow, material);
        return { flowId: publicFlowId, returnTo: flow.returnTo, secretId: encodeId("secret", secretId) };
      } catch (err) {
        // The owner may be gone by now (a deleted project, a user who left): no secret, and the browser is told.
        if (err instanceof AppError || isUniqueViolation(err, "secrets_owner_name") || sqlState(err) === "23503") return failed(`the secret could not be stored: ${message(err)}`);
        throw err;
      }
    },

    sweepOld: () => flows.deleteOldFlows(db.write),
  };

  async function storeSecret(flow: flows.FlowRow, material: SecretMaterial): Promise<string> {
    return db.tx(async (tx) => {
      const owner = { kind: flow.ownerKind as OwnerKind, projectId: flow.ownerProjectId, userId: flow.ownerUserId };
      if (await store.findSecretByOwnerName(tx, flow.orgId, owner, flow.name)) throw conflict(`a secret named "${flow.name}" was created meanwhile`);
      const secretId = newUuid();
      await store.insertSecret(tx, {
        id: secretId,
        orgId: flow.orgId,
        ownerKind: owner.kind,
        ownerProjectId: owner.projectId,
        ownerUserId: owner.userId,
        name: flow.name,
        kind: "oauth_token_set",
        metadata: { ...flow.metadata, [RESERVED_METADATA_KEY]: flow.mcpUrl },
        currentVersionNumber: 1,
        payloadKeys: payloadKeys(material),
      });
      const envelope = sealMaterial(cipher, { orgId: flow.orgId, secretId, versionNumber: 1, kind: "oauth_token_set" }, material);
      await store.insertVersion(tx, { id: newUuid(), orgId: flow.orgId, secretId, versionNumber: 1, envelope, mcpOAuthFlowId: flow.id });
      await flows.recordSecret(tx, flow.id, secretId);
      return secretId;
    });
  }
}

export type McpOAuthService = ReturnType<typeof createMcpOAuthService>;

function tokenMaterial(flow: flows.FlowRow, tokens: OAuthTokens, clientSecret: string | undefined): SecretMaterial {
  return {
    kind: "oauth_token_set",
    access_token: tokens.access_token,
    ...(tokens.expires_in !== undefined && tokens.expires_in >= 1 ? { access_token_expires_in_seconds: Math.min(Math.floor(tokens.expires_in), 2147483647) } : {}),
    ...(tokens.refresh_token
      ? {
          refresh: {
            refresh_token: tokens.refresh_token,
            token_endpoint: flow.tokenEndpoint,
            client_id: flow.clientId,
            ...(clientSecret ? { client_secret: clientSecret } : {}),
            resource: flow.resource,
          },
        }
      : {}),
    ...(tokens.id_token ? { id_token: tokens.id_token } : {}),
    mcp_url: flow.mcpUrl,
    ...(tokens.scope || flow.scopes ? { scopes: tokens.scope || flow.scopes! } : {}),
    token_type: tokens.token_type,
  };
}

/**
 * Where the browser goes after the callback: a path on svc, or a URL of svc's own origin. Any other
 * address would make svc an open redirect.
 */
function checkedReturnTo(value: string, publicUrl: string): string {
  let url: URL;
  try {
    url = new URL(value, publicUrl);
  } catch {
    throw invalidRequest("return_to must be a path or a URL on svc's public origin");
  }
  if (url.origin !== new URL(publicUrl).origin || value.startsWith("//")) throw invalidRequest("return_to must be a path or a URL on svc's public origin (SVC_PUBLIC_URL)");
  return url.href;
}

/** MCP's canonical resource URI of a server: its URL without fragment. */
function canonicalResource(mcpUrl: string): string {
  const url = new URL(mcpUrl);
  url.hash = "";
  return url.href;
}

function httpsOrLoopback(value: string): boolean {
  const url = URL.parse(value);
  if (!url) return false;
  if (url.protocol === "https:") return true;
  return url.protocol === "http:" && (url.hostname === "localhost" || url.hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(url.hostname));
}

function message(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/**
 * A failed exchange with the MCP or authorization server: a destination the SSRF guard refuses is the
 * request's fault (400), an OAuth error answer is unprocessable (422), and no answer or a 5xx is 502.
 */
function upstreamError(err: unknown, what: string): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof OutboundRefusedError || (err instanceof Error && err.cause instanceof OutboundRefusedError)) {
    return invalidRequest(`${what}: ${message(err instanceof OutboundRefusedError ? err : err.cause)}`);
  }
  if (err instanceof OAuthError && !(err instanceof ServerError)) return new AppError("unprocessable", `${what}: ${message(err)}`, {}, err);
  return new AppError("upstream_unavailable", `${what}: ${message(err)}`, {}, err);
}
