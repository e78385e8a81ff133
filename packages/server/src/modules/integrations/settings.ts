import { AppError, type Issue } from "../../platform/errors.js";
import type { Tx } from "../../platform/db/index.js";
import { decodeId } from "../../platform/ids.js";
import type { KindCatalog } from "./capability-schemas.js";
import type { IntegrationKind } from "./kind.js";
import { findProfile } from "../agent-profiles/service.js";

/**
 * Checks a settings document as the catalog publishes it (capabilities.settings.input_schema) and that
 * every agent profile it names is one of the project's. Problems are 400 validation_failed with issues
 * under `/settings`, the member of the request body that carries the document.
 */
export async function checkSettings(tx: Tx, catalog: KindCatalog, orgId: string, projectId: string, kind: IntegrationKind, settings: Record<string, unknown>): Promise<void> {
  const schemaIssues = catalog.capabilityIssues(kind.name, "settings", settings, "/settings");
  if (schemaIssues.length > 0) throw invalid(schemaIssues);
  const issues: Issue[] = (kind.settingsIssues?.(settings) ?? []).map((issue) => ({ ...issue, path: `/settings${issue.path}` }));
  for (const { pointer, profileId } of kind.profileReferences(settings)) {
    const id = decodeId("agentProfile", profileId);
    if (!id || !(await findProfile(tx, orgId, projectId, id))) issues.push({ path: `/settings${pointer}`, message: "is not an agent profile of this project" });
  }
  if (issues.length > 0) throw invalid(issues);
}

export function invalid(issues: Issue[], message = "the request failed validation"): AppError {
  return new AppError("validation_failed", message, { issues });
}
