import { Ajv, type ValidateFunction } from "ajv";
import type { Issue } from "../../platform/errors.js";
import { toIssues } from "../../platform/http/validation.js";
import { KIND_CATALOGS } from "./kinds/index.js";

/**
 * The schemas a kind's catalog publishes for the documents tenants and agents write (spec: Integration,
 * "Capabilities object"): settings, a subscription's conversation, an interaction handler's and a
 * schedule's arguments. Static per kind, so each is compiled once, here, for every caller.
 */
export type CapabilitySchema = "settings" | "conversation" | "interaction_handler" | "schedule";

const ajv = new Ajv({ allErrors: true, strict: false });
const compiled = new Map<string, ValidateFunction | null>();

/** A kind without a settings capability accepts only `{}` (spec: settings default to an empty object). */
const NO_SETTINGS = { type: "object", additionalProperties: false };

function schemaOf(kind: string, capability: CapabilitySchema): Record<string, unknown> | undefined {
  const capabilities = KIND_CATALOGS[kind]?.capabilities;
  if (!capabilities) return undefined;
  if (capability === "settings") return capabilities.settings?.input_schema ?? NO_SETTINGS;
  if (capability === "conversation") return capabilities.subscription?.conversation_schema;
  return capabilities[capability]?.input_schema;
}

function validatorOf(kind: string, capability: CapabilitySchema): ValidateFunction | null {
  const key = `${kind}\u0000${capability}`;
  let validate = compiled.get(key);
  if (validate === undefined) {
    const schema = schemaOf(kind, capability);
    validate = schema ? ajv.compile(schema) : null;
    compiled.set(key, validate);
  }
  return validate;
}

/** Whether the kind publishes this capability at all (settings always: an empty object). */
export function hasCapability(kind: string, capability: CapabilitySchema): boolean {
  return validatorOf(kind, capability) !== null;
}

/**
 * Problems with `value` under the kind's published schema, each path prefixed with `pointer` (where the
 * document sits in the request); empty when it matches. A kind without the capability is the caller's
 * to refuse first (hasCapability).
 */
export function capabilityIssues(kind: string, capability: CapabilitySchema, value: unknown, pointer: string): Issue[] {
  const validate = validatorOf(kind, capability);
  if (!validate) return [{ path: pointer, message: `${kind} has no ${capability} capability` }];
  if (validate(value)) return [];
  return toIssues(validate.errors ?? []).map((issue) => ({ ...issue, path: `${pointer}${issue.path}` }));
}

/** Issues as one line for a model or a config issue: `/path: message; …`, `whole` naming the document itself. */
export function describeIssues(issues: readonly Issue[], whole: string): string {
  return issues.map((issue) => `${issue.path || whole}: ${issue.message}`).join("; ");
}
