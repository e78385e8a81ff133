import { and, eq, isNull } from "drizzle-orm";
import { machines } from "../../db/schema/index.js";
import type { Database, Tx } from "../../platform/db/index.js";
import { scheduleDeletion } from "./bindings.js";
import { isUniqueViolation } from "../../platform/db/index.js";
import { conflict, notFound, type Issue } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import type { PageRequest } from "../../platform/http/lists.js";
import { decodeId, newUuid } from "../../platform/ids.js";
import { requireOrg } from "../orgs/access.js";
import { checkSecretRefs, nameIssues, throwIssues, type SecretDirectory } from "./environment.js";
import { capacityIssues, capacityOf } from "./pools-rules.js";
import type { CreateMachinePoolRequest, UpdateMachinePoolRequest } from "./pools-schemas.js";
import * as store from "./pools-store.js";
import { PROVIDER_NAMES, providerRules } from "./providers/index.js";

export interface PoolServiceDeps {
  db: Database;
  secrets: SecretDirectory;
  /** The providers the operator enabled (`SVC_MACHINE_PROVIDERS`); a pool of another cannot be created. */
  enabledProviders: readonly string[];
}

/** svc records the platform a daemon reports under this metadata key, copied from pools onto machines. */
const RESERVED_METADATA_KEY = "observed_platform";

/** A pool's settings as they will be stored: the current row with a create's or an update's values applied. */
type PoolSettings = Omit<store.PoolRow, "id" | "orgId" | "managementKind" | "createdAt" | "updatedAt">;

/**
 * Machine pools: org-level capacity that a provider turns into machines on demand (pool-machines.ts makes
 * the rows, lifecycle.ts the machines). Every pool route needs org.manage. Limits are checked for consistency when written;
 * secret references in the default environment must be org-owned generic secrets.
 */
