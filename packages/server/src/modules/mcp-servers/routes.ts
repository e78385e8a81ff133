import type { HttpApp } from "../../platform/http/app.js";
import { pathId, projectPath } from "../../platform/http/params.js";
import { errorResponses } from "../../platform/http/schemas.js";
import { ProjectParams } from "../orgs/schemas.js";
import * as s from "./schemas.js";
import type { McpServerTarget, McpToolsService } from "./tools-service.js";

export function mcpServerRoutes(app: HttpApp, deps: { tools: McpToolsService }) {
  const { tools } = deps;

  app.post(
    "/orgs/:orgID/projects/:projectID/mcp-servers/tools",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listMCPServerTools",
        description:
          "Connects to an MCP server over Streamable HTTP exactly as an agent of the project would (same client, SSRF " +
          "guard, SVC_MCP_CONNECT_TIMEOUT_MS and secret rules), completes the initialize handshake and answers its " +
          "`tools/list`; nothing is stored (agent.operate). A server that refuses the authentication (HTTP 401 or 403) " +
          "answers 422 with an `auth` hint, `oauth` when it advertises an OAuth authorization server and `bearer` " +
          "otherwise; one that answers but not as an MCP server answers 422 without it. A server that cannot be reached, " +
          "times out or fails with a 5xx answers 424 upstream_unavailable; a destination the SSRF guard refuses, 400.",
        params: ProjectParams,
        body: s.McpServerToolsRequest,
        response: { 200: s.McpServerToolsResponse, ...errorResponses(424), 422: s.McpServerToolsError },
      },
    },
    async (request, reply) => {
      // A caller that goes away stops the exchange with the server.
      const abandoned = new AbortController();
      reply.raw.once("close", () => abandoned.abort());
      const { url, auth } = request.body;
      const target: McpServerTarget = {
        url,
        auth: auth.type === "none" ? { type: "none" } : { type: "bearer", secretId: pathId("secret", auth.secret_id), publicSecretId: auth.secret_id },
      };
      const preview = await tools.listTools(request.principal!, ...projectPath(request.params), target, abandoned.signal);
      if (preview.kind === "tools") return preview.tools;
      return reply.status(422).send({ error: preview.message, code: "unprocessable" as const, auth: preview.hint });
    },
  );
}
