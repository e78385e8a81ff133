import { and, eq, notInArray, sql, type SQL } from "drizzle-orm";
import { agentMcpConnections } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { AppDb, Database, Tx } from "../../platform/db/index.js";
import { jsonDigest } from "../../platform/json.js";
import { storable, storableText } from "../../platform/storable.js";
import { newUuid } from "../../platform/ids.js";
import type { SecretMaterial } from "../../modules/secrets/schemas.js";
import { MAX_TOOLS, mcpToolName, parseMcpToolName, type AgentDefinition, type McpServerDefinition, type PermissionMode, type ToolDefinition } from "../definition.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { McpClient, McpEndpoint, McpSession } from "./client.js";

/**
 * An agent's MCP connections (reference design-brief.md §3.4 step 2): before a model call, every server of the config
 * is initialized once per turn, or again when its config entry changed, and its tools snapshot stored.
 * Servers the config no longer names lose their connection. A server that cannot be reached offers no
 * tools; the model is told so and the next model call tries again.
 */

export type McpConnectionRow = typeof agentMcpConnections.$inferSelect;

/** What the runtime needs to reach an agent's MCP servers. */
export interface McpAccess {
  client: McpClient;
  /** A project secret's material; throws when the project can no longer use it. */
  projectSecret(tx: Tx, orgId: string, projectId: string, secretId: string): Promise<SecretMaterial>;
  /**
   * A usable access token of an oauth_token_set secret of the project, refreshed when near expiry or when
   * it is the `rejected` one; throws with a message naming the secret when none can be had.
   */
  oauthToken(orgId: string, projectId: string, secretId: string, rejected?: string): Promise<string>;
}

export interface McpScope {
  agentId: string;
  orgId: string;
  projectId: string;
  turnId: string;
}

export interface PreparedMcp {
  tools: ToolDefinition[];
  /** One sentence per server whose tools are missing, for the system instruction. */
  notes: string[];
}

/** Tool names every provider svc speaks accepts. */
const PROVIDER_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Ends the connections to servers `definition` does not name: a config change drops them at once, and
 * a model step whose config has servers drops any a racing step wrote back. A config without servers
 * costs its steps nothing.
 */
/** `dropMcpConnectionsOutside` as a CTE, for the statement that changes the agent's config. */
export function dropMcpConnectionsOutsideSql(agentId: string, definition: AgentDefinition): SQL {
  const keys = JSON.stringify(Object.keys(definition.mcp));
  return sql`dropped_connections AS (
    DELETE FROM agent_mcp_connections WHERE agent_id = ${agentId} AND server_key NOT IN (SELECT json_array_elements_text(${keys}::json))
  )`;
}

export async function dropMcpConnectionsOutside(db: AppDb | Tx, agentId: string, definition: AgentDefinition): Promise<void> {
  const keys = Object.keys(definition.mcp);
  const kept = keys.length > 0 ? notInArray(agentMcpConnections.serverKey, keys) : undefined;
  await db.delete(agentMcpConnections).where(and(eq(agentMcpConnections.agentId, agentId), kept));
}

export async function prepareMcpTools(db: Database, access: McpAccess, scope: McpScope, definition: AgentDefinition, signal: AbortSignal): Promise<PreparedMcp> {
  // Sorted here: jsonb keeps object keys in its own order (shortest first), not the order they were written.
  const keys = Object.keys(definition.mcp).sort();
  if (keys.length === 0) return { tools: [], notes: [] };
  const existing = await db.read.select().from(agentMcpConnections).where(eq(agentMcpConnections.agentId, scope.agentId));
  if (existing.some((row) => !keys.includes(row.serverKey))) await dropMcpConnectionsOutside(db.write, scope.agentId, definition);
  const rows = await Promise.all(
    keys.map((key) => {
      const server = definition.mcp[key]!;
      const row = existing.find((r) => r.serverKey === key);
      const current = row && row.state === "ready" && row.configHash === jsonDigest(server) && row.turnId === scope.turnId;
      return current ? row : connect(db, access, scope, key, server, signal);
    }),
  );
  const tools: ToolDefinition[] = [];
  const notes: string[] = [];
  // A request with more tools than a provider takes would fail every model call: the surplus is left out.
  let room = MAX_TOOLS - definition.tools.length;
  for (const row of rows) {
    if (row.state !== "ready") {
      notes.push(`The MCP server "${row.serverKey}" could not be reached (${row.error}); its tools are unavailable for now.`);
      continue;
    }
    const server = definition.mcp[row.serverKey]!;
    const offered = row.tools.filter((tool) => PROVIDER_TOOL_NAME.test(mcpToolName(row.serverKey, tool.name)));
    const kept = offered.slice(0, Math.max(room, 0));
    room -= kept.length;
    if (kept.length < offered.length) {
      notes.push(`The MCP server "${row.serverKey}" offers ${offered.length} tools; only ${kept.length} fit the limit of ${MAX_TOOLS} tools per model call.`);
    }
    for (const tool of kept) {
      const name = mcpToolName(row.serverKey, tool.name);
      tools.push({ name, type: "mcp", description: tool.description, inputSchema: tool.inputSchema, permission: permissionOf(server, tool.name) });
    }
  }
  return { tools, notes };
}

