import type { BuiltInTool } from "./catalog.js";

/*
 * The machine tools (reference tools/built-in.mdx, "Machines"): the agent looks at the machines it holds
 * and makes or deletes pool machines within its config's limits. They run in the claim's transaction
 * (machine-tools.ts); create_machine then waits, without a transaction, for its machine to come online.
 */

const ALL_MODES = ["always_allow", "always_ask", "always_deny"] as const;
const MACHINE_ID = { type: "string", pattern: "^mch_[a-z2-7]{26}$" } as const;

export const listMachines: BuiltInTool = {
  name: "list_machines",
  description:
    "List the machines attached to you (connected machines and machines made from pools), with each one's machine_id, " +
    "machine_ref, source_kind, binding_kind and whether it can run commands now. Pass next_cursor back as cursor for more.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    properties: {
      cursor: { type: "string", minLength: 1, maxLength: 64, description: "next_cursor from an earlier call, to continue the list." },
      limit: { type: "integer", minimum: 1, maximum: 50, description: "Machines per page, 1 to 50 (default 20)." },
    },
  },
  defaultPermission: "always_allow",
  permissionModes: ALL_MODES,
  touchesMachine: true,
};

export const inspectMachine: BuiltInTool = {
  name: "inspect_machine",
  description:
    "Show whether one of your machines is ready to run commands (executable) and, if not, why. Pass machine_id (mch_…) " +
    "when you have more than one machine.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    properties: { machine_id: { ...MACHINE_ID, description: "The machine (mch_…); omit it when exactly one is attached." } },
  },
  defaultPermission: "always_allow",
  permissionModes: ALL_MODES,
  touchesMachine: true,
};

export const createMachine: BuiltInTool = {
  name: "create_machine",
  description:
    "Make a new machine from a machine pool of your config and attach it to you; the call returns once it is ready to " +
    "run commands, or failed. Pass machine_pool_name only when your config has more than one pool.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    properties: { machine_pool_name: { type: "string", minLength: 1, maxLength: 200, description: "The pool's name, as in your config's machine_sources." } },
  },
  defaultPermission: "always_allow",
  permissionModes: ALL_MODES,
  touchesMachine: true,
};

export const deleteMachine: BuiltInTool = {
  name: "delete_machine",
  description:
    "Delete a machine you made from a pool (binding_kind pool): it is detached from you and deleted with its files. " +
    "Connected machines cannot be deleted this way.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["machine_id"],
    properties: { machine_id: { ...MACHINE_ID, description: "The pool machine to delete (mch_…)." } },
  },
  defaultPermission: "always_allow",
  permissionModes: ALL_MODES,
  touchesMachine: true,
};

export const MACHINE_TOOLS: readonly BuiltInTool[] = [createMachine, deleteMachine, inspectMachine, listMachines];
