import type { AgentDefinition, MachineSourceDefinition, McpServerDefinition, ModelBinding, SkillDefinition, ToolDefinition } from "../../runtime/definition.js";
import { builtInTool } from "../../runtime/tools/catalog.js";
import { PROCESS_TOOL_NAMES } from "../../runtime/tools/catalog-processes.js";
import type { ToolChoice } from "./document.js";
import type { McpServerChoice } from "./mcp-section.js";
import type { ModelFacts } from "./model-rules.js";

/** Bumped whenever the same source would compile to a different definition. */
export const COMPILER_VERSION = "svc-1";

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
}): StoredDefinition {
  const machineTools = ["run_command", ...PROCESS_TOOL_NAMES];
  const tools = machineTools
    .reduce((chosen, name) => withImpliedTool(chosen, name, input.machineSources.length > 0), withImpliedTool(input.tools, "skill", input.skills.length > 0))
    .filter((tool) => tool.type === "custom" || tool.enabled)
    .map(toolDefinition)
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
    modelFacts: input.facts,
  };
}

/**
 * Attaching skills enables the built-in `skill` tool, and attaching machines `run_command` and the process
 * tools (a command run_command leaves running needs them), unless the config names the tool itself (to set
 * its permission or disable it).
 */
function withImpliedTool(tools: readonly ToolChoice[], name: string, implied: boolean): readonly ToolChoice[] {
  if (!implied || tools.some((tool) => tool.name === name)) return tools;
  const tool = builtInTool(name)!;
  return [...tools, { type: "built_in", name, tool, enabled: true, permission: tool.defaultPermission }];
}

function toolDefinition(tool: ToolChoice): ToolDefinition {
  if (tool.type === "built_in") {
    return { name: tool.name, type: "built_in", description: tool.tool.description, inputSchema: tool.tool.inputSchema, permission: tool.permission };
  }
  return { name: tool.name, type: "custom", description: tool.description, inputSchema: tool.inputSchema, permission: tool.permission };
}

function mcpServer(server: McpServerChoice): McpServerDefinition {
  const auth: McpServerDefinition["auth"] = server.auth.type === "bearer" ? { type: "bearer", secretId: server.auth.secretId } : { type: "none" };
  return { url: server.url, auth, permission: server.permission, toolPermissions: server.toolPermissions };
}
