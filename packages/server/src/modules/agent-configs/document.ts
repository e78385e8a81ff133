import { isStorableText } from "../../platform/storable.js";
import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import type { PermissionMode } from "../../runtime/definition.js";
import { CACHE_RETENTIONS, type CacheRetention } from "../models/configured-schemas.js";
import { builtInTool, CUSTOM_TOOL_PERMISSIONS, type BuiltInTool } from "../../runtime/tools/catalog.js";
import { MAX_TOOLS } from "../../runtime/definition.js";
import type { ConfigIssues } from "./issues.js";
import { readMcpSection, type McpServerChoice } from "./mcp-section.js";
import { readSkillsSection, type SkillChoice } from "./skills-section.js";
import { readMachineSourcesSection, type MachineSourceChoice } from "./machines-section.js";
import { checkMachineToolEntries, readMachineToolsSection } from "./machine-tools-section.js";
import { readIntegrationTool, type IntegrationToolChoice } from "./integration-tools-section.js";
import { INTEGRATION_TOOL_PREFIX } from "../../runtime/tools/catalog-integrations.js";
import { readMemorySection, type MemoryChoice } from "./memory-section.js";
import { readInteractionHandlersSection, type InteractionHandlerChoice } from "./interaction-handlers-section.js";
import { readDelegatesSection, type DelegateChoice } from "./delegates-section.js";
import { count, describe, has, isObject, MAX_NAME, readPermission, required, text, unknownKeys, type Obj, type Path } from "./fields.js";

/**
 * The shape of a config document (`version: v1`), checked by hand so every problem gets a message a person
 * can act on and a path into their own text. Nothing here reads the database; the model is resolved later.
 */

/** The `model` section as written: names to resolve, and settings that may only narrow the model's. */
export interface ModelChoice {
  providerConfig: string;
  name: string;
  contextWindowTokens?: number;
  defaultMaxOutputTokens?: number;
  cacheRetention?: CacheRetention;
  /** Present when the config has a `reasoning` section, even an empty one. */
  reasoning?: { effort?: string };
}

export type ToolChoice =
  | { type: "built_in"; name: string; tool: BuiltInTool; enabled: boolean; permission: PermissionMode; permissionSet: boolean }
  | { type: "custom"; name: string; description: string; inputSchema: Record<string, unknown>; permission: PermissionMode }
  | IntegrationToolChoice;

/** What was valid of the document. With no issues reported, every part is present. */
export interface ConfigDocument {
  instruction?: string;
  model?: ModelChoice;
  tools: ToolChoice[];
  mcp: McpServerChoice[];
  skills: SkillChoice[];
  machineSources: MachineSourceChoice[];
  /** `machine_tools.permission`: the floor of every tool that touches a machine. */
  machineToolsPermission?: PermissionMode;
  /** Present when the config has an `interaction_handlers` section. */
  interactionHandlers?: InteractionHandlerChoice[];
  /** Present when the config has a `delegates` section (delegates-section.ts). */
  delegates?: DelegateChoice[];
  /** Present when the config has a `memory` section (memory-section.ts). */
  memory?: MemoryChoice[];
}

const ROOT_KEYS = ["version", "instruction", "model", "tools", "mcp", "machine_sources", "machine_tools", "skills", "interaction_handlers", "delegates", "memory"];
const MODEL_KEYS = ["provider_config", "name", "context_window_tokens", "default_max_output_tokens", "cache_retention", "reasoning"];
const BUILT_IN_KEYS = ["permission", "enabled"];
const CUSTOM_KEYS = ["type", "description", "input_schema", "permission"];
const TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

// Tool input schemas are sent to providers that speak JSON Schema 2020-12; check them against its meta-schema.
const schemaChecker = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
const JSON_SCHEMA_2020 = "https://json-schema.org/draft/2020-12/schema";

export function readConfigDocument(value: unknown, issues: ConfigIssues): ConfigDocument {
  const doc: ConfigDocument = { tools: [], mcp: [], skills: [], machineSources: [] };
  if (!isObject(value)) {
    issues.add([], `the config must be an object with version, instruction and model; got ${describe(value)}`);
    return doc;
  }
  unknownKeys(issues, [], value, ROOT_KEYS);
  if (!has(value, "version")) issues.add(["version"], 'is required; write version: v1');
  else if (value["version"] !== "v1") issues.add(["version"], `must be "v1", the only config version; got ${describe(value["version"])}`);

  if (!has(value, "instruction")) issues.add(["instruction"], "is required: the system instruction the model works under");
  else doc.instruction = text(issues, ["instruction"], value["instruction"], Infinity);

  if (!has(value, "model")) issues.add(["model"], "is required: provider_config and name of a model granted to the project");
  else doc.model = readModel(issues, value["model"]);

  if (has(value, "tools")) doc.tools = readTools(issues, value["tools"]);
  if (has(value, "mcp")) doc.mcp = readMcpSection(issues, value["mcp"]);
  if (has(value, "machine_sources")) doc.machineSources = readMachineSourcesSection(issues, value["machine_sources"]);
  if (has(value, "machine_tools")) {
    doc.machineToolsPermission = readMachineToolsSection(issues, value["machine_tools"]);
    if (doc.machineToolsPermission !== undefined) checkMachineToolEntries(issues, doc.tools, doc.machineToolsPermission);
  }
  if (has(value, "skills")) doc.skills = readSkillsSection(issues, value["skills"]);
  if (has(value, "interaction_handlers")) doc.interactionHandlers = readInteractionHandlersSection(issues, value["interaction_handlers"]);
  if (has(value, "delegates")) doc.delegates = readDelegatesSection(issues, value["delegates"]);
  if (has(value, "memory")) doc.memory = readMemorySection(issues, value["memory"]);
  return doc;
}

