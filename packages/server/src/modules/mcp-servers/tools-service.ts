import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Database } from "../../platform/db/index.js";
import { AppError, invalidRequest } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import { OutboundRefusedError } from "../../platform/net/outbound.js";
import { createAgentMcpClient, createMcpFetch, type McpClientSettings } from "../../runtime/mcp/agent-client.js";
import type { McpEndpoint, McpSession } from "../../runtime/mcp/client.js";
import { bearerEndpoint, describeMcpError } from "../../runtime/mcp/connections.js";
import { mcpUrlProblem, type McpServerChoice } from "../agent-configs/mcp-section.js";
import { requireProject } from "../orgs/access.js";
import type { SecretsService } from "../secrets/service.js";
import { OAuthSecretError, type OAuthTokens } from "../secrets/oauth-tokens.js";
import { probeAuth, watchAuthChallenges } from "./auth-probe.js";
import type { McpServerAuthHint, McpServerToolsResponse } from "./schemas.js";

/** A server to preview, as an agent config's `mcp` entry names it (the secret id decoded). */
export interface McpServerTarget {
  url: string;
  auth: McpServerChoice["auth"];
}

/** The server answered with its tools, or refused the authentication and hinted at what it expects. */
export type McpToolsPreview = { kind: "tools"; tools: McpServerToolsResponse } | { kind: "auth_required"; message: string; hint: McpServerAuthHint };

/**
 * Lists an MCP server's tools as an agent of the project would see them: the same client (official SDK,
 * SSRF guard, response cap, SVC_MCP_CONNECT_TIMEOUT_MS), the same URL rules and the same project secret.
 * Needs agent.operate, as writing a config that names the server does. Nothing is stored.
 */
export function createMcpToolsService(deps: { db: Database; secrets: Pick<SecretsService, "resolvePayload">; oauthTokens: OAuthTokens; settings: McpClientSettings }) {
  const { db, secrets, oauthTokens, settings } = deps;
  // One guarded fetch (one connection pool) for every preview; each wraps it to read refusals.
  const mcpFetch = createMcpFetch(settings);

  async function endpointFor(principal: Principal, orgId: string, projectId: string, input: McpServerTarget): Promise<McpEndpoint> {
    const endpoint = await db.tx(async (tx): Promise<McpEndpoint | undefined> => {
      await requireProject(tx, principal, orgId, projectId, "agent.operate");
      if (input.auth.type === "none") return { url: input.url, headers: {} };
      // The secrets service answers 404 for a secret the project neither owns nor was granted.
      const material = await secrets.resolvePayload(tx, orgId, projectId, input.auth.secretId);
      const kind = input.auth.type === "bearer" ? "generic" : "oauth_token_set";
      if (material.kind !== kind) throw invalidRequest(`auth.secret_id must be a${kind === "generic" ? "" : "n"} ${kind} secret holding the token; ${input.auth.publicSecretId} is ${material.kind}`);
      return material.kind === "generic" ? bearerEndpoint(input.url, material.value) : undefined;
    });
    if (endpoint) return endpoint;
    return bearerEndpoint(input.url, await oauthTokenOf(orgId, projectId, input));
  }

  /** The OAuth secret's access token, refreshed when near expiry or `rejected`; a refresh failure is a 422 naming the secret. */
  async function oauthTokenOf(orgId: string, projectId: string, input: McpServerTarget, rejected?: string): Promise<string> {
    if (input.auth.type !== "oauth") throw new Error("not an OAuth server");
    try {
      return await oauthTokens.accessToken(orgId, projectId, input.auth.secretId, rejected);
    } catch (err) {
      if (err instanceof OAuthSecretError) throw new AppError("unprocessable", err.message, {}, err);
      throw err;
    }
  }

  return {
    async listTools(principal: Principal, orgId: string, projectId: string, input: McpServerTarget, signal: AbortSignal): Promise<McpToolsPreview> {
      const problem = mcpUrlProblem(input.url);
      if (problem) throw invalidRequest(`url ${problem}`);
      let endpoint = await endpointFor(principal, orgId, projectId, input);
      const watched = watchAuthChallenges(mcpFetch);
      let session: McpSession;
      const client = createAgentMcpClient(settings, watched.fetch);
      try {
        session = await client.initialize(endpoint, signal).catch(async (err: unknown) => {
          // As agents do: an OAuth server that refuses the token gets one refreshed token, once.
          if (input.auth.type !== "oauth" || !(err instanceof StreamableHTTPError && err.code === 401)) throw err;
          const rejected = endpoint.headers["Authorization"]!.slice("Bearer ".length);
          // The refreshed endpoint replaces the first, so an error echoing its token is redacted too.
          endpoint = bearerEndpoint(input.url, await oauthTokenOf(orgId, projectId, input, rejected));
          return client.initialize(endpoint, signal);
        });
      } catch (err) {
        if (err instanceof AppError) throw err;
        const refusedStatus = err instanceof StreamableHTTPError && (err.code === 401 || err.code === 403) ? err.code : undefined;
        if (refusedStatus === undefined) throw previewError(err, endpoint);
        const deadline = AbortSignal.any([signal, AbortSignal.timeout(settings.runtime.mcpConnectTimeoutMs)]);
        const hint = await probeAuth(input.url, watched.challenge(), mcpFetch, deadline);
        return { kind: "auth_required", hint, message: `the MCP server refused the authentication (HTTP ${refusedStatus}); it expects ${hint.type === "oauth" ? "OAuth" : "a bearer token"}` };
      }
      return { kind: "tools", tools: toolsView(session) };
    },
  };
}

