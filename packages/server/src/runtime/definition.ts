/**
 * A compiled agent config: what the worker needs to run a model step, resolved once when the config is
 * created and stored immutably with it. The source stays beside it for people; this is for the loop.
 */

export type PermissionMode = "always_allow" | "always_ask" | "always_deny";
export type ToolType = "built_in" | "custom" | "mcp";

export interface ToolDefinition {
  name: string;
  type: ToolType;
  description: string;
  /** A closed JSON Schema object (`{"type":"object", ...}`). */
  inputSchema: Record<string, unknown>;
  permission: PermissionMode;
  /**
   * Set on an `int__<integration>__<operation>` tool: the integration (uuid) the name resolved to when the
   * config was compiled, its kind and the operation. Its calls are `built_in` calls the worker runs in a tool step.
   */
  integration?: IntegrationToolRef;
}

export interface IntegrationToolRef {
  integrationId: string;
  kind: string;
  operation: string;
}

export interface ModelBinding {
  modelProviderConfigId: string;
  providerConfigName: string;
  configuredModelId: string;
  configuredModelRevisionId: string;
  /** The configured model's name, as written in the config. */
  name: string;
  apiFormat: "openai-responses" | "openai-chat-completions" | "anthropic-messages";
  providerModelSlug: string;
  contextWindowTokens: number;
  maxOutputTokens: number;
  cacheRetention: "none" | "short" | "long";
  supportsReasoning: boolean;
  /** Empty when the model does not reason or the config leaves it to the model's default. */
  reasoningEffort: string;
  /** The revision's prices; absent when it has none (its calls cost 0). Revisions never change, so neither does this. */
  pricing?: ModelPricing;
}

/** Decimal strings of US dollars per million tokens (docs/usage-and-budgets.md); absent cache prices are the input price. */
export interface ModelPricing {
  inputPerMtok: string;
  outputPerMtok: string;
  cacheReadPerMtok?: string;
  cacheWritePerMtok?: string;
}

/** An MCP server of the config: where it is, how svc authenticates, and who must approve its tools. */
export interface McpServerDefinition {
  url: string;
  /** `bearer` sends a generic secret's value; `oauth` an oauth_token_set secret's access token, refreshed near expiry. */
  auth: { type: "none" } | { type: "bearer" | "oauth"; secretId: string };
  /** The server-wide mode; `toolPermissions` overrides it for the tools it names. */
  permission: PermissionMode;
  toolPermissions: Record<string, PermissionMode>;
}

/** OpenAI's limit on tools in one request, the lowest of the APIs svc speaks. */
export const MAX_TOOLS = 128;

/** Providers accept tool names of at most 64 characters (OpenAI's limit, the lowest). */
export const MAX_QUALIFIED_NAME = 64;

/** The name the model sees for tool `tool` of MCP server `server`. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`;
}

/** The server key and the server's own tool name of a qualified MCP tool name. Keys hold no `__`. */
export function parseMcpToolName(name: string): { server: string; tool: string } | undefined {
  if (!name.startsWith("mcp__")) return undefined;
  const rest = name.slice("mcp__".length);
  const split = rest.indexOf("__");
  if (split <= 0 || split + 2 >= rest.length) return undefined;
  return { server: rest.slice(0, split), tool: rest.slice(split + 2) };
}

/** A skill the agent may load with the `skill` tool; the model sees its name and description. */
export interface SkillDefinition {
  skillId: string;
  revisionId: string;
  name: string;
  description: string;
}

/**
 * A machine the agent holds, from the config's `machine_sources`: a BYO machine found by its name when the
 * config was compiled. Launch binds it again (the grant may have gone since) and gives it a machine_ref.
 */
export interface ByoMachineSourceDefinition {
  kind: "machine";
  machineId: string;
  machineName: string;
  /** The agent's working directory on the machine; empty uses the machine's. */
  cwd: string;
  envOverlay: Record<string, string | null>;
  /** Variable → secret UUID (null removes the machine's); absent in configs compiled before it existed. */
  secretEnvOverlay?: Record<string, string | null>;
}

/**
 * Machines the agent gets from a pool granted to its project (`machine_pool_name`): `initialNumMachines` made
 * at launch, up to `maxMachines` in all with `create_machine`. Size, environment and idle period are
 * merged over the pool's and its grant's when each machine is made.
 */
export interface PoolMachineSourceDefinition {
  kind: "pool";
  poolId: string;
  poolName: string;
  cwd: string;
  envOverlay: Record<string, string | null>;
  secretEnvOverlay: Record<string, string | null>;
  machineCpu: number | null;
  machineMemoryMb: number | null;
  initialNumMachines: number;
  maxMachines: number;
  /** Undefined inherits the grant's or pool's period; 0 turns idle deletion off for this agent's machines. */
  deleteAfterIdleMinutes?: number;
}

export type MachineSourceDefinition = ByoMachineSourceDefinition | PoolMachineSourceDefinition;

export interface AgentDefinition {
  version: "v1";
  instruction: string;
  model: ModelBinding;
  /** Enabled tools only, sorted by name. */
  tools: ToolDefinition[];
  /** MCP servers by key. */
  mcp: Record<string, McpServerDefinition>;
  /** Configs compiled before machines existed have an empty list. */
  machineSources: MachineSourceDefinition[];
  /** Attached skills, each pinned to the revision that was current when the config was compiled. */
  skills: SkillDefinition[];
  /** The integrations that may show this agent's questions and approvals; absent when the config names none. */
  interactionHandlers?: InteractionHandlerDefinition[];
  /** The config's `delegates` (docs/delegation.md), by handle; absent when the config names none. */
  delegates?: DelegateDefinition[];
  /** The memory stores under `/memory/<name>/` (the config's `memory` section); absent when the config has none. */
  memory?: MemoryAttachmentDefinition[];
}

/** A `delegates` entry: the agent profile (pinned by id when compiled) whose current config a child launches with. */
export interface DelegateDefinition {
  handle: string;
  profileId: string;
  profileName: string;
  description: string;
}

export type MemoryAccessMode = "read_write" | "read_only";

/** A memory store attached to the agent: found by its name (which never changes) when the config was compiled. */
export interface MemoryAttachmentDefinition {
  storeId: string;
  name: string;
  access: MemoryAccessMode;
}

/** An `interaction_handlers` entry: the integration (pinned by id when compiled) and its handler arguments. */
export interface InteractionHandlerDefinition {
  integrationName: string;
  integrationId: string;
  args: Record<string, unknown>;
}