export function createPoolService(deps: PoolServiceDeps) {
  const { db, secrets, enabledProviders } = deps;

  /** Every rule a pool's settings must satisfy, on the whole of them, with issues at the body's paths. */
  async function checkSettings(tx: Tx, orgId: string, settings: PoolSettings, submittedSecretEnv: Record<string, string> | undefined) {
    const issues: Issue[] = [];
    const rules = providerRules(settings.provider);
    if (!rules) issues.push({ path: "/provider", message: `svc runs pool machines with these providers: ${PROVIDER_NAMES.join(", ")}` });
    issues.push(...(await authSecretIssues(tx, orgId, settings.providerAuthSecretId)));
    issues.push(
      ...(rules?.check(
        { providerConfig: settings.providerConfig, options: settings.defaultMachineProviderOptions, authSecret: settings.providerAuthSecretId ?? undefined },
        { providerConfig: "/provider_config", options: "/default_machine_provider_options", authSecret: "/provider_auth_secret_id" },
      ) ?? []),
    );
    issues.push(
      ...nameIssues({ envPath: "/default_machine_env", env: settings.defaultMachineEnv, secretPath: "/default_machine_secret_env", secretEnv: settings.defaultMachineSecretEnv }),
    );
    if (RESERVED_METADATA_KEY in settings.metadata) {
      issues.push({ path: `/metadata/${RESERVED_METADATA_KEY}`, message: "is reserved: svc sets it to the platform the daemon reports" });
    }
    issues.push(...capacityIssues(capacityOf(settings)));
    const { refs, issues: secretIssues } = await checkSecretRefs(tx, secrets, { orgId }, "/default_machine_secret_env", submittedSecretEnv);
    throwIssues([...issues, ...secretIssues]);
    return refs as Record<string, string>;
  }

  /**
   * The provider credential must be a secret of the org. The reference's CreateMachinePoolRequest requires
   * the field for every provider, so one that needs no credential (`local`) keeps it without using it.
   */
  async function authSecretIssues(tx: Tx, orgId: string, secretId: string | null): Promise<Issue[]> {
    if (secretId === null) return [];
    const facts = await secrets.describe(tx, orgId, secretId);
    if (facts?.ownerKind === "org") return [];
    return [{ path: "/provider_auth_secret_id", message: facts ? "must be an org-owned secret" : "no such secret in this organization" }];
  }

  function requireEnabled(provider: string): void {
    if (enabledProviders.includes(provider) || providerRules(provider) === undefined) return;
    const enabled = enabledProviders.length > 0 ? `it enables ${enabledProviders.join(", ")}` : "it enables none";
    throwIssues([{ path: "/provider", message: `the ${provider} provider is not enabled on this server (SVC_MACHINE_PROVIDERS; ${enabled})` }]);
  }

  return {
    async listPools(principal: Principal, orgId: string, query: { name?: string; page: PageRequest }) {
      return db.tx(async (tx) => {
        await requireOrg(tx, principal, orgId, "org.manage");
        const rows = await store.listPools(tx, { orgId, name: query.name, page: query.page });
        return { rows, usage: await store.usageOf(tx, rows.map((pool) => pool.id)) };
      });
    },

    async getPool(principal: Principal, orgId: string, poolId: string) {
      return db.tx(async (tx) => {
        await requireOrg(tx, principal, orgId, "org.manage");
        const pool = await store.findPool(tx, orgId, poolId);
        if (!pool) throw notFound("machine pool");
        return pool;
      });
    },

    async createPool(principal: Principal, orgId: string, input: CreateMachinePoolRequest) {
      return withConflicts(() =>
        db.tx(async (tx) => {
          await requireOrg(tx, principal, orgId, "org.manage");
          const settings: PoolSettings = {
            name: input.name,
            description: input.description ?? "",
            provider: input.provider,
            defaultMachineCpu: input.default_machine_cpu ?? null,
            defaultMachineMemoryMb: input.default_machine_memory_mb ?? null,
            defaultMachineEnv: input.default_machine_env ?? {},
            defaultMachineSecretEnv: input.default_machine_secret_env ?? {},
            defaultMachineProviderOptions: input.default_machine_provider_options ?? {},
            defaultCwd: input.default_cwd ?? "",
            providerConfig: input.provider_config ?? {},
            providerAuthSecretId: decodeSecretId(input.provider_auth_secret_id),
            runtimeProtectionEnabled: input.runtime_protection_enabled ?? false,
            maxTotalMachines: input.max_total_machines,
            maxTotalCpu: input.max_total_cpu ?? null,
            maxTotalMemoryMb: input.max_total_memory_mb ?? null,
            minMachineCpu: input.min_machine_cpu ?? null,
            minMachineMemoryMb: input.min_machine_memory_mb ?? null,
            maxMachineCpu: input.max_machine_cpu ?? null,
            maxMachineMemoryMb: input.max_machine_memory_mb ?? null,
            deleteAfterIdleMinutes: input.delete_after_idle_minutes ?? null,
            metadata: input.metadata ?? {},
          };
          requireEnabled(settings.provider);
          const secretEnv = await checkSettings(tx, orgId, settings, input.default_machine_secret_env);
          if (await store.findPoolByName(tx, orgId, settings.name)) throw nameTaken(settings.name);
          return store.insertPool(tx, { id: newUuid(), orgId, ...settings, defaultMachineSecretEnv: secretEnv });
        }),
      );
    },

    /** Changes the fields given (null clears a limit or default); the provider is fixed. Checked as a whole. */
    async updatePool(principal: Principal, orgId: string, poolId: string, patch: UpdateMachinePoolRequest) {
      return withConflicts(() =>
        db.tx(async (tx) => {
          await requireOrg(tx, principal, orgId, "org.manage");
          const pool = await store.lockPool(tx, orgId, poolId);
          if (!pool) throw notFound("machine pool");
          const changes: Partial<PoolSettings> = {
            name: patch.name,
            description: patch.description,
            defaultMachineCpu: patch.default_machine_cpu,
            defaultMachineMemoryMb: patch.default_machine_memory_mb,
            defaultMachineEnv: patch.default_machine_env,
            defaultMachineProviderOptions: patch.default_machine_provider_options,
            defaultCwd: patch.default_cwd,
            providerConfig: patch.provider_config,
            providerAuthSecretId: patch.provider_auth_secret_id === undefined ? undefined : decodeSecretId(patch.provider_auth_secret_id),
            runtimeProtectionEnabled: patch.runtime_protection_enabled,
            maxTotalMachines: patch.max_total_machines,
            maxTotalCpu: patch.max_total_cpu,
            maxTotalMemoryMb: patch.max_total_memory_mb,
            minMachineCpu: patch.min_machine_cpu,
            minMachineMemoryMb: patch.min_machine_memory_mb,
            maxMachineCpu: patch.max_machine_cpu,
            maxMachineMemoryMb: patch.max_machine_memory_mb,
            deleteAfterIdleMinutes: patch.delete_after_idle_minutes,
            metadata: patch.metadata,
          };
          const defined = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as Partial<PoolSettings>;
          const merged: PoolSettings = { ...pool, ...defined, defaultMachineSecretEnv: patch.default_machine_secret_env ?? pool.defaultMachineSecretEnv };
          const secretEnv = await checkSettings(tx, orgId, merged, patch.default_machine_secret_env);
          if (defined.name !== undefined && defined.name !== pool.name && (await store.findPoolByName(tx, orgId, defined.name))) throw nameTaken(defined.name);
          if (patch.default_machine_secret_env !== undefined) defined.defaultMachineSecretEnv = secretEnv;
          if (Object.keys(defined).length === 0) return pool;
          return store.updatePool(tx, poolId, defined);
        }),
      );
    },

    /** Deletes the pool with its grants and the access they gave; its machines go with it. */
    async deletePool(principal: Principal, orgId: string, poolId: string): Promise<void> {
      await db.tx(async (tx) => {
        await requireOrg(tx, principal, orgId, "org.manage");
        if (!(await store.lockPool(tx, orgId, poolId))) throw notFound("machine pool");
        // Its machines' rows go with it (foreign keys cascade); first their agents let go of them, so no
        // call waits on a process or a machine that is gone. The provider stops their daemons next tick.
        const live = await tx.select({ id: machines.id }).from(machines).where(and(eq(machines.machinePoolId, poolId), isNull(machines.deletedAt)));
        await scheduleDeletion(tx, live.map((m) => m.id), "machine_deleted: the machine's pool was deleted.");
        await store.deletePool(tx, poolId);
      });
    },
  };
}

/** A secret id from the body as a UUID; a malformed one is a UUID no secret has, reported by authSecretIssues. */
function decodeSecretId(publicId: string | null | undefined): string | null {
  if (publicId === undefined || publicId === null) return null;
  return decodeId("secret", publicId) ?? "00000000-0000-0000-0000-000000000000";
}

function nameTaken(name: string) {
  return conflict(`a machine pool named "${name}" already exists in this organization`);
}

async function withConflicts<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUniqueViolation(err, "machine_pools_org_name")) throw conflict("a machine pool with this name already exists in this organization");
    throw err;
  }
}