export type McpToolsService = ReturnType<typeof createMcpToolsService>;

/**
 * Why the server's tools could not be listed. A destination the SSRF guard refuses is the request's
 * fault (400). A server that cannot be reached, times out or fails with a 5xx is upstream_unavailable;
 * one that answers but not as an MCP server (another status, another content type, bad JSON-RPC, a
 * protocol version svc does not speak) is unprocessable.
 */
function previewError(err: unknown, endpoint: McpEndpoint): AppError {
  const said = redact(describeMcpError(err), endpoint);
  const refused = causes(err).find((cause) => cause instanceof OutboundRefusedError);
  if (refused) return invalidRequest(`cannot connect to the MCP server: ${refused.message}`);
  if (unreachable(err)) return new AppError("upstream_unavailable", `the MCP server could not be reached: ${said}`, {}, err);
  return new AppError("unprocessable", `the server did not answer as an MCP server: ${said}`, {}, err);
}

function unreachable(err: unknown): boolean {
  if (err instanceof StreamableHTTPError) return (err.code ?? 0) >= 500;
  if (err instanceof McpError) return err.code === ErrorCode.RequestTimeout;
  if (err instanceof Error && (err.name === "AbortError" || err.name === "TimeoutError")) return true;
  // undici's "fetch failed" carries the socket's error (ECONNREFUSED, ENOTFOUND, ETIMEDOUT, UND_ERR_…).
  return err instanceof TypeError && causes(err).some((cause) => typeof (cause as NodeJS.ErrnoException).code === "string");
}

/** `err` and its causes, outermost first; bounded, as a cause chain may loop. */
function causes(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = err; current !== undefined && chain.length < 8; current = (current as { cause?: unknown } | null)?.cause) chain.push(current);
  return chain;
}

/** A server may echo what it was sent; the token never appears in an answer. */
function redact(message: string, endpoint: McpEndpoint): string {
  const token = endpoint.headers["Authorization"]?.slice("Bearer ".length);
  return token && token.length >= 4 ? message.split(token).join("***") : message;
}

function toolsView(session: McpSession): McpServerToolsResponse {
  const info = session.serverInfo;
  return {
    protocol_version: session.protocolVersion,
    server_info: {
      name: String(info["name"] ?? ""),
      version: String(info["version"] ?? ""),
      ...optionalText("title", info["title"]),
      ...optionalText("description", info["description"]),
      ...optionalText("website_url", info["websiteUrl"]),
    },
    tools: session.listedTools.map(toolView),
  };
}

function toolView(tool: Tool): McpServerToolsResponse["tools"][number] {
  const annotations = tool.annotations;
  return {
    name: tool.name,
    ...optionalText("title", tool.title),
    ...optionalText("description", tool.description),
    input_schema: tool.inputSchema as Record<string, unknown>,
    ...(tool.outputSchema ? { output_schema: tool.outputSchema as Record<string, unknown> } : {}),
    ...(annotations
      ? {
          annotations: {
            ...optionalText("title", annotations.title),
            ...optionalFlag("read_only_hint", annotations.readOnlyHint),
            ...optionalFlag("destructive_hint", annotations.destructiveHint),
            ...optionalFlag("idempotent_hint", annotations.idempotentHint),
            ...optionalFlag("open_world_hint", annotations.openWorldHint),
          },
        }
      : {}),
  };
}

const optionalText = <K extends string>(key: K, value: unknown) => (typeof value === "string" ? { [key]: value } : {}) as Partial<Record<K, string>>;
const optionalFlag = <K extends string>(key: K, value: unknown) => (typeof value === "boolean" ? { [key]: value } : {}) as Partial<Record<K, boolean>>;
