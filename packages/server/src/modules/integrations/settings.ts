import { Ajv, type ValidateFunction } from "ajv";
import { AppError, type Issue } from "../../platform/errors.js";
import type { Tx } from "../../platform/db/index.js";
import { decodeId } from "../../platform/ids.js";
import { toIssues } from "../../platform/http/validation.js";
import type { IntegrationKind } from "../../integrations/kind.js";
import { findProfile } from "../agent-profiles/service.js";

const ajv = new Ajv({ allErrors: true, strict: false });
const validators = new Map<string, ValidateFunction>();

/** The kind's settings schema, compiled once; a kind without a settings capability accepts only {}. */
function settingsValidator(kind: IntegrationKind): ValidateFunction {
  let validate = validators.get(kind.name);
  if (!validate) {
    validate = ajv.compile(kind.capabilities.settings?.input_schema ?? { type: "object", additionalProperties: false });
    validators.set(kind.name, validate);
  }
  return validate;
}

/**
 * Checks a settings document as the catalog publishes it (capabilities.settings.input_schema) and that
 * every agent profile it names is one of the project's. Problems are 400 validation_failed with issues
 * under `/settings`, the member of the request body that carries the document.
 */
export async function checkSettings(tx: Tx, orgId: string, projectId: string, kind: IntegrationKind, settings: Record<string, unknown>): Promise<void> {
  const validate = settingsValidator(kind);
  if (!validate(settings)) throw invalid(toIssues(validate.errors ?? []).map((issue) => ({ ...issue, path: `/settings${issue.path}` })));
  const issues: Issue[] = [];
  for (const { pointer, profileId } of kind.profileReferences(settings)) {
    const id = decodeId("agentProfile", profileId);
    if (!id || !(await findProfile(tx, orgId, projectId, id))) issues.push({ path: `/settings${pointer}`, message: "is not an agent profile of this project" });
  }
  if (issues.length > 0) throw invalid(issues);
}

export function invalid(issues: Issue[], message = "the request failed validation"): AppError {
  return new AppError("validation_failed", message, { issues });
}
