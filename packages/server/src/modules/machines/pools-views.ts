import { encodeId } from "../../platform/ids.js";
import { iso } from "../../platform/http/schemas.js";
import { publicSecretRefs } from "./environment.js";
import type { PoolGrantRow } from "./pool-grants-store.js";
import type { PoolRow, PoolUsage } from "./pools-store.js";

export function poolSummaryView(pool: PoolRow) {
  return {
    id: encodeId("machinePool", pool.id),
    org_id: encodeId("org", pool.orgId),
    name: pool.name,
    management_kind: pool.managementKind as "tenant" | "cluster",
    description: pool.description,
    provider: pool.provider,
    created_at: iso(pool.createdAt),
    updated_at: iso(pool.updatedAt),
  };
}

/** A pool; the list adds `usage` (its live machines and their size). */
export function poolView(pool: PoolRow, usage?: PoolUsage) {
  return {
    ...poolSummaryView(pool),
    default_machine_cpu: pool.defaultMachineCpu,
    default_machine_memory_mb: pool.defaultMachineMemoryMb,
    default_machine_env: pool.defaultMachineEnv,
    default_machine_secret_env: publicSecretRefs(pool.defaultMachineSecretEnv),
    default_machine_provider_options: pool.defaultMachineProviderOptions,
    default_cwd: pool.defaultCwd,
    ...(pool.providerAuthSecretId ? { provider_auth_secret_id: encodeId("secret", pool.providerAuthSecretId) } : {}),
    provider_config: pool.providerConfig,
    runtime_protection_enabled: pool.runtimeProtectionEnabled,
    max_total_machines: pool.maxTotalMachines,
    max_total_cpu: pool.maxTotalCpu,
    max_total_memory_mb: pool.maxTotalMemoryMb,
    min_machine_cpu: pool.minMachineCpu,
    min_machine_memory_mb: pool.minMachineMemoryMb,
    max_machine_cpu: pool.maxMachineCpu,
    max_machine_memory_mb: pool.maxMachineMemoryMb,
    delete_after_idle_minutes: pool.deleteAfterIdleMinutes,
    metadata: pool.metadata,
    ...(usage ? { usage: { machines: usage.machines, cpu: usage.cpu, memory_mb: usage.memoryMb } } : {}),
  };
}

export function poolGrantView(grant: PoolGrantRow) {
  return {
    id: encodeId("machinePoolGrant", grant.id),
    org_id: encodeId("org", grant.orgId),
    project_id: encodeId("project", grant.projectId),
    machine_pool_id: encodeId("machinePool", grant.machinePoolId),
    description: grant.description,
    default_machine_cpu: grant.defaultMachineCpu,
    default_machine_memory_mb: grant.defaultMachineMemoryMb,
    default_machine_env_overlay: grant.defaultMachineEnvOverlay,
    default_machine_secret_env_overlay: publicSecretRefs(grant.defaultMachineSecretEnvOverlay),
    default_machine_provider_options_overlay: grant.defaultMachineProviderOptionsOverlay,
    default_cwd: grant.defaultCwd,
    max_total_machines: grant.maxTotalMachines,
    max_total_cpu: grant.maxTotalCpu,
    max_total_memory_mb: grant.maxTotalMemoryMb,
    min_machine_cpu: grant.minMachineCpu,
    min_machine_memory_mb: grant.minMachineMemoryMb,
    max_machine_cpu: grant.maxMachineCpu,
    max_machine_memory_mb: grant.maxMachineMemoryMb,
    delete_after_idle_minutes: grant.deleteAfterIdleMinutes,
    metadata: grant.metadata,
    created_at: iso(grant.createdAt),
    updated_at: iso(grant.updatedAt),
  };
}
