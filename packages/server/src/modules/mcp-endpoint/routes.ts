import type { FastifyReply, FastifyRequest } from "fastify";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { AppError, forbidden } from "../../platform/errors.js";
import type { HttpApp } from "../../platform/http/app.js";
import { projectPath } from "../../platform/http/params.js";
import { ProjectParams } from "../orgs/schemas.js";
import type { McpEndpointService } from "./service.js";

const PATH = "/orgs/:orgID/projects/:projectID/mcp";

/**
 * The MCP endpoint over MCP's Streamable HTTP transport (the official SDK's server side; docs/mcp.md).
 * It speaks JSON-RPC, not the REST API, so it is left out of the OpenAPI document (no tags). What svc
 * refuses before MCP begins (credentials, access, body) is the API's error envelope:
 * - bearer tokens only (`auth: "bearer"`): no or a bad token is 401 with `WWW-Authenticate: Bearer`, as
 *   MCP's authorization spec and RFC 6750 ask;
 * - another org's project, or one the token cannot read: 404 (or 403), as on every route;
 * - a request from a browser page of another origin: 403 (MCP's transport spec: validate Origin, against
 *   DNS rebinding).
 * Held open while a tool waits for an agent (up to 600 s), so it is `longLived`: not counted against the
 * concurrent-request limit, as event streams are not.
 */
export function mcpEndpointRoutes(app: HttpApp, deps: { mcp: McpEndpointService; publicUrl: string }) {
  const { mcp, publicUrl } = deps;
  // Waits under way end at once on shutdown and answer the agent's state, so closing never waits on them.
  app.addHook("preClose", async () => mcp.close());
  const options = {
    config: { auth: "bearer" as const, longLived: true },
    schema: { params: ProjectParams },
    onSend: challenge,
  };

  app.post(PATH, options, async (request, reply) => {
    refuseForeignOrigin(request, publicUrl);
    const [orgId, projectId] = projectPath(request.params);
    if (request.body === undefined) throw new AppError("invalid_request", "the MCP endpoint takes a JSON-RPC message as its body");
    // The transport answers a client that cannot take both of its reply types with a bare JSON-RPC 406; said
    // here first, in svc's error envelope like every other refusal.
    if (!acceptsBoth(request.headers.accept)) {
      throw new AppError("invalid_request", "the MCP endpoint answers with application/json or text/event-stream: send Accept: application/json, text/event-stream");
    }
    const server = await mcp.open(request.principal!, orgId, projectId, request.log);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    reply.hijack();
    reply.raw.setHeader("x-content-type-options", "nosniff");
    reply.raw.on("close", () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (err) {
      request.log.error({ err }, "MCP request failed");
      if (!reply.raw.headersSent) reply.raw.writeHead(500, { "content-type": "application/json" });
      reply.raw.end(JSON.stringify(jsonRpcError(-32603, "internal error")));
    }
  });

  // Stateless: no stream for server-initiated messages and no session to end (MCP transport spec: 405).
  for (const method of ["GET", "DELETE"] as const) {
    app.route({
      method,
      url: PATH,
      ...options,
      handler: async (request, reply) => {
        refuseForeignOrigin(request, publicUrl);
        return reply
          .status(405)
          .header("allow", "POST")
          .type("application/json")
          .send(jsonRpcError(-32000, `Method not allowed: this MCP server is stateless; send every message with POST`));
      },
    });
  }
}

/** A 401 says how to authenticate (MCP authorization; RFC 6750 §3): a bearer token, and whether the one sent was refused. */
async function challenge(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  if (reply.statusCode === 401) {
    const refused = request.headers.authorization !== undefined ? `, error="invalid_token"` : "";
    void reply.header("www-authenticate", `Bearer realm="svc"${refused}`);
  }
  return payload;
}

function acceptsBoth(accept: string | undefined): boolean {
  const types = (accept ?? "").split(",").map((part) => part.split(";")[0]!.trim().toLowerCase());
  return types.includes("application/json") && types.includes("text/event-stream");
}

function refuseForeignOrigin(request: FastifyRequest, publicUrl: string): void {
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== publicUrl) {
    throw forbidden(`requests from ${origin.slice(0, 200)} are refused: only svc's own origin (${publicUrl}) or clients that send no Origin may call the MCP endpoint`);
  }
}

function jsonRpcError(code: number, message: string) {
  return { jsonrpc: "2.0", error: { code, message }, id: null };
}
