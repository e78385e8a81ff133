import { BUILT_IN_TOOLS, PERMISSION_MODES } from "../../runtime/tools/catalog.js";
import { CACHE_RETENTIONS } from "../models/configured-schemas.js";

/*
 * The config document (docs/agent-configs.md, "The config document") as a JSON Schema (2020-12), for editors:
 * completion of keys and values, and a description of each on hover. It describes the shape only; the
 * compiler (document.ts and the sections) stays the judge, with every rule this schema cannot say (a model
 * granted to the project, a machine that is live, permissions a tool allows). Built from the same tool
 * catalog and permission modes as the compiler, so a tool added there is offered here.
 */

type Schema = Record<string, unknown>;

const permission: Schema = {
  type: "object",
  description: "`{mode: …}`: what happens on each call.",
  properties: {
    mode: {
      enum: PERMISSION_MODES.map((mode) => mode.name),
      description: PERMISSION_MODES.map((mode) => `\`${mode.name}\`: ${mode.description}`).join(" "),
    },
  },
  required: ["mode"],
  additionalProperties: false,
};

const builtInEntry = (description: string): Schema => ({
  type: "object",
  description,
  properties: {
    permission,
    enabled: { type: "boolean", description: "`false` leaves the tool out of the agent. Default `true`." },
  },
  additionalProperties: false,
});

const customTool: Schema = {
  type: "object",
  description: "A custom tool: your system runs it and posts its result (`type: custom`).",
  properties: {
    type: { const: "custom", description: "`custom`: the model calls it, svc holds the call until you post its result." },
    description: { type: "string", description: "What the tool does and when to call it, written for the model." },
    input_schema: { type: "object", description: "A JSON Schema (2020-12) of the tool's input, with `type: object`." },
    permission,
  },
  required: ["type", "description", "input_schema"],
  additionalProperties: false,
};

const overlay = (what: string): Schema => ({ type: "object", description: what, additionalProperties: { type: ["string", "null"] } });

const machineSource: Schema = {
  type: "object",
  description: "A connected machine by `machine_name`, or a pool svc makes machines from by `machine_pool_name`.",
  properties: {
    machine_name: { type: "string", description: "The display name of a live machine granted to the project." },
    machine_pool_name: { type: "string", description: "The name of a pool granted to the project." },
    cwd: { type: "string", description: "The agent's working directory on the machine." },
    env_overlay: overlay("Variables over the machine's; `null` removes one."),
    secret_env_overlay: overlay("Variables whose values are secrets: `sec_…` ids of generic secrets the project owns or was granted."),
    machine_cpu: { type: "integer", minimum: 1, description: "Pool machines: CPUs, within the pool's and grant's limits." },
    machine_memory_mb: { type: "integer", minimum: 1, description: "Pool machines: memory in MB, within the pool's and grant's limits." },
    initial_num_machines: { type: "integer", minimum: 0, description: "Pool machines made at launch (default 1)." },
    max_machines: { type: "integer", minimum: 1, maximum: 16, description: "Machines the agent may hold from this pool at once (default 1)." },
    delete_after_idle_minutes: { type: "integer", minimum: 0, description: "`0` never, or at least 5." },
  },
  additionalProperties: false,
};

const mcpServer: Schema = {
  type: "object",
  description: "An MCP server reached over Streamable HTTP; its tools are `mcp__<key>__<tool>`.",
  properties: {
    url: { type: "string", description: "The server's Streamable HTTP endpoint (https or http)." },
    auth: {
      type: "object",
      description: "`{type: none}` (default), `{type: bearer, secret_id: sec_…}` or `{type: oauth, secret_id: sec_…}`.",
      properties: {
        type: { enum: ["none", "bearer", "oauth"], description: "How svc authenticates to the server." },
        secret_id: { type: "string", description: "A generic (bearer) or oauth_token_set (oauth) secret the project owns or was granted." },
      },
      required: ["type"],
      additionalProperties: false,
    },
    permission: { ...permission, description: "`{mode: …}` for every tool of the server. Default `always_ask`." },
    tools: {
      type: "object",
      description: "Per-tool overrides by the server's own tool name.",
      additionalProperties: { type: "object", properties: { permission }, additionalProperties: false },
    },
  },
  required: ["url"],
  additionalProperties: false,
};

export const AGENT_CONFIG_JSON_SCHEMA: Schema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  title: "svc agent config (version v1)",
  description: "An agent config: the instruction, the model and the tools an agent runs with. See docs/agent-configs.md.",
  type: "object",
  properties: {
    version: { const: "v1", description: "Always `v1`." },
    instruction: { type: "string", description: "The system instruction the model works under." },
    model: {
      type: "object",
      description: "Which model to run and, optionally, tighter limits.",
      properties: {
        provider_config: { type: "string", description: "The name of a model provider config of the organization." },
        name: { type: "string", description: "The name of a configured model under that provider config; the project needs a grant for it." },
        context_window_tokens: { type: "integer", minimum: 2, description: "A smaller context window, up to the model's window in this project." },
        default_max_output_tokens: { type: "integer", minimum: 1, description: "The output cap sent with each request." },
        cache_retention: { enum: [...CACHE_RETENTIONS], description: "Prompt-cache hint. Default: the model's `default_cache_retention`." },
        reasoning: {
          type: "object",
          description: "`{effort: …}` for models that reason in this project.",
          properties: { effort: { type: "string", description: "One of the model's `supported_reasoning_efforts`." } },
          additionalProperties: false,
        },
      },
      required: ["provider_config", "name"],
      additionalProperties: false,
    },
    tools: {
      type: "object",
      description: "The tools the model may call, by name: built-in tools, custom tools (`type: custom`) and integration tools (`int__…`).",
      properties: Object.fromEntries(BUILT_IN_TOOLS.map((tool) => [tool.name, builtInEntry(tool.description)])),
      additionalProperties: { anyOf: [customTool, builtInEntry("An integration tool (`int__<integration>__<operation>`).")] },
    },
    mcp: { type: "object", description: "MCP servers whose tools the agent may call, by key.", additionalProperties: mcpServer },
    machine_sources: { type: "array", description: "Machines the agent holds: connected machines by name, or pools.", items: machineSource },
    machine_tools: {
      type: "object",
      description: "One permission floor for every tool that touches a machine.",
      properties: { permission },
      required: ["permission"],
      additionalProperties: false,
    },
    skills: { type: "array", description: "Skill ids (`skl_…`) the agent may load.", items: { type: "string" } },
    interaction_handlers: {
      type: "object",
      description: "Integrations that may show the agent's questions and approvals, by integration name, with the handler's arguments.",
      additionalProperties: { type: "object" },
    },
  },
  required: ["version", "instruction", "model"],
  additionalProperties: false,
};
