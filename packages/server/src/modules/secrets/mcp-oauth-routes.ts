import type { HttpApp } from "../../platform/http/app.js";
import type { UserPrincipal } from "../../platform/http/auth.js";
import { cspNonce, escapeHtml, sendHtml } from "../../platform/http/html.js";
import { pathId } from "../../platform/http/params.js";
import { errorResponses, iso } from "../../platform/http/schemas.js";
import { OrgParams } from "../orgs/schemas.js";
import { CALLBACK_PATH, type CallbackOutcome, type McpOAuthService } from "./mcp-oauth-service.js";
import * as s from "./schemas.js";

/** `POST /orgs/{orgID}/secrets/mcp-oauth` (startSecretMCPOAuth), under the versioned API. */
export function mcpOAuthRoutes(app: HttpApp, deps: { mcpOAuth: McpOAuthService }) {
  app.post(
    "/orgs/:orgID/secrets/mcp-oauth",
    {
      // Only a person can finish the flow (the callback is bound to their browser session), so only a person starts it.
      config: { auth: "user" },
      schema: {
        tags: [s.TAG],
        operationId: "startSecretMCPOAuth",
        summary: "Start an MCP server OAuth connection",
        description:
          "Starts connecting an MCP server that uses OAuth (docs/mcp.md). svc reads the server's protected resource " +
          "metadata and its authorization server's metadata, registers itself as a client when no client_id is given " +
          "and the server offers registration, and answers an authorization URL with PKCE and a signed state. Open it " +
          "before expires_at and approve; the callback stores the tokens as an oauth_token_set secret named `name`, " +
          "found with GET /orgs/{orgID}/secrets?mcp_oauth_flow_id=<flow_id>. Needs the right to create secrets for " +
          "`owner`, and a user (a session or personal access token): the callback must come from that user's browser " +
          "session. 409: the name is taken; 422: the server offers no usable OAuth; 502: it could not be reached.",
        params: OrgParams,
        body: s.McpOAuthStartRequest,
        response: { 201: s.McpOAuthStartResponse, ...errorResponses(409, 422, 502) },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const owner = body.owner.kind === "project" ? { kind: body.owner.kind, projectId: pathId("project", body.owner.project_id) } : { kind: body.owner.kind };
      const flow = await deps.mcpOAuth.start(request.principal as UserPrincipal, pathId("org", request.params.orgID), {
        owner,
        mcpUrl: body.mcp_url,
        name: body.name,
        returnTo: body.return_to,
        clientId: body.client_id,
        clientSecret: body.client_secret,
        scopes: body.scopes,
        metadata: body.metadata,
      });
      return reply.status(201).send({ flow_id: flow.flowId, authorization_url: flow.authorizationUrl, expires_at: iso(flow.expiresAt) });
    },
  );
}

/**
 * The authorization server's redirect back, outside the versioned API beside the other browser routes
 * under /api/auth. The signed, single-use state names the flow; the browser session must be the user's
 * who started it (no session is 401, another user's is 403), as for the integrations' OAuth callback.
 */
export function mcpOAuthCallbackRoutes(app: HttpApp, deps: { mcpOAuth: McpOAuthService }) {
  app.get(CALLBACK_PATH, { config: { auth: "session" }, schema: { hide: true, querystring: s.McpOAuthCallbackQuery } }, async (request, reply) => {
    const outcome = await deps.mcpOAuth.callback(request.principal as UserPrincipal, request.query);
    if (outcome.returnTo) return reply.status(303).header("cache-control", "no-store").redirect(returnUrl(outcome.returnTo, outcome), 303);
    const nonce = cspNonce();
    return sendHtml(reply, outcome.error ? 400 : 200, page(outcome), nonce);
  });
}

function returnUrl(returnTo: string, outcome: CallbackOutcome): string {
  const url = new URL(returnTo);
  if (outcome.flowId) url.searchParams.set("mcp_oauth_flow_id", outcome.flowId);
  url.searchParams.set("status", outcome.error ? "failed" : "connected");
  if (outcome.secretId) url.searchParams.set("secret_id", outcome.secretId);
  if (outcome.error) url.searchParams.set("error", outcome.error);
  return url.href;
}

function page(outcome: CallbackOutcome): string {
  const title = outcome.error ? "MCP server not connected" : "MCP server connected";
  const text = outcome.error
    ? `svc could not connect the MCP server: ${outcome.error}.`
    : `svc stored the tokens as secret ${outcome.secretId}. You can close this window.`;
  const flow = outcome.flowId ? `<p>Flow: <code>${escapeHtml(outcome.flowId)}</code></p>` : "";
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><main><h1>${title}</h1><p>${escapeHtml(text)}</p>${flow}</main></body></html>`;
}
