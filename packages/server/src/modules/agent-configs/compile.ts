import { MAX_TOOLS, type AgentDefinition, type DelegateDefinition, type MemoryAttachmentDefinition, type InteractionHandlerDefinition, type MachineSourceDefinition, type McpServerDefinition, type ModelBinding, type PermissionMode, type SkillDefinition, type ToolDefinition } from "../../runtime/definition.js";
import { builtInTool } from "../../runtime/tools/catalog.js";
import { RETRIEVAL_TOOLS } from "../../runtime/tools/catalog-files.js";
import { PROCESS_TOOL_NAMES } from "../../runtime/tools/catalog-processes.js";
import { TRANSFER_TOOL_NAMES } from "../../runtime/tools/catalog-transfer.js";
import type { ToolChoice } from "./document.js";
import { withMachineFloor } from "./machine-tools-section.js";
import type { McpServerChoice } from "./mcp-section.js";
import type { ModelFacts } from "./model-rules.js";
import { withDelegateRoster } from "./delegates-section.js";
import { DELEGATION_TOOL_NAMES } from "../../runtime/tools/catalog-delegation.js";

/** Bumped whenever the same source would compile to a different definition. */
export const COMPILER_VERSION = "svc-2";

/**
 * What `agent_configs.compiled_definition` holds: the definition the loop runs and, beside it, the model
 * facts only the API shows. The loop reads it as an `AgentDefinition` and never sees the extra member.
 */
export interface StoredDefinition extends AgentDefinition {
  modelFacts: ModelFacts;
}

export function buildDefinition(input: {
  instruction: string;
  binding: ModelBinding;
  facts: ModelFacts;
  tools: readonly ToolChoice[];
  mcp: readonly McpServerChoice[];
  skills: readonly SkillDefinition[];
  machineSources: readonly MachineSourceDefinition[];
  machineToolsPermission?: PermissionMode;
  /** The enabled `int__…` entries, resolved against the project's integrations (integration-tools-section.ts). */
  integrationTools?: readonly ToolDefinition[];
  interactionHandlers?: readonly InteractionHandlerDefinition[];
  delegates?: readonly DelegateDefinition[];
  /** The `memory` section's stores (memory-section.ts); undefined when the config has no such section. */
  memory?: readonly MemoryAttachmentDefinition[];
}): StoredDefinition {
  const delegates = input.delegates ?? [];
  const coordinating = [...DELEGATION_TOOL_NAMES].reduce((all, name) => withImpliedTool(all, name, delegates.length > 0), input.tools);
  const implied = impliedMemoryTools(impliedMachineTools(withImpliedTool(coordinating, "skill", input.skills.length > 0), input.machineSources), input.memory ?? []);
  const tools = withRetrievalTools(implied, input.mcp.length > 0)
    .filter((tool) => tool.type === "custom" || tool.enabled)
    .flatMap((tool) => (tool.type === "integration" ? [] : [withDelegateRoster(toolDefinition(tool, input.machineToolsPermission), delegates)]))
    .concat(input.integrationTools ?? [])
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    version: "v1",
    instruction: input.instruction,
    model: input.binding,
    tools,
    // Unordered: the definition hash is taken over canonical JSON, and jsonb keeps keys in its own order.
    mcp: Object.fromEntries(input.mcp.map((server) => [server.key, mcpServer(server)])),
    machineSources: [...input.machineSources],
    skills: [...input.skills],
    // Only when written, so configs without the section keep their definition hash.
    ...(input.interactionHandlers ? { interactionHandlers: [...input.interactionHandlers] } : {}),
    ...(input.delegates ? { delegates: [...input.delegates] } : {}),
    ...(input.memory ? { memory: [...input.memory] } : {}),
    modelFacts: input.facts,
  };
}

/**
 * Attaching skills enables the built-in `skill` tool, and attaching machines the machine tools, unless the config
 * names the tool itself (to set its permission or disable it).
 */
