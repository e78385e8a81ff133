import type { HttpApp } from "../../platform/http/app.js";
import { pathId, projectPath } from "../../platform/http/params.js";
import { DEFAULT_PAGE_SIZE } from "../../platform/http/lists.js";
import { errorResponses, Page } from "../../platform/http/schemas.js";
import { ProjectParams } from "../orgs/schemas.js";
import * as s from "./schemas.js";
import type { McpRegistryService } from "./registry-service.js";
import type { McpServerTarget, McpToolsService } from "./tools-service.js";

export function mcpServerRoutes(app: HttpApp, deps: { tools: McpToolsService; registry: McpRegistryService }) {
  const { tools, registry } = deps;

  app.get(
    "/mcp-servers",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listMCPServers",
        summary: "Search the MCP server registry",
        description:
          "Searches svc's snapshot of an MCP registry (SVC_MCP_REGISTRY_URL, the official one by default; docs/mcp.md): the " +
          "latest version of every active server with a `streamable-http` remote. With `q`, each word must begin a word of " +
          "the name, title, description or a remote URL, and results are ranked (name matches first, then title, remote " +
          "URL, description); without it they are ordered by name. Open to any authenticated caller.",
        querystring: s.ListMcpServersQuery,
        response: { 200: Page(s.McpRegistryServer), ...errorResponses() },
      },
    },
    async (request) =>
      registry.listServers({ q: request.query.q, remoteUrl: request.query.remote_url, limit: request.query.limit ?? DEFAULT_PAGE_SIZE, cursor: request.query.cursor }),
  );

  app.post(
    "/orgs/:orgID/projects/:projectID/mcp-servers/tools",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listMCPServerTools",
        summary: "List an MCP server's tools",
        description:
          "Connects to an MCP server over Streamable HTTP exactly as an agent of the project would (same client, SSRF " +
          "guard, SVC_MCP_CONNECT_TIMEOUT_MS and secret rules), completes the initialize handshake and answers its " +
          "`tools/list`; nothing is stored (agent.operate). A server that refuses the authentication (HTTP 401 or 403) " +
          "answers 422 with an `auth` hint, `oauth` when it advertises an OAuth authorization server and `bearer` " +
          "otherwise; one that answers but not as an MCP server answers 422 without it. An `oauth` secret's token is " +
          "refreshed first when near its expiry (and once more when refused); a failed refresh answers 422 naming the " +
          "secret. A server that cannot be reached, " +
          "times out or fails with a 5xx answers 502 upstream_unavailable; a destination the SSRF guard refuses, 400.",
        params: ProjectParams,
        body: s.McpServerToolsRequest,
        response: { 200: s.McpServerToolsResponse, ...errorResponses(502), 422: s.McpServerToolsError },
      },
    },
    async (request, reply) => {
      // A caller that goes away stops the exchange with the server.
      const abandoned = new AbortController();
      reply.raw.once("close", () => abandoned.abort());
      const { url, auth } = request.body;
      const target: McpServerTarget = {
        url,
        auth: auth.type === "none" ? { type: "none" } : { type: auth.type, secretId: pathId("secret", auth.secret_id), publicSecretId: auth.secret_id },
      };
      const preview = await tools.listTools(request.principal!, ...projectPath(request.params), target, abandoned.signal);
      if (preview.kind === "tools") return preview.tools;
      return reply.status(422).send({ error: preview.message, code: "unprocessable" as const, auth: preview.hint });
    },
  );
}
