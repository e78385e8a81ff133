import { Ajv, type ValidateFunction } from "ajv";
import type { Issue } from "../../platform/errors.js";
import { toIssues } from "../../platform/http/validation.js";
import type { IntegrationKindCatalog, IntegrationKinds } from "./kind.js";

/**
 * The schemas a kind's catalog publishes for the documents tenants and agents write (spec: Integration,
 * "Capabilities object"): settings, a subscription's conversation, an interaction handler's and a
 * schedule's arguments. Static per kind, so each is compiled once per composed set of kinds.
 */
export type CapabilitySchema = "settings" | "conversation" | "interaction_handler" | "schedule";

/**
 * What the rest of the server (agent configs, agents, cron triggers, the agent loop) may know of the
 * kinds: their published catalogs, the checks those imply and what svc runs for each; never a provider
 * client. Built once from the composed kinds (createKindCatalog) and handed to whoever needs it.
 */
export interface KindCatalog {
  /** The catalog of an implemented kind; undefined for any other name. */
  catalog(kind: string): IntegrationKindCatalog | undefined;
  /** Whether the kind publishes this capability at all (settings always: an empty object). */
  hasCapability(kind: string, capability: CapabilitySchema): boolean;
  /**
   * Problems with `value` under the kind's published schema, each path prefixed with `pointer` (where the
   * document sits in the request); empty when it matches. A kind without the capability is the caller's
   * to refuse first (hasCapability).
   */
  capabilityIssues(kind: string, capability: CapabilitySchema, value: unknown, pointer: string): Issue[];
  /** svc runs the kind's tools (it has an executor): a launch adds only these kinds' tools, since a tool that can only fail would mislead the model. */
  runsTools(kind: string): boolean;
  postsInteractions(kind: string): boolean;
  runsSchedules(kind: string): boolean;
}

/** A kind without a settings capability accepts only `{}` (spec: settings default to an empty object). */
const NO_SETTINGS = { type: "object", additionalProperties: false };

export function createKindCatalog(kinds: IntegrationKinds): KindCatalog {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const compiled = new Map<string, ValidateFunction | null>();

  function schemaOf(kind: string, capability: CapabilitySchema): Record<string, unknown> | undefined {
    const capabilities = kinds.get(kind)?.capabilities;
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

  return {
    catalog: (kind) => kinds.get(kind),
    hasCapability: (kind, capability) => validatorOf(kind, capability) !== null,
    capabilityIssues(kind, capability, value, pointer) {
      const validate = validatorOf(kind, capability);
      if (!validate) return [{ path: pointer, message: `${kind} has no ${capability} capability` }];
      if (validate(value)) return [];
      return toIssues(validate.errors ?? []).map((issue) => ({ ...issue, path: `${pointer}${issue.path}` }));
    },
    runsTools: (kind) => kinds.get(kind)?.tools !== undefined,
    postsInteractions: (kind) => kinds.get(kind)?.postsInteractions === true,
    runsSchedules: (kind) => kinds.get(kind)?.runsSchedules === true,
  };
}

/** Issues as one line for a model or a config issue: `/path: message; …`, `whole` naming the document itself. */
export function describeIssues(issues: readonly Issue[], whole: string): string {
  return issues.map((issue) => `${issue.path || whole}: ${issue.message}`).join("; ");
}