function withImpliedTool(tools: readonly ToolChoice[], name: string, implied: boolean): readonly ToolChoice[] {
  if (!implied || tools.some((tool) => tool.name === name)) return tools;
  const tool = builtInTool(name)!;
  return [...tools, { type: "built_in", name, tool, enabled: true, permission: tool.defaultPermission, permissionSet: false }];
}

/**
 * Machines bring their tools: any machine source `run_command`, the process tools (a command run_command
 * leaves running needs them), `upload_file` and `download_file`, `list_machines` and `inspect_machine`; a pool source also `create_machine`
 * and `delete_machine` (the reference's recommended machine tools).
 */
function impliedMachineTools(tools: readonly ToolChoice[], sources: readonly MachineSourceDefinition[]): readonly ToolChoice[] {
  const any = sources.length > 0;
  const pool = sources.some((source) => source.kind === "pool");
  const implied: Array<[string, boolean]> = [
    ["run_command", any],
    ...[...PROCESS_TOOL_NAMES].map((name): [string, boolean] => [name, any]),
    ...[...TRANSFER_TOOL_NAMES].map((name): [string, boolean] => [name, any]),
    ["list_machines", any],
    ["inspect_machine", any],
    ["create_machine", pool],
    ["delete_machine", pool],
  ];
  return implied.reduce((all, [name, wanted]) => withImpliedTool(all, name, wanted), tools);
}

/**
 * Memory stores bring the file tools that reach them: `list_files`, `read_file` and `search_files`, and
 * `write_file` when one store is attached read_write, unless the config names the tool itself.
 */
function impliedMemoryTools(tools: readonly ToolChoice[], memory: readonly MemoryAttachmentDefinition[]): readonly ToolChoice[] {
  const any = memory.length > 0;
  const writes = memory.some((store) => store.access === "read_write");
  const implied: Array<[string, boolean]> = [
    ["list_files", any],
    ["read_file", any],
    ["search_files", any],
    ["write_file", writes],
  ];
  return implied.reduce((all, [name, wanted]) => withImpliedTool(all, name, wanted), tools);
}

/**
 * The reference's rule (docs/tools/built-in.mdx, list_files): a config with enabled tools or MCP servers
 * gets `read_file` and `search_files`, so the model can read back a tool result that was saved as an
 * artifact for being over 50 KiB (runtime/tools/overflow.ts). Only the compiled definition changes, never
 * the source; a tool the config names itself keeps its permission, and `enabled: false` keeps it out.
 * Tools implied by skills or machines count as enabled tools: their results overflow too. They are added
 * only while the definition holds fewer than MAX_TOOLS tools, the most one model call may carry.
 */
function withRetrievalTools(tools: readonly ToolChoice[], hasMcp: boolean): readonly ToolChoice[] {
  const enabled = (list: readonly ToolChoice[]) => list.filter((tool) => tool.type === "custom" || tool.enabled).length;
  const wanted = enabled(tools) > 0 || hasMcp;
  // Never past the tools one model call may carry: a config that fills MAX_TOOLS itself keeps its own tools.
  return RETRIEVAL_TOOLS.reduce((all, name) => withImpliedTool(all, name, wanted && enabled(all) < MAX_TOOLS), tools);
}

function toolDefinition(tool: Exclude<ToolChoice, { type: "integration" }>, machineFloor: PermissionMode | undefined): ToolDefinition {
  if (tool.type === "built_in") {
    const permission = withMachineFloor(tool.name, tool.permission, machineFloor);
    return { name: tool.name, type: "built_in", description: tool.tool.description, inputSchema: tool.tool.inputSchema, permission };
  }
  return { name: tool.name, type: "custom", description: tool.description, inputSchema: tool.inputSchema, permission: tool.permission };
}

function mcpServer(server: McpServerChoice): McpServerDefinition {
  const auth: McpServerDefinition["auth"] = server.auth.type === "none" ? { type: "none" } : { type: server.auth.type, secretId: server.auth.secretId };
  return { url: server.url, auth, permission: server.permission, toolPermissions: server.toolPermissions };
}
