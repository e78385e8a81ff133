import type { PermissionMode } from "../definition.js";
import { FILE_TOOL_NAMES, FILE_TOOLS } from "./catalog-files.js";
import { isIntegrationToolName } from "./catalog-integrations.js";
import { MACHINE_TOOLS } from "./catalog-machines.js";
import { PROCESS_TOOLS } from "./catalog-processes.js";
import { TRANSFER_TOOLS } from "./catalog-transfer.js";
import { HANDLER_TOOLS } from "./catalog-handlers.js";
import { DELEGATION_TOOLS } from "./catalog-delegation.js";

/**
 * The built-in tools svc can run, and the permission modes every tool kind offers. Agent configs may only
 * name tools listed here: a tool svc cannot execute is refused when the config is compiled, never at run
 * time. The catalog route (`GET /tool-catalog`) publishes this list; the config compiler copies each
 * tool's description and input schema into the compiled definition.
 */

export interface PermissionModeInfo {
  name: PermissionMode;
  label: string;
  description: string;
}

/** The permission a kind of tool gets when a config says nothing, and the modes a config may choose. */
export interface PermissionProfile {
  defaultPermission: PermissionMode;
  permissionModes: readonly PermissionMode[];
}

export interface BuiltInTool extends PermissionProfile {
  name: string;
  /** Shown to the model as the tool's description. */
  description: string;
  /** A closed JSON Schema object: every object in it has `additionalProperties: false`. */
  inputSchema: Record<string, unknown>;
  /**
   * True when a call reaches an attached machine or changes the machines and processes the agent holds:
   * commands, processes, transfers, machine creation and deletion, the machine listings, and `skill`,
   * which installs its files on the machines. A config's `machine_tools.permission` covers exactly these
   * (modules/agent-configs/machine-tools-section.ts). Required, so a new tool cannot leave it unsaid.
   */
  touchesMachine: boolean;
}

export const PERMISSION_MODES: readonly PermissionModeInfo[] = [
  { name: "always_allow", label: "Always allow", description: "Every call runs at once, without asking anyone." },
  {
    name: "always_ask",
    label: "Always ask",
    description: "Every call waits for a person to allow or deny it through a permission interaction.",
  },
  { name: "always_deny", label: "Always deny", description: "Every call is refused; the model is told it was denied." },
];

const ALL_MODES: readonly PermissionMode[] = PERMISSION_MODES.map((mode) => mode.name);

/** The stricter of two modes: PERMISSION_MODES runs from the least strict (allow) to the most (deny). */
export function stricterPermission(a: PermissionMode, b: PermissionMode): PermissionMode {
  return ALL_MODES.indexOf(a) >= ALL_MODES.indexOf(b) ? a : b;
}

/** Custom tools run in the caller's own system, which asks nobody by default: it chose to declare them. */
export const CUSTOM_TOOL_PERMISSIONS: PermissionProfile = { defaultPermission: "always_allow", permissionModes: ALL_MODES };
/** MCP servers are third parties, so their tools ask first unless a config says otherwise. */
export const MCP_TOOL_PERMISSIONS: PermissionProfile = { defaultPermission: "always_ask", permissionModes: ALL_MODES };

// Limits keep a question small enough to show in a chat message or a console card.
const MAX_QUESTIONS = 10;
const MAX_OPTIONS = 20;

const askQuestion: BuiltInTool = {
  name: "ask_question",
  description:
    "Ask the person you are working for one or more multiple-choice questions and wait for their answers. Use it when " +
    "you need a decision or a fact only they can give; do not use it for things you can find out yourself.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["questions"],
    properties: {
      questions: {
        type: "array",
        minItems: 1,
        maxItems: MAX_QUESTIONS,
        description: `The questions to ask together, 1 to ${MAX_QUESTIONS}.`,
        items: {
          type: "object",
          additionalProperties: false,
          required: ["prompt", "options"],
          properties: {
            prompt: { type: "string", minLength: 1, maxLength: 4000, description: "The question, as the person will read it." },
            multiple: { type: "boolean", description: "true lets the person pick several options; false (the default) exactly one." },
            options: {
              type: "array",
              minItems: 1,
              maxItems: MAX_OPTIONS,
              description: `The choices offered, 1 to ${MAX_OPTIONS}.`,
              items: {
                type: "object",
                additionalProperties: false,
                required: ["label"],
                properties: { label: { type: "string", minLength: 1, maxLength: 200, description: "The text of the choice." } },
              },
            },
          },
        },
      },
    },
  },
  defaultPermission: "always_allow",
  permissionModes: ALL_MODES,
  touchesMachine: false,
};

