import type { Database, Tx } from "../../platform/db/index.js";
import { isUniqueViolation } from "../../platform/db/index.js";
import { conflict, notFound, type Issue } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import type { PageRequest } from "../../platform/http/lists.js";
import { newUuid } from "../../platform/ids.js";
import { requireProject } from "../orgs/access.js";
import { scheduleDeletion } from "./bindings.js";
import { checkSecretRefs, nameIssues, throwIssues, type SecretDirectory } from "./environment.js";
import * as grants from "./pool-grants-store.js";
import { capacityIssues, capacityOf, effectiveCapacity, narrowingIssues } from "./pools-rules.js";
import type { PoolGrantOverrides } from "./pools-schemas.js";
import * as pools from "./pools-store.js";
import { providerRules } from "./providers/index.js";

/** A grant's stored overrides: everything but its identity. */
type Overrides = Omit<grants.PoolGrantRow, "id" | "orgId" | "projectId" | "machinePoolId" | "createdAt" | "updatedAt">;

const NO_OVERRIDES: Overrides = {
  description: "",
  defaultMachineCpu: null,
  defaultMachineMemoryMb: null,
  defaultMachineEnvOverlay: {},
  defaultMachineSecretEnvOverlay: {},
  defaultMachineProviderOptionsOverlay: {},
  defaultCwd: "",
  maxTotalMachines: null,
  maxTotalCpu: null,
  maxTotalMemoryMb: null,
  minMachineCpu: null,
  minMachineMemoryMb: null,
  maxMachineCpu: null,
  maxMachineMemoryMb: null,
  deleteAfterIdleMinutes: null,
  metadata: {},
};

/** Applies a request: an absent field keeps the current value, null clears it back to the pool's. */
function applied(current: Overrides, input: PoolGrantOverrides): Overrides {
  return {
    description: input.description ?? current.description,
    defaultMachineCpu: input.default_machine_cpu === undefined ? current.defaultMachineCpu : input.default_machine_cpu,
    defaultMachineMemoryMb: input.default_machine_memory_mb === undefined ? current.defaultMachineMemoryMb : input.default_machine_memory_mb,
    defaultMachineEnvOverlay: input.default_machine_env_overlay ?? current.defaultMachineEnvOverlay,
    defaultMachineSecretEnvOverlay: input.default_machine_secret_env_overlay ?? current.defaultMachineSecretEnvOverlay,
    defaultMachineProviderOptionsOverlay: input.default_machine_provider_options_overlay ?? current.defaultMachineProviderOptionsOverlay,
    defaultCwd: input.default_cwd ?? current.defaultCwd,
    maxTotalMachines: input.max_total_machines === undefined ? current.maxTotalMachines : input.max_total_machines,
    maxTotalCpu: input.max_total_cpu === undefined ? current.maxTotalCpu : input.max_total_cpu,
    maxTotalMemoryMb: input.max_total_memory_mb === undefined ? current.maxTotalMemoryMb : input.max_total_memory_mb,
    minMachineCpu: input.min_machine_cpu === undefined ? current.minMachineCpu : input.min_machine_cpu,
    minMachineMemoryMb: input.min_machine_memory_mb === undefined ? current.minMachineMemoryMb : input.min_machine_memory_mb,
    maxMachineCpu: input.max_machine_cpu === undefined ? current.maxMachineCpu : input.max_machine_cpu,
    maxMachineMemoryMb: input.max_machine_memory_mb === undefined ? current.maxMachineMemoryMb : input.max_machine_memory_mb,
    deleteAfterIdleMinutes: input.delete_after_idle_minutes === undefined ? current.deleteAfterIdleMinutes : input.delete_after_idle_minutes,
    metadata: input.metadata ?? current.metadata,
  };
}

/**
 * Project machine pool grants: a project may create machines from a pool, within limits that can only
 * narrow the pool's, with its own defaults and environment overlays. Managing them needs
 * project.access_manage on the project. Secret overlays must name generic secrets the project can use.
 */
