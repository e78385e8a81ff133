import { Type } from "typebox";
import { component } from "../../platform/http/components.js";

const strict = { additionalProperties: false } as const;
const OpenObject = Type.Unsafe<Record<string, unknown>>({ type: "object", additionalProperties: true });

const PermissionSelection = component("ToolPermissionSelection", Type.Object(
  { mode: Type.String(), parameters: OpenObject },
  { ...strict, description: "A permission mode with its parameters (no mode takes any yet)." },
));

const PermissionMode = component("ToolPermissionMode", Type.Object(
  { name: Type.String(), label: Type.String(), description: Type.String(), parameters_schema: OpenObject },
  strict,
));

const PermissionProfile = component("ToolPermissionProfile", Type.Object({ default_permission: PermissionSelection, permission_modes: Type.Array(PermissionMode) }, strict));

const ToolCatalogEntry = component("ToolCatalogEntry", Type.Object(
  {
    name: Type.String(),
    description: Type.String(),
    default_permission: PermissionSelection,
    permission_modes: Type.Array(PermissionMode),
  },
  strict,
));

export const ToolCatalog = component("ToolCatalog", Type.Object(
  {
    built_in_tools: Type.Array(ToolCatalogEntry, { description: "The built-in tools this deployment can run, by name." }),
    custom_tool_permissions: PermissionProfile,
    mcp_tool_permissions: PermissionProfile,
  },
  strict,
));