/**
 * Loads an attached skill's instructions. A config that attaches skills gets it by default; its result is
 * the SKILL.md of the revision the config pinned, with the skill's file list.
 */
const skill: BuiltInTool = {
  name: "skill",
  description:
    "Load the full instructions of one of the skills attached to you, listed with their descriptions in your " +
    "instructions. Call it when a task matches a skill's description, before doing the task.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["name"],
    properties: { name: { type: "string", minLength: 1, maxLength: 64, description: "The skill's name, as listed in your instructions." } },
  },
  defaultPermission: "always_allow",
  permissionModes: ALL_MODES,
  // With machines attached, the call installs the skill's files on each of them.
  touchesMachine: true,
};

/**
 * Runs a shell command on one of the agent's attached machines (its config's `machine_sources`). The call
 * returns when the process ends or when `wait_ms` (default 10 s) has passed, whichever comes first; a
 * process still running then is followed with the process tools (catalog-processes.ts).
 */
const runCommand: BuiltInTool = {
  name: "run_command",
  description:
    "Run a shell command on a machine attached to you. It returns when the command ends (with its output and exit code) " +
    "or after wait_ms (default 10000), whichever comes first; a command still running then returns state \"running\", " +
    "its output so far and cursors: follow it with read_process, feed it with write_process, end it with stop_process. " +
    "Pass machine_id (mch_…) when several machines are attached. io_mode pty gives the command a terminal (stdout and " +
    "stderr merged). Output beyond 128 KiB per stream is cut from the result; write large output to a file.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["command"],
    properties: {
      command: { type: "string", minLength: 1, maxLength: 65536, description: "The command line, run by the shell." },
      machine_id: { type: "string", pattern: "^mch_[a-z2-7]{26}$", description: "The machine to run on (mch_…); omit it when exactly one is attached." },
      shell: { type: "string", enum: ["default", "sh", "bash", "zsh", "pwsh", "powershell", "cmd"], description: "The shell; default is the machine user's shell." },
      cwd: { type: "string", minLength: 1, maxLength: 4096, description: "The working directory; defaults to the machine's." },
      wait_ms: { type: "integer", minimum: 1, maximum: 10000, description: "How long to wait for the command to end before returning with its output so far (1 to 10000; default 10000)." },
      io_mode: { type: "string", enum: ["pipe", "pty"], description: "pipe (the default) or pty (a terminal; stdout and stderr merged)." },
    },
  },
  defaultPermission: "always_allow",
  permissionModes: ALL_MODES,
  touchesMachine: true,
};

/** Built-in tools whose calls the worker runs outside the claim's transaction, in a tool step (they read or store bytes). */
export const STEP_TOOLS: ReadonlySet<string> = new Set(["skill", ...FILE_TOOL_NAMES]);

/** Whether a built-in call runs in a tool step: STEP_TOOLS, and integration tools (they call a provider). */
export function runsInToolStep(name: string): boolean {
  return STEP_TOOLS.has(name) || isIntegrationToolName(name);
}

/** Sorted by name. */
export const BUILT_IN_TOOLS: readonly BuiltInTool[] = [askQuestion, ...MACHINE_TOOLS, runCommand, skill, ...FILE_TOOLS, ...TRANSFER_TOOLS, ...PROCESS_TOOLS, ...HANDLER_TOOLS, ...DELEGATION_TOOLS].sort((a, b) => (a.name < b.name ? -1 : 1));

/** The tools a config's `machine_tools.permission` covers, by name. */
export const MACHINE_TOUCHING_TOOLS: ReadonlySet<string> = new Set(BUILT_IN_TOOLS.filter((tool) => tool.touchesMachine).map((tool) => tool.name));

const BY_NAME = new Map(BUILT_IN_TOOLS.map((tool) => [tool.name, tool]));

export function builtInTool(name: string): BuiltInTool | undefined {
  return BY_NAME.get(name);
}
