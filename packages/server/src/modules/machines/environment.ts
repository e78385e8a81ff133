import type { Tx } from "../../platform/db/index.js";
import { AppError, type Issue } from "../../platform/errors.js";
import { decodeId, encodeId } from "../../platform/ids.js";
import type { SecretFacts } from "../secrets/org-credentials.js";

/**
 * Execution environments of machines, pools and pool grants: plain variables and secret references.
 * A secret reference is checked when it is written (it must name a usable generic secret) and resolved
 * only when a process starts, so no secret value is ever stored with a machine or a pool.
 */

/** What this module may ask the secrets module: facts about a secret, never its value. */
export interface SecretDirectory {
  describe(tx: Tx, orgId: string, secretId: string): Promise<SecretFacts | undefined>;
  describeForProject(tx: Tx, orgId: string, projectId: string, secretId: string): Promise<SecretFacts | undefined>;
}

/** Names svc sets itself in every process it starts. */
const RESERVED_PREFIX = "SVC_";
const MAX_ENTRIES = 4096;

/** One environment as submitted: where it sits in the body, its variables and its secret references. */
export interface EnvInput {
  envPath: string;
  env?: Record<string, string | null>;
  secretPath: string;
  secretEnv?: Record<string, string | null>;
}

/**
 * Name rules, in the body's terms: no reserved names, and no name given twice in different casing or
 * both as a variable and as a secret (processes on Windows see one variable for both).
 */
export function nameIssues(input: EnvInput): Issue[] {
  const issues: Issue[] = [];
  const env = Object.keys(input.env ?? {});
  const secret = Object.keys(input.secretEnv ?? {});
  if (env.length + secret.length > MAX_ENTRIES) {
    issues.push({ path: input.envPath, message: `env and secret_env may hold at most ${MAX_ENTRIES} names together` });
  }
  const seen = new Map<string, string>();
  for (const [path, names] of [
    [input.envPath, env],
    [input.secretPath, secret],
  ] as const) {
    for (const name of names) {
      const at = `${path}/${pointerToken(name)}`;
      const upper = name.toUpperCase();
      if (upper.startsWith(RESERVED_PREFIX)) issues.push({ path: at, message: `names starting with ${RESERVED_PREFIX} are reserved for svc` });
      const earlier = seen.get(upper);
      if (earlier !== undefined) issues.push({ path: at, message: `is the same name as ${earlier}; each name may be set once` });
      else seen.set(upper, at);
    }
  }
  return issues;
}

/**
 * The secret references of `secretEnv` as UUIDs, each checked: a generic, tenant-managed secret of the
 * org (`scope.projectId` absent: org-owned; present: usable by that project, owned or granted).
 */
export async function checkSecretRefs(
  tx: Tx,
  directory: SecretDirectory,
  scope: { orgId: string; projectId?: string },
  path: string,
  secretEnv: Record<string, string | null> | undefined,
): Promise<{ refs: Record<string, string | null>; issues: Issue[] }> {
  const refs: Record<string, string | null> = {};
  const issues: Issue[] = [];
  for (const [name, publicId] of Object.entries(secretEnv ?? {})) {
    const at = `${path}/${pointerToken(name)}`;
    if (publicId === null) {
      refs[name] = null;
      continue;
    }
    const secretId = decodeId("secret", publicId);
    const facts = secretId
      ? scope.projectId === undefined
        ? await directory.describe(tx, scope.orgId, secretId)
        : await directory.describeForProject(tx, scope.orgId, scope.projectId, secretId)
      : undefined;
    const problem = !facts
      ? scope.projectId === undefined
        ? "no such secret in this organization"
        : "no such secret available to this project (owned by it or granted to it)"
      : scope.projectId === undefined && facts.ownerKind !== "org"
        ? "must be an org-owned secret; project and user secrets cannot serve machines of the whole organization"
        : facts.kind !== "generic"
          ? `must be a secret of kind generic, not ${facts.kind}`
          : facts.managementKind !== "tenant"
            ? "must be a tenant-managed secret"
            : null;
    if (problem) issues.push({ path: at, message: problem });
    else refs[name] = secretId!;
  }
  return { refs, issues };
}

/** One 400 for every problem found in a body. */
export function throwIssues(issues: Issue[]): void {
  if (issues.length > 0) throw new AppError("validation_failed", "request failed validation", { issues });
}

/** Stored secret UUIDs back to the public `sec_` ids; null entries (overlay removals) stay null. */
export function publicSecretRefs<T extends string | null>(refs: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(refs).map(([name, id]) => [name, id === null ? null : encodeId("secret", id)])) as Record<string, T>;
}

function pointerToken(name: string): string {
  return name.replaceAll("~", "~0").replaceAll("/", "~1");
}
