import { and, eq } from "drizzle-orm";
import { integrations } from "../../db/schema/index.js";
import type { Tx } from "../../platform/db/index.js";
import type { KindCatalog } from "../integrations/capability-schemas.js";
import type { IntegrationToolRef, PermissionMode, ToolDefinition } from "../../runtime/definition.js";
import { INTEGRATION_TOOL_PERMISSIONS, parseIntegrationToolName } from "../../runtime/tools/catalog-integrations.js";
import { describe, has, isObject, readPermission, unknownKeys, type Obj } from "./fields.js";
import type { ConfigIssues } from "./issues.js";

/**
 * Tool entries named `int__<integration name>__<operation>` (reference docs: integrations/overview, "Select
 * capabilities independently"): an operation an integration of the project offers, with the entry keys of a
 * built-in tool. The name is resolved to the integration's immutable id when the config is compiled, so
 * deleting the integration and reusing its name never redirects an old config (reference: "Names are resolved
 * to immutable integration IDs").
 */

export interface IntegrationToolChoice {
  type: "integration";
  name: string;
  integrationName: string;
  operation: string;
  enabled: boolean;
  permission: PermissionMode;
}

const KEYS = ["permission", "enabled"];

/** Reads an `int__…` entry as written; whether the integration and its operation exist is checked later, against the project. */
export function readIntegrationTool(issues: ConfigIssues, name: string, value: unknown): IntegrationToolChoice | undefined {
  const path = ["tools", name];
  const parsed = parseIntegrationToolName(name);
  if (!parsed) {
    issues.addAtKey(path, "integration tools are named int__<integration name>__<operation>, such as int__eng__read");
    return undefined;
  }
  if (!isObject(value)) {
    issues.add(path, `must be an object: {} for the operation with its defaults, or {enabled, permission}; got ${describe(value)}`);
    return undefined;
  }
  const before = issues.count;
  unknownKeys(issues, path, value, KEYS);
  const enabled = readEnabled(issues, path, value);
  const permission = readPermission(issues, path, value, INTEGRATION_TOOL_PERMISSIONS);
  if (issues.count !== before) return undefined;
  return { type: "integration", name, integrationName: parsed.integration, operation: parsed.operation, enabled, permission };
}

function readEnabled(issues: ConfigIssues, path: readonly string[], value: Obj): boolean {
  if (!has(value, "enabled")) return true;
  if (typeof value["enabled"] === "boolean") return value["enabled"];
  issues.add([...path, "enabled"], `must be true or false; got ${describe(value["enabled"])}`);
  return true;
}

/**
 * The compiled definitions of the enabled integration tools: each entry's integration must exist in the project
 * and its kind must offer the operation, else an issue at the entry's key. The input schema and description
 * are the kind's catalog entry (spec: Integration, "Capabilities object").
 */
export async function resolveIntegrationTools(tx: Tx, catalog: KindCatalog, projectId: string, choices: readonly IntegrationToolChoice[], issues: ConfigIssues): Promise<ToolDefinition[]> {
  const tools: ToolDefinition[] = [];
  for (const choice of choices) {
    const path = ["tools", choice.name];
    const [row] = await tx
      .select({ id: integrations.id, kind: integrations.kind })
      .from(integrations)
      .where(and(eq(integrations.projectId, projectId), eq(integrations.name, choice.integrationName)));
    if (!row) {
      issues.addAtKey(path, `unknown integration "${choice.integrationName}": the project has no integration of this name`);
      continue;
    }
    const capability = catalog.catalog(row.kind)?.capabilities.tools[choice.operation];
    if (!capability) {
      const offered = Object.keys(catalog.catalog(row.kind)?.capabilities.tools ?? {});
      issues.addAtKey(path, `integration "${choice.integrationName}" (${row.kind}) has no operation "${choice.operation}"; it offers: ${offered.join(", ") || "none"}`);
      continue;
    }
    if (!choice.enabled) continue;
    const integration: IntegrationToolRef = { integrationId: row.id, kind: row.kind, operation: choice.operation };
    tools.push({ name: choice.name, type: "built_in", description: capability.description ?? `${choice.operation} through ${choice.integrationName}`, inputSchema: capability.input_schema, permission: choice.permission, integration });
  }
  return tools;
}