function readModel(issues: ConfigIssues, value: unknown): ModelChoice | undefined {
  const path = ["model"];
  if (!isObject(value)) {
    issues.add(path, `must be an object with provider_config and name; got ${describe(value)}`);
    return undefined;
  }
  const before = issues.count;
  unknownKeys(issues, path, value, MODEL_KEYS);
  const providerConfig = required(issues, path, value, "provider_config", "the name of a model provider config of the organization");
  const name = required(issues, path, value, "name", "the name of a configured model under that provider config");
  const settings: Omit<ModelChoice, "providerConfig" | "name"> = {};
  if (has(value, "context_window_tokens")) {
    settings.contextWindowTokens = count(issues, [...path, "context_window_tokens"], value["context_window_tokens"], 2);
  }
  if (has(value, "default_max_output_tokens")) {
    settings.defaultMaxOutputTokens = count(issues, [...path, "default_max_output_tokens"], value["default_max_output_tokens"], 1);
  }
  if (has(value, "cache_retention")) {
    const retention = value["cache_retention"];
    if (CACHE_RETENTIONS.includes(retention as CacheRetention)) settings.cacheRetention = retention as CacheRetention;
    else issues.add([...path, "cache_retention"], `must be one of: ${CACHE_RETENTIONS.join(", ")}; got ${describe(retention)}`);
  }
  if (has(value, "reasoning")) settings.reasoning = readReasoning(issues, value["reasoning"]);
  if (issues.count !== before || providerConfig === undefined || name === undefined) return undefined;
  return { providerConfig, name, ...settings };
}

function readReasoning(issues: ConfigIssues, value: unknown): { effort?: string } {
  const path = ["model", "reasoning"];
  if (!isObject(value)) {
    issues.add(path, `must be an object such as {effort: medium}; got ${describe(value)}`);
    return {};
  }
  unknownKeys(issues, path, value, ["effort"]);
  if (!has(value, "effort")) return {};
  const effort = text(issues, [...path, "effort"], value["effort"], MAX_NAME);
  return effort === undefined ? {} : { effort };
}

function readTools(issues: ConfigIssues, value: unknown): ToolChoice[] {
  if (!isObject(value)) {
    issues.add(["tools"], `must be an object from tool names to their settings; got ${describe(value)}`);
    return [];
  }
  const names = Object.keys(value);
  if (names.length > MAX_TOOLS) issues.add(["tools"], `at most ${MAX_TOOLS} tools; got ${names.length}`);
  const tools: ToolChoice[] = [];
  for (const name of names) {
    const tool = readTool(issues, name, value[name]);
    if (tool) tools.push(tool);
  }
  return tools;
}

function readTool(issues: ConfigIssues, name: string, value: unknown): ToolChoice | undefined {
  const path = ["tools", name];
  if (name.startsWith(INTEGRATION_TOOL_PREFIX)) return readIntegrationTool(issues, name, value);
  if (!TOOL_NAME.test(name)) {
    issues.addAtKey(path, "tool names start with a letter or _, then up to 63 letters, digits or _");
    return undefined;
  }
  if (name.startsWith("mcp__")) {
    issues.addAtKey(path, "the mcp__ prefix is reserved for tools of MCP servers");
    return undefined;
  }
  if (!isObject(value)) {
    issues.add(path, `must be an object: {} for a built-in tool with its defaults, or a custom tool with type: custom; got ${describe(value)}`);
    return undefined;
  }
  return has(value, "type") ? readCustomTool(issues, name, value) : readBuiltInTool(issues, name, value);
}

function readBuiltInTool(issues: ConfigIssues, name: string, value: Obj): ToolChoice | undefined {
  const path = ["tools", name];
  const tool = builtInTool(name);
  if (!tool) {
    issues.addAtKey(
      path,
      `unknown tool "${name}": svc has no built-in tool of this name (GET /api/v1/tool-catalog lists them); declare your own with type: custom`,
    );
    return undefined;
  }
  const before = issues.count;
  unknownKeys(issues, path, value, BUILT_IN_KEYS);
  let enabled = true;
  if (has(value, "enabled")) {
    if (typeof value["enabled"] === "boolean") enabled = value["enabled"];
    else issues.add([...path, "enabled"], `must be true or false; got ${describe(value["enabled"])}`);
  }
  const permission = readPermission(issues, path, value, tool);
  return issues.count === before ? { type: "built_in", name, tool, enabled, permission, permissionSet: has(value, "permission") } : undefined;
}