export function createPoolGrantService(deps: { db: Database; secrets: SecretDirectory }) {
  const { db, secrets } = deps;

  async function checked(tx: Tx, orgId: string, projectId: string, pool: pools.PoolRow, overrides: Overrides, input: PoolGrantOverrides) {
    const issues: Issue[] = [
      ...nameIssues({
        envPath: "/default_machine_env_overlay",
        env: overrides.defaultMachineEnvOverlay,
        secretPath: "/default_machine_secret_env_overlay",
        secretEnv: overrides.defaultMachineSecretEnvOverlay,
      }),
      ...(providerRules(pool.provider)?.check(
        { options: overrides.defaultMachineProviderOptionsOverlay },
        { providerConfig: "", options: "/default_machine_provider_options_overlay", authSecret: "" },
      ) ?? []),
    ];
    const poolCapacity = capacityOf(pool);
    const grantCapacity = capacityOf(overrides);
    issues.push(...narrowingIssues(poolCapacity, grantCapacity));
    issues.push(...capacityIssues(effectiveCapacity(poolCapacity, grantCapacity)));
    const { refs, issues: secretIssues } = await checkSecretRefs(tx, secrets, { orgId, projectId }, "/default_machine_secret_env_overlay", input.default_machine_secret_env_overlay);
    throwIssues([...issues, ...secretIssues]);
    return input.default_machine_secret_env_overlay === undefined ? overrides : { ...overrides, defaultMachineSecretEnvOverlay: refs };
  }

  return {
    async listPoolGrants(principal: Principal, orgId: string, projectId: string, query: { name?: string; page: PageRequest }) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "project.access_manage");
        return grants.listPoolGrants(tx, { orgId, projectId, name: query.name, page: query.page });
      });
    },

    async getPoolGrant(principal: Principal, orgId: string, projectId: string, grantId: string) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "project.access_manage");
        const grant = await grants.findPoolGrant(tx, orgId, projectId, grantId);
        if (!grant) throw notFound("machine pool grant");
        return grant;
      });
    },

    async createPoolGrant(principal: Principal, orgId: string, projectId: string, input: PoolGrantOverrides & { poolId: string }) {
      return withConflicts(() =>
        db.tx(async (tx) => {
          await requireProject(tx, principal, orgId, projectId, "project.access_manage");
          const pool = await pools.lockPool(tx, orgId, input.poolId);
          if (!pool) throw notFound("machine pool");
          if (await grants.findPoolGrantOfPool(tx, projectId, pool.id)) throw alreadyGranted();
          const overrides = await checked(tx, orgId, projectId, pool, applied(NO_OVERRIDES, input), input);
          return grants.insertPoolGrant(tx, { id: newUuid(), orgId, projectId, machinePoolId: pool.id, ...overrides });
        }),
      );
    },

    /** Changes apply to machines created afterwards; existing machines keep their configuration. */
    async updatePoolGrant(principal: Principal, orgId: string, projectId: string, grantId: string, input: PoolGrantOverrides) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "project.access_manage");
        const grant = await grants.findPoolGrant(tx, orgId, projectId, grantId);
        if (!grant) throw notFound("machine pool grant");
        const pool = (await pools.lockPool(tx, orgId, grant.machinePoolId))!;
        const overrides = await checked(tx, orgId, projectId, pool, applied(grant, input), input);
        return grants.updatePoolGrant(tx, grantId, overrides);
      });
    },

    /**
     * Removes the project's access to the pool; the pool stays. The machines made through the grant are
     * deleted (reference: a pool machine belongs to one project), their agents' bindings released and the
     * calls waiting on them failed with the reason.
     */
    async deletePoolGrant(principal: Principal, orgId: string, projectId: string, grantId: string): Promise<void> {
      await db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "project.access_manage");
        const grant = await grants.findPoolGrant(tx, orgId, projectId, grantId);
        if (!grant) throw notFound("machine pool grant");
        const made = await grants.machinesMadeThrough(tx, grantId);
        await scheduleDeletion(tx, made, "machine_deleted: the pool grant the machine was made through was deleted.");
        await grants.deletePoolGrant(tx, orgId, grantId);
      });
    },
  };
}

function alreadyGranted() {
  return conflict("the machine pool is already granted to this project");
}

async function withConflicts<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUniqueViolation(err, "project_machine_pool_grants_project_pool")) throw alreadyGranted();
    throw err;
  }
}
