import type { PermissionProfile } from "./catalog.js";

/*
 * Integration tools (reference docs: integrations/overview): `int__<integration name>__<operation>`, an
 * operation of an integration's kind (its catalog's `capabilities.tools`). Integration names are a letter,
 * then letters, digits or hyphens (at most 32); operations are lower-case words joined by single underscores.
 */

const NAME = /^int__([A-Za-z][A-Za-z0-9-]{0,31})__([a-z][a-z0-9]*(?:_[a-z0-9]+)*)$/;
/** Provider tools' names go to model providers, which take at most 64 characters. */
const MAX_NAME_LENGTH = 64;
export const INTEGRATION_TOOL_PREFIX = "int__";

/** Like other built-in tools, integration tools run without asking unless the config says otherwise. */
export const INTEGRATION_TOOL_PERMISSIONS: PermissionProfile = { defaultPermission: "always_allow", permissionModes: ["always_allow", "always_ask", "always_deny"] };

export function integrationToolName(integration: string, operation: string): string {
  return `${INTEGRATION_TOOL_PREFIX}${integration}__${operation}`;
}

/** The integration name and operation a tool name holds, or undefined when it is not a well-formed integration tool name. */
export function parseIntegrationToolName(name: string): { integration: string; operation: string } | undefined {
  if (name.length > MAX_NAME_LENGTH) return undefined;
  const match = NAME.exec(name);
  return match ? { integration: match[1]!, operation: match[2]! } : undefined;
}

export function isIntegrationToolName(name: string): boolean {
  return name.startsWith(INTEGRATION_TOOL_PREFIX);
}