function readCustomTool(issues: ConfigIssues, name: string, value: Obj): ToolChoice | undefined {
  const path = ["tools", name];
  const before = issues.count;
  if (value["type"] !== "custom") {
    issues.add([...path, "type"], `must be "custom"; built-in tools take no type; got ${describe(value["type"])}`);
    return undefined;
  }
  if (builtInTool(name)) issues.addAtKey(path, `"${name}" is a built-in tool; give the custom tool another name`);
  unknownKeys(issues, path, value, CUSTOM_KEYS);
  const description = required(issues, path, value, "description", "what the tool does and when the model should call it", Infinity);
  let inputSchema: Obj | undefined;
  if (!has(value, "input_schema")) issues.add([...path, "input_schema"], "is required: a JSON Schema of the tool's input, with type: object");
  else inputSchema = readInputSchema(issues, [...path, "input_schema"], value["input_schema"]);
  const permission = readPermission(issues, path, value, CUSTOM_TOOL_PERMISSIONS);
  if (issues.count !== before || description === undefined || inputSchema === undefined) return undefined;
  return { type: "custom", name, description, inputSchema, permission };
}

/** A JSON Schema 2020-12 document describing an object, made of plain JSON data. */
function readInputSchema(issues: ConfigIssues, path: Path, value: unknown): Obj | undefined {
  if (!isObject(value)) {
    issues.add(path, `must be a JSON Schema object such as {type: object, properties: {...}}; got ${describe(value)}`);
    return undefined;
  }
  const before = issues.count;
  checkJsonData(issues, path, value);
  if (issues.count !== before) return undefined;
  if (value["type"] !== "object") issues.add([...path, "type"], `must be "object": a tool's input is always an object; got ${describe(value["type"])}`);
  if (has(value, "$schema") && value["$schema"] !== JSON_SCHEMA_2020) {
    issues.add([...path, "$schema"], `only JSON Schema 2020-12 is supported; omit $schema or write ${JSON_SCHEMA_2020}`);
    return undefined;
  }
  if (!schemaChecker.validateSchema(value)) schemaIssues(issues, path, schemaChecker.errors ?? []);
  return issues.count === before ? value : undefined;
}

/** One issue per place the meta-schema rejects: its first complaint there (the rest repeat it in other words). */
function schemaIssues(issues: ConfigIssues, path: Path, errors: readonly ErrorObject[]): void {
  const seen = new Set<string>();
  for (const error of errors) {
    if (error.keyword === "anyOf" || error.keyword === "oneOf" || error.keyword === "$dynamicRef") continue;
    if (seen.has(error.instancePath)) continue;
    seen.add(error.instancePath);
    const segments = error.instancePath === "" ? [] : error.instancePath.slice(1).split("/").map(unescapePointer);
    const params = error.params as { allowedValues?: unknown[] };
    const message = params.allowedValues ? `must be one of: ${params.allowedValues.join(", ")}` : (error.message ?? "is not valid");
    issues.add([...path, ...segments.map((s) => (/^(0|[1-9][0-9]*)$/.test(s) ? Number(s) : s))], `is not valid JSON Schema: ${message}`);
  }
}

/**
 * Values only YAML can express (binary, infinities) and NUL characters (which PostgreSQL cannot store)
 * are refused wherever free-form data is kept. Walks with an explicit stack: nesting depth is the author's.
 */
function checkJsonData(issues: ConfigIssues, root: Path, value: unknown): void {
  const stack: Array<{ path: Path; value: unknown }> = [{ path: root, value }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { path, value: current } = item;
    if (typeof current === "string") {
      if (current.includes("\u0000")) issues.add(path, "must not contain NUL characters");
      else if (!isStorableText(current)) issues.add(path, "must not contain unpaired UTF-16 surrogates");
    } else if (typeof current === "number") {
      if (!Number.isFinite(current)) issues.add(path, "must be a finite number");
    } else if (Array.isArray(current)) {
      current.forEach((child, index) => stack.push({ path: [...path, index], value: child }));
    } else if (isObject(current)) {
      for (const [key, child] of Object.entries(current)) {
        if (key.includes("\u0000")) issues.addAtKey([...path, key], "keys must not contain NUL characters");
        else if (!isStorableText(key)) issues.addAtKey([...path, key], "keys must not contain unpaired UTF-16 surrogates");
        stack.push({ path: [...path, key], value: child });
      }
    } else if (current !== null && typeof current !== "boolean") {
      issues.add(path, `must be JSON data; got ${describe(current)}`);
    }
  }
}

function unescapePointer(segment: string): string {
  return segment.replaceAll("~1", "/").replaceAll("~0", "~");
}
