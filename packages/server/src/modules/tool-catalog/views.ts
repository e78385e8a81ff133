import { BUILT_IN_TOOLS, CUSTOM_TOOL_PERMISSIONS, MCP_TOOL_PERMISSIONS, PERMISSION_MODES, type PermissionProfile } from "../../runtime/tools/catalog.js";

/** No permission mode takes parameters yet: each one's schema admits only an empty object. */
const NO_PARAMETERS = { type: "object", properties: {}, additionalProperties: false };

/** The whole catalog as the API shows it; it changes only with the code, so it is built once. */
export const toolCatalogView = {
  built_in_tools: BUILT_IN_TOOLS.map((tool) => ({ name: tool.name, description: tool.description, ...permissionProfileView(tool) })),
  custom_tool_permissions: permissionProfileView(CUSTOM_TOOL_PERMISSIONS),
  mcp_tool_permissions: permissionProfileView(MCP_TOOL_PERMISSIONS),
};

function permissionProfileView(profile: PermissionProfile) {
  return {
    default_permission: { mode: profile.defaultPermission, parameters: {} },
    permission_modes: PERMISSION_MODES.filter((mode) => profile.permissionModes.includes(mode.name)).map((mode) => ({
      name: mode.name,
      label: mode.label,
      description: mode.description,
      parameters_schema: NO_PARAMETERS,
    })),
  };
}
