import type { PermissionMode } from "../../runtime/definition.js";
import { MACHINE_TOUCHING_TOOLS, PERMISSION_MODES, stricterPermission, type PermissionProfile } from "../../runtime/tools/catalog.js";
import { describe, has, isObject, readPermission, unknownKeys } from "./fields.js";
import type { ConfigIssues } from "./issues.js";
import type { ToolChoice } from "./document.js";

/**
 * The `machine_tools` section, svc's own (the reference has none, so its configs never hold it): one
 * permission for every tool that touches a machine (`touchesMachine` in the tool catalog), so "a person
 * approves each command" cannot be undone by a file transfer or a process tool the author forgot.
 *
 * It is a floor, not a default: a tool entry may make one of these tools stricter (`always_deny` under
 * `always_ask`), never looser. A looser entry is an issue rather than silently overruled, so a config
 * never says two things about one tool and the one line stays true for whoever reads it.
 */

const SECTION = "machine_tools";
const ANY_MODE: PermissionProfile = { defaultPermission: "always_allow", permissionModes: PERMISSION_MODES.map((mode) => mode.name) };

export function readMachineToolsSection(issues: ConfigIssues, value: unknown): PermissionMode | undefined {
  if (!isObject(value)) {
    issues.add([SECTION], `must be an object such as {permission: {mode: always_ask}}; got ${describe(value)}`);
    return undefined;
  }
  const before = issues.count;
  unknownKeys(issues, [SECTION], value, ["permission"]);
  if (!has(value, "permission")) {
    issues.add([SECTION, "permission"], "is required: {mode: …}, the permission of every tool that touches a machine");
    return undefined;
  }
  const mode = readPermission(issues, [SECTION], value, ANY_MODE);
  return issues.count === before ? mode : undefined;
}

/** An issue at each tool entry that sets a machine tool looser than the section's mode. */
export function checkMachineToolEntries(issues: ConfigIssues, tools: readonly ToolChoice[], floor: PermissionMode): void {
  for (const tool of tools) {
    if (tool.type !== "built_in" || !tool.permissionSet || !MACHINE_TOUCHING_TOOLS.has(tool.name)) continue;
    if (stricterPermission(tool.permission, floor) === tool.permission) continue;
    issues.add(
      ["tools", tool.name, "permission", "mode"],
      `${tool.permission} is looser than machine_tools.permission (${floor}), which covers ${tool.name}; a tool entry may only make a machine tool stricter`,
    );
  }
}

/** The mode a compiled tool gets: its own, raised to the section's floor for the tools that touch a machine. */
export function withMachineFloor(name: string, permission: PermissionMode, floor: PermissionMode | undefined): PermissionMode {
  return floor !== undefined && MACHINE_TOUCHING_TOOLS.has(name) ? stricterPermission(permission, floor) : permission;
}
