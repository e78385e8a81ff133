import type { BuiltInTool } from "./catalog.js";
import type { PermissionMode } from "../definition.js";

/*
 * The process tools' catalog entries (reference docs/tools/built-in.mdx, "Processes"; reference design-brief.md §4):
 * follow, feed and stop what run_command left running. All default to always_allow and offer every mode.
 * svc adds `stderr_cursor` to read_process, since svc keeps stdout and stderr apart.
 */

const ALL_MODES: readonly PermissionMode[] = ["always_allow", "always_ask", "always_deny"];
const PROCESS_ID = { type: "string", pattern: "^prc_[a-z2-7]{26}$", description: "The process (prc_…) run_command returned." } as const;

export const READ_PROCESS_MAX_BYTES = 65_536;
export const WRITE_PROCESS_MAX_BYTES = 128 * 1024;

const readProcess: BuiltInTool = {
  name: "read_process",
  description:
    "Read a process's output from a byte cursor; with wait_ms, wait briefly for new output or its end. Pass back the " +
    "cursor (and stderr_cursor) the last read or run_command returned to get only what came after. The last 1 MiB of " +
    "each stream is kept; truncated: true says older output was dropped.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["process_id"],
    properties: {
      process_id: PROCESS_ID,
      cursor: { type: "integer", minimum: 0, description: "Where to start reading stdout (a byte offset; default 0)." },
      stderr_cursor: { type: "integer", minimum: 0, description: "Where to start reading stderr (a byte offset; default 0)." },
      max_bytes: { type: "integer", minimum: 1, maximum: READ_PROCESS_MAX_BYTES, description: "At most this many bytes of each stream (1 to 65536; default 8192)." },
      wait_ms: { type: "integer", minimum: 1, maximum: 10_000, description: "Wait up to this long for output after the cursor or the process's end (1 to 10000)." },
    },
  },
  defaultPermission: "always_allow",
  permissionModes: ALL_MODES,
  touchesMachine: true,
};

const writeProcess: BuiltInTool = {
  name: "write_process",
  description:
    "Send input to a running process's standard input, or close it (close_stdin, pipe mode only). Include a newline " +
    "when the process reads lines. In pty mode the input is typed into its terminal.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["process_id"],
    properties: {
      process_id: PROCESS_ID,
      data: { type: "string", maxLength: WRITE_PROCESS_MAX_BYTES, description: "The text to write, at most 128 KiB." },
      close_stdin: { type: "boolean", description: "Close standard input after writing (pipe mode only), so the process reads end of input." },
    },
  },
  defaultPermission: "always_allow",
  permissionModes: ALL_MODES,
  touchesMachine: true,
};

const stopProcess: BuiltInTool = {
  name: "stop_process",
  description:
    "Stop a running process: interrupt (like Ctrl-C: SIGINT) or terminate (SIGTERM, then SIGKILL after 5 s). Stopping a " +
    "process that has already ended does nothing and succeeds.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["process_id", "mode"],
    properties: {
      process_id: PROCESS_ID,
      mode: { type: "string", enum: ["interrupt", "terminate"], description: "interrupt (SIGINT-style) or terminate." },
    },
  },
  defaultPermission: "always_allow",
  permissionModes: ALL_MODES,
  touchesMachine: true,
};

const listProcesses: BuiltInTool = {
  name: "list_processes",
  description: "List your processes that have not ended yet, with their state, command and working directory.",
  inputSchema: { type: "object", additionalProperties: false, properties: {} },
  defaultPermission: "always_allow",
  permissionModes: ALL_MODES,
  touchesMachine: true,
};

/** Sorted by name. */
export const PROCESS_TOOLS: readonly BuiltInTool[] = [listProcesses, readProcess, stopProcess, writeProcess];
export const PROCESS_TOOL_NAMES: ReadonlySet<string> = new Set(PROCESS_TOOLS.map((tool) => tool.name));
