import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, isInitializeRequest, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/**
 * A real MCP server over Streamable HTTP (the official SDK's server side) for tests: stateful sessions,
 * a few tools with known answers, a record of every JSON-RPC request, and switches to require a bearer
 * token, to advertise OAuth for it (MCP authorization: a challenge naming protected resource metadata at
 * its well-known path, and authorization server metadata at its origin), to forget every session (so the
 * next request gets MCP's 404) and to refuse connections.
 */

export interface McpRequestRecord {
  method: string;
  sessionId: string | undefined;
  authorization: string | undefined;
  tool?: string;
  arguments?: Record<string, unknown>;
}

/** A 1×1 transparent PNG. */
export const PIXEL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

const TOOLS = [
  {
    name: "greet",
    title: "Greeter",
    description: "Greets a person by name.",
    inputSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"], additionalProperties: false },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  { name: "explode", description: "Always fails.", inputSchema: { type: "object", properties: {} } },
  {
    name: "picture",
    description: "Returns a picture and its facts.",
    inputSchema: { type: "object", properties: {} },
    outputSchema: { type: "object", properties: { width: { type: "number" }, height: { type: "number" } } },
  },
  {
    name: "wait",
    description: "Answers after ms milliseconds.",
    inputSchema: { type: "object", properties: { ms: { type: "number" } }, required: ["ms"] },
  },
];

export interface FakeMcpServer {
  url: string;
  requests: McpRequestRecord[];
  /** Tool calls received, in order. */
  calls(): McpRequestRecord[];
  /** Requires this bearer token, or one the function accepts (an authorization server's `isValid`). */
  requireToken(token: string | ((token: string | undefined) => boolean) | undefined): void;
  /**
   * While a token is required, refusals point to OAuth metadata asking for `scopes`: protected resource
   * metadata naming `authorizationServer`, or this server's own origin, whose metadata it then serves.
   */
  advertiseOAuth(scopes: string[], authorizationServer?: string): void;
  forgetSessions(): void;
  /** While down, every request is answered 503. */
  setDown(down: boolean): void;
  /** The next `count` tool calls are received but never answered (a server or worker stuck mid-call). */
  hangCalls(count: number): void;
  reset(): void;
  close(): Promise<void>;
}

function answer(name: string, args: Record<string, unknown>): Promise<CallToolResult> | CallToolResult {
  if (name === "greet") return { content: [{ type: "text", text: `Hello, ${String(args["name"])}!` }] };
  if (name === "explode") return { content: [{ type: "text", text: "kaboom" }], isError: true };
  if (name === "picture") {
    return { content: [{ type: "text", text: "a pixel" }, { type: "image", data: PIXEL_PNG, mimeType: "image/png" }], structuredContent: { width: 1, height: 1 } };
  }
  if (name === "wait") return new Promise((resolve) => setTimeout(() => resolve({ content: [{ type: "text", text: `waited ${String(args["ms"])}` }] }), Number(args["ms"])));
  throw new Error(`unknown tool ${name}`);
}

function mcpServer(hang: () => boolean): Server {
  const server = new Server({ name: "fake-mcp", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, (request) =>
    hang() ? new Promise<CallToolResult>(() => {}) : answer(request.params.name, request.params.arguments ?? {}),
  );
  return server;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? JSON.parse(text) : undefined;
}

export async function startFakeMcpServer(): Promise<FakeMcpServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const requests: McpRequestRecord[] = [];
  let token: string | ((token: string | undefined) => boolean) | undefined;
  let oauthScopes: string[] | undefined;
  let authorizationServer: string | undefined;
  const accepted = (authorization: string | undefined) =>
    typeof token === "function" ? token(authorization?.startsWith("Bearer ") ? authorization.slice("Bearer ".length) : undefined) : authorization === `Bearer ${token}`;
  let origin = "";
  let down = false;
  let hanging = 0;
  const hang = () => hanging > 0 && hanging-- > 0;

  const http: HttpServer = createServer((req, res) => {
    void (async () => {
      if (down) return void res.writeHead(503).end("down");
      if (oauthScopes && req.url?.startsWith("/.well-known/")) return void answerOAuthMetadata(req.url, res);
      if (token && !accepted(req.headers.authorization)) {
        const challenge = oauthScopes ? { "www-authenticate": `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"` } : {};
        return void res.writeHead(401, challenge).end("unauthorized");
      }
      const body = req.method === "POST" ? await readJson(req) : undefined;
      const sessionId = req.headers["mcp-session-id"] as string | undefined;
      for (const message of Array.isArray(body) ? body : body ? [body] : []) {
        const m = message as { method?: string; params?: { name?: string; arguments?: Record<string, unknown> } };
        if (!m.method) continue;
        requests.push({
          method: m.method,
          sessionId,
          authorization: req.headers.authorization,
          ...(m.method === "tools/call" ? { tool: m.params?.name, arguments: m.params?.arguments ?? {} } : {}),
        });
      }
      let transport = sessionId ? sessions.get(sessionId) : undefined;
      if (!transport) {
        if (sessionId) return void res.writeHead(404).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }));
        if (req.method !== "POST" || !isInitializeRequest(body)) return void res.writeHead(400).end("initialize first");
        const fresh = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void sessions.set(id, fresh) });
        await mcpServer(hang).connect(fresh);
        transport = fresh;
      }
      await transport.handleRequest(req, res, body);
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
  });

  function answerOAuthMetadata(path: string, res: ServerResponse): void {
    const json = (body: unknown) => void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
    if (path === "/.well-known/oauth-protected-resource/mcp") {
      return json({ resource: `${origin}/mcp`, authorization_servers: [authorizationServer ?? origin], scopes_supported: oauthScopes });
    }
    if (path === "/.well-known/oauth-authorization-server" && !authorizationServer) {
      return json({ issuer: origin, authorization_endpoint: `${origin}/authorize`, token_endpoint: `${origin}/token`, response_types_supported: ["code"] });
    }
    res.writeHead(404).end("not found");
  }

  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;

  return {
    url: `${origin}/mcp`,
    requests,
    calls: () => requests.filter((r) => r.method === "tools/call"),
    requireToken: (value) => void (token = value),
    advertiseOAuth(scopes, server) {
      oauthScopes = scopes;
      authorizationServer = server;
    },
    forgetSessions: () => sessions.clear(),
    setDown: (value) => void (down = value),
    hangCalls: (count) => void (hanging = count),
    reset() {
      requests.length = 0;
      token = undefined;
      oauthScopes = undefined;
      authorizationServer = undefined;
      down = false;
      hanging = 0;
    },
    async close() {
      for (const transport of sessions.values()) await transport.close().catch(() => {});
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
