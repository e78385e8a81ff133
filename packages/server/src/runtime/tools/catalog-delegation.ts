import type { BuiltInTool } from "./catalog.js";

/**
 * The coordinator's tools (docs/delegation.md): an agent whose config declares `delegates` gets them by
 * default. Each delegate is an ordinary svc agent launched from an agent profile's current config; these
 * calls wait in the database (`delegate_waits`), never in a worker slot. Claude Managed Agents' multiagent
 * sessions give a coordinator the same three moves: start a sub-agent, message it again, collect results.
 */

/** At most this many children per coordinator, and this deep a tree (a top-level agent is depth 0). */
export const MAX_CHILDREN = 32;
export const MAX_DEPTH = 4;
/** await_delegates waits at most this long (default DEFAULT_AWAIT_SECONDS); then it answers each child's state. */
export const MAX_AWAIT_SECONDS = 3600;
export const DEFAULT_AWAIT_SECONDS = 600;
const MAX_MESSAGE = 100_000;

const ALL_MODES = ["always_allow", "always_ask", "always_deny"] as const;

const message = { type: "string", minLength: 1, maxLength: MAX_MESSAGE, description: "What the delegate should do: its input, as a person would write it." };
const wait = {
  type: "boolean",
  description: "true (the default) waits for the delegate's turn to end and answers its final output; false answers {agent_id} at once (collect it later with await_delegates).",
};
const agentId = { type: "string", pattern: "^agt_[a-z2-7]{26}$", description: "A delegate's agent id (agt_…), as delegate answered it." };

const delegate: BuiltInTool = {
  name: "delegate",
  description:
    "Hand a task to one of your delegates: svc launches a new agent from that delegate's profile with your message as its first input. " +
    "With wait (the default) the result is the delegate's final answer; with wait: false it is {agent_id} at once, so you can start " +
    "several delegates in parallel and collect them with await_delegates. Follow up with message_delegate.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["to", "message"],
    properties: {
      to: { type: "string", minLength: 1, maxLength: 32, description: "The delegate's handle, as listed in this tool's description." },
      message,
      wait,
    },
  },
  defaultPermission: "always_allow",
  permissionModes: ALL_MODES,
  touchesMachine: false,
};

const messageDelegate: BuiltInTool = {
  name: "message_delegate",
  description:
    "Send a follow-up message to one of your own delegates (it keeps its conversation). With wait (the default) the result is its final " +
    "answer to this message; with wait: false it is {agent_id} at once.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["agent_id", "message"],
    properties: { agent_id: agentId, message, wait },
  },
  defaultPermission: "always_allow",
  permissionModes: ALL_MODES,
  touchesMachine: false,
};

const awaitDelegates: BuiltInTool = {
  name: "await_delegates",
  description:
    "Wait until each of the given delegates has finished its current turn and answer, per delegate, its final output or its state " +
    "(failed, canceled, archived, paused by a budget, or still working or waiting for a person when timeout_seconds ran out; " +
    `default ${DEFAULT_AWAIT_SECONDS}, at most ${MAX_AWAIT_SECONDS}).`,
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["agent_ids"],
    properties: {
      agent_ids: { type: "array", minItems: 1, maxItems: MAX_CHILDREN, uniqueItems: true, items: agentId, description: "The delegates to wait for." },
      timeout_seconds: { type: "integer", minimum: 1, maximum: MAX_AWAIT_SECONDS, description: `How long to wait at most (default ${DEFAULT_AWAIT_SECONDS}).` },
    },
  },
  defaultPermission: "always_allow",
  permissionModes: ALL_MODES,
  touchesMachine: false,
};

export const DELEGATION_TOOLS: readonly BuiltInTool[] = [awaitDelegates, delegate, messageDelegate];
export const DELEGATION_TOOL_NAMES: ReadonlySet<string> = new Set(DELEGATION_TOOLS.map((tool) => tool.name));
