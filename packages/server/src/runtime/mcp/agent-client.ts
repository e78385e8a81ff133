import type { Config } from "../../config.js";
import { capResponseBytes } from "../../platform/net/capped-fetch.js";
import { createGuardedFetch } from "../../platform/net/guarded-fetch.js";
import type { OutboundPolicy } from "../../platform/net/outbound.js";
import { createMcpClient, type McpClient } from "./client.js";

/** An MCP answer larger than this is an error: results are capped far lower once stored (48 MiB bodies). */
const MAX_MCP_RESPONSE_BYTES = 64 * 1024 * 1024;

export type McpClientSettings = OutboundPolicy & { runtime: Pick<Config["runtime"], "mcpConnectTimeoutMs" | "mcpCallTimeoutMs"> };

/** The `fetch` of every MCP exchange: through the SSRF guard, with a cap on what a server may send. */
export function createMcpFetch(policy: OutboundPolicy): typeof fetch {
  return capResponseBytes(createGuardedFetch(policy), MAX_MCP_RESPONSE_BYTES);
}

/**
 * The MCP client exactly as agents use it, with the operator's deadlines. `fetch` is `createMcpFetch`'s;
 * a caller may hand in one that wraps it (to read an answer's headers), never one that bypasses it.
 */
export function createAgentMcpClient(settings: McpClientSettings, fetch: typeof globalThis.fetch = createMcpFetch(settings)): McpClient {
  return createMcpClient({ fetch, connectTimeoutMs: settings.runtime.mcpConnectTimeoutMs, callTimeoutMs: settings.runtime.mcpCallTimeoutMs });
}
