import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";

/**
 * svc's side of the Model Context Protocol over Streamable HTTP, on the official SDK. Every exchange is
 * short-lived: `initialize` opens a session and lists the tools, `callTool` resumes that session for
 * one call (opening a new one when the server has forgotten it) and closes the transport afterwards.
 * All traffic goes through the caller's `fetch`, which is the SSRF-guarded one.
 */

export interface McpEndpoint {
  url: string;
  headers: Record<string, string>;
}

export interface McpTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface McpSession {
  protocolVersion: string;
  /** Null when the server keeps no sessions. */
  sessionId: string | null;
  serverInfo: Record<string, unknown>;
  capabilities: Record<string, unknown>;
  tools: McpTool[];
  /** The same tools with every field the server gave (title, output schema, annotations), for previews. */
  listedTools: Tool[];
}

export interface McpClientOptions {
  fetch: typeof fetch;
  /** Deadline for initializing and listing tools. */
  connectTimeoutMs: number;
  /** Deadline for one tool call. */
  callTimeoutMs: number;
}

const CLIENT_INFO = { name: "svc", version: "0.1.0" };
/** A server that pages its tool list forever must not hold a model call: 20 pages is far more than enough. */
const MAX_TOOL_PAGES = 20;

export function createMcpClient(options: McpClientOptions) {
  function transportFor(endpoint: McpEndpoint, sessionId?: string): StreamableHTTPClientTransport {
    return new StreamableHTTPClientTransport(new URL(endpoint.url), {
      fetch: options.fetch,
      requestInit: { headers: endpoint.headers },
      ...(sessionId ? { sessionId } : {}),
      // Only the request/response exchanges matter to svc; a server-initiated stream is not followed.
      reconnectionOptions: { maxReconnectionDelay: 1000, initialReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1, maxRetries: 0 },
    });
  }

  async function withClient<T>(transport: StreamableHTTPClientTransport, work: (client: Client) => Promise<T>): Promise<T> {
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    try {
      return await work(client);
    } finally {
      await client.close().catch(() => {});
    }
  }

  async function initialize(endpoint: McpEndpoint, signal: AbortSignal): Promise<McpSession> {
    const transport = transportFor(endpoint);
    const request = { signal, timeout: options.connectTimeoutMs, maxTotalTimeout: options.connectTimeoutMs };
    return withClient(transport, async (client) => {
      await client.connect(transport, request);
      const tools: McpTool[] = [];
      const listedTools: Tool[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_TOOL_PAGES; page += 1) {
        const listed = await client.listTools(cursor ? { cursor } : {}, request);
        for (const tool of listed.tools) {
          listedTools.push(tool);
          tools.push({ name: tool.name, description: tool.description ?? tool.title ?? "", inputSchema: tool.inputSchema as Record<string, unknown> });
        }
        cursor = listed.nextCursor;
        if (!cursor) break;
      }
      return {
        protocolVersion: transport.protocolVersion ?? "",
        sessionId: transport.sessionId ?? null,
        serverInfo: { ...(client.getServerVersion() ?? {}) },
        capabilities: { ...(client.getServerCapabilities() ?? {}) },
        tools,
        listedTools,
      };
    });
  }

  async function callInSession(endpoint: McpEndpoint, session: Pick<McpSession, "sessionId" | "protocolVersion"> | undefined, name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
    const transport = transportFor(endpoint, session?.sessionId ?? undefined);
    const request = { signal, timeout: options.callTimeoutMs, maxTotalTimeout: options.callTimeoutMs };
    return withClient(transport, async (client) => {
      // Resuming: the SDK skips initialize for a transport that already has a session id.
      if (session?.sessionId) transport.setProtocolVersion(session.protocolVersion);
      await client.connect(transport, request);
      return (await client.callTool({ name, arguments: args }, undefined, request)) as CallToolResult;
    });
  }

  return {
    initialize,

    /**
     * Calls a tool in the stored session. A server that no longer knows the session answers 404 (MCP's
     * rule): the call is then made once more in a new session.
     */
    async callTool(endpoint: McpEndpoint, session: Pick<McpSession, "sessionId" | "protocolVersion"> | undefined, name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
      try {
        return await callInSession(endpoint, session, name, args, signal);
      } catch (err) {
        if (!(session?.sessionId && err instanceof StreamableHTTPError && err.code === 404)) throw err;
        return callInSession(endpoint, undefined, name, args, signal);
      }
    },
  };
}

export type McpClient = ReturnType<typeof createMcpClient>;
