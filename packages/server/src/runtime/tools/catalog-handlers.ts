import type { BuiltInTool } from "./catalog.js";
import type { PermissionMode } from "../definition.js";

/*
 * The interaction handler tools (reference docs: integrations/overview, "Route questions and approvals"): the
 * model lists the handlers its config names and chooses where its questions and approvals go. Both default
 * to always_allow; a config restricts or disables `set_interaction_handler` with an explicit permission.
 */

const ALL_MODES: readonly PermissionMode[] = ["always_allow", "always_ask", "always_deny"];
export const MAX_HANDLER_PAGE = 50;

const listInteractionHandlers: BuiltInTool = {
  name: "list_interaction_handlers",
  description:
    "List the interaction handlers you may route your questions and approvals to, with each one's argument schema and " +
    "destination, plus the current selection and whether it is chosen automatically. Paged: pass back next_cursor.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    properties: {
      limit: { type: "integer", minimum: 1, maximum: MAX_HANDLER_PAGE, description: `At most this many handlers (1 to ${MAX_HANDLER_PAGE}; default 20).` },
      cursor: { type: "string", maxLength: 64, description: "The next_cursor of the previous page." },
    },
  },
  defaultPermission: "always_allow",
  permissionModes: ALL_MODES,
  touchesMachine: false,
};

const setInteractionHandler: BuiltInTool = {
  name: "set_interaction_handler",
  description:
    "Choose where your next questions and approvals are shown: a handler's name from list_interaction_handlers, or null " +
    "for the dashboard only. auto_select: false pins the choice, true lets the next message you receive choose again; " +
    "omitted keeps the current mode. Questions already asked stay where they are.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["handler", "args"],
    properties: {
      handler: { type: ["string", "null"], maxLength: 64, description: "The handler's name, or null for the dashboard only." },
      args: { type: "object", description: "The handler's arguments, matching its args_schema ({} for Slack and Discord)." },
      auto_select: { type: "boolean", description: "false pins this choice; true resumes automatic selection." },
    },
  },
  defaultPermission: "always_allow",
  permissionModes: ALL_MODES,
  touchesMachine: false,
};

export const HANDLER_TOOLS: readonly BuiltInTool[] = [listInteractionHandlers, setInteractionHandler];
export const HANDLER_TOOL_NAMES: ReadonlySet<string> = new Set(HANDLER_TOOLS.map((tool) => tool.name));