/**
 * The tool an MCP call names, as the agent's connection last listed it with the permission its config
 * gives it; undefined when the server is no longer configured, reachable, or offering the tool.
 */
export async function mcpToolOf(tx: Tx, agentId: string, definition: AgentDefinition, name: string): Promise<ToolDefinition | undefined> {
  const parsed = parseMcpToolName(name);
  const server = parsed && definition.mcp[parsed.server];
  if (!parsed || !server) return undefined;
  const [row] = await tx
    .select({ tools: agentMcpConnections.tools })
    .from(agentMcpConnections)
    .where(and(eq(agentMcpConnections.agentId, agentId), eq(agentMcpConnections.serverKey, parsed.server), eq(agentMcpConnections.state, "ready")));
  const tool = row?.tools.find((t) => t.name === parsed.tool);
  if (!tool) return undefined;
  return { name, type: "mcp", description: tool.description, inputSchema: tool.inputSchema, permission: permissionOf(server, tool.name) };
}

function permissionOf(server: McpServerDefinition, tool: string): PermissionMode {
  return server.toolPermissions[tool] ?? server.permission;
}

/**
 * The endpoint of `server` with its auth headers; throws with a reason a person can act on. For an OAuth
 * server, `rejected` is the token it just refused, which is then refreshed.
 */
export async function endpointOf(db: Database, access: McpAccess, scope: Omit<McpScope, "turnId">, server: McpServerDefinition, rejected?: string): Promise<McpEndpoint> {
  if (server.auth.type === "none") return { url: server.url, headers: {} };
  const { secretId } = server.auth;
  if (server.auth.type === "oauth") return bearerEndpoint(server.url, await access.oauthToken(scope.orgId, scope.projectId, secretId, rejected));
  const material = await db.tx((tx) => access.projectSecret(tx, scope.orgId, scope.projectId, secretId)).catch(() => undefined);
  if (material?.kind !== "generic") throw new Error("its bearer token secret is no longer available to the project");
  return bearerEndpoint(server.url, material.value);
}

/**
 * Runs `work` against the server and, when an OAuth server answers 401 (a token revoked or expired
 * early), once more with a refreshed token. A second refusal is the work's error: never a loop.
 */
export async function withMcpAuth<T>(db: Database, access: McpAccess, scope: Omit<McpScope, "turnId">, server: McpServerDefinition, work: (endpoint: McpEndpoint) => Promise<T>, endpoint?: McpEndpoint): Promise<T> {
  const first = endpoint ?? (await endpointOf(db, access, scope, server));
  try {
    return await work(first);
  } catch (err) {
    if (server.auth.type !== "oauth" || !(err instanceof StreamableHTTPError && err.code === 401)) throw err;
    const rejected = first.headers["Authorization"]?.slice("Bearer ".length);
    return work(await endpointOf(db, access, scope, server, rejected));
  }
}

/** A server reached with a secret's value or an access token as its bearer token. */
export function bearerEndpoint(url: string, token: string): McpEndpoint {
  return { url, headers: { Authorization: `Bearer ${token}` } };
}

async function connect(db: Database, access: McpAccess, scope: McpScope, key: string, server: McpServerDefinition, signal: AbortSignal): Promise<McpConnectionRow> {
  let session: McpSession | undefined;
  let error: string | undefined;
  try {
    // What the server says about itself and its tools is stored: made storable where it enters (issue 9, F2).
    session = storable(await withMcpAuth(db, access, scope, server, (endpoint) => access.client.initialize(endpoint, signal)));
  } catch (err) {
    if (signal.aborted) throw err;
    error = storableText(describeMcpError(err));
  }
  const values = {
    endpoint: server.url,
    configHash: jsonDigest(server),
    state: session ? "ready" : "failed",
    protocolVersion: session?.protocolVersion ?? null,
    sessionId: session?.sessionId ?? null,
    serverInfo: session?.serverInfo ?? null,
    capabilities: session?.capabilities ?? null,
    tools: session?.tools ?? [],
    error: error ?? null,
    turnId: scope.turnId,
  };
  const [row] = await db.write
    .insert(agentMcpConnections)
    .values({ id: newUuid(), agentId: scope.agentId, serverKey: key, ...values })
    .onConflictDoUpdate({
      target: [agentMcpConnections.agentId, agentMcpConnections.serverKey],
      set: { ...values, generation: sql`${agentMcpConnections.generation} + 1`, updatedAt: dbNow },
    })
    .returning();
  return row!;
}

/** An error from an MCP exchange, as one short phrase. */
export function describeMcpError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.length > 500 ? `${message.slice(0, 500)}…` : message;
}
