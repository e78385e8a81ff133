import { sql } from "drizzle-orm";
import { boolean, check, foreignKey, index, integer, jsonb, pgTable, text, unique, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { createdAt, idColumn, optionalTime, updatedAt } from "./columns.js";
import { orgs, projects } from "./orgs.js";
import { secrets } from "./secrets.js";

/*
 * Machines (computers agents run commands on), their daemon tokens, machine pools, and the grants that
 * let a project use a machine or a pool. Every row carries org_id and points at its parents through
 * (org_id, id) keys, so nothing can reference another org's rows. Deleting an org or a project cascades.
 *
 * Secret references in environments (`secret_env` maps) are stored as secret UUIDs inside JSON and are
 * resolved only when a process starts; no secret value is ever stored here.
 */

/** Env name → value, or → secret UUID; a null value in an overlay removes the name inherited. */
export type EnvMap = Record<string, string>;
export type EnvOverlay = Record<string, string | null>;

export const machinePools = pgTable(
  "machine_pools",
  {
    id: idColumn(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    managementKind: text("management_kind").notNull().default("tenant"),
    description: text("description").notNull().default(""),
    provider: text("provider").notNull(),
    defaultMachineCpu: integer("default_machine_cpu"),
    defaultMachineMemoryMb: integer("default_machine_memory_mb"),
    defaultMachineEnv: jsonb("default_machine_env").$type<EnvMap>().notNull().default({}),
    defaultMachineSecretEnv: jsonb("default_machine_secret_env").$type<EnvMap>().notNull().default({}),
    defaultMachineProviderOptions: jsonb("default_machine_provider_options").$type<Record<string, unknown>>().notNull().default({}),
    defaultCwd: text("default_cwd").notNull().default(""),
    providerConfig: jsonb("provider_config").$type<Record<string, unknown>>().notNull().default({}),
    providerAuthSecretId: uuid("provider_auth_secret_id"),
    runtimeProtectionEnabled: boolean("runtime_protection_enabled").notNull().default(false),
    maxTotalMachines: integer("max_total_machines").notNull(),
    maxTotalCpu: integer("max_total_cpu"),
    maxTotalMemoryMb: integer("max_total_memory_mb"),
    minMachineCpu: integer("min_machine_cpu"),
    minMachineMemoryMb: integer("min_machine_memory_mb"),
    maxMachineCpu: integer("max_machine_cpu"),
    maxMachineMemoryMb: integer("max_machine_memory_mb"),
    deleteAfterIdleMinutes: integer("delete_after_idle_minutes"),
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull().default({}),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    unique("machine_pools_org_id_id").on(t.orgId, t.id),
    unique("machine_pools_org_name").on(t.orgId, t.name),
    // A credential in use blocks the secret's deletion (409 from the secrets service).
    foreignKey({
      name: "machine_pools_auth_secret_fk",
      columns: [t.orgId, t.providerAuthSecretId],
      foreignColumns: [secrets.orgId, secrets.id],
    }).onDelete("restrict"),
    check("machine_pools_management_kind", sql`${t.managementKind} IN ('tenant', 'cluster')`),
    check("machine_pools_max_total_machines", sql`${t.maxTotalMachines} >= 0`),
    check("machine_pools_idle", sql`${t.deleteAfterIdleMinutes} IS NULL OR ${t.deleteAfterIdleMinutes} >= 5`),
    index("machine_pools_org_created_idx").on(t.orgId, t.createdAt, t.id),
    index("machine_pools_auth_secret_idx").on(t.orgId, t.providerAuthSecretId),
  ],
);

export const machines = pgTable(
  "machines",
  {
    id: idColumn(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    machinePoolId: uuid("machine_pool_id"),
    sourceKind: text("source_kind").notNull(),
    displayName: text("display_name").notNull(),
    description: text("description").notNull().default(""),
    provider: text("provider").notNull(),
    lifecycleState: text("lifecycle_state").notNull(),
    lifecycleReasonCode: text("lifecycle_reason_code").notNull().default(""),
    lifecycleReasonMessage: text("lifecycle_reason_message").notNull().default(""),
    cwd: text("cwd").notNull().default(""),
    env: jsonb("env").$type<EnvMap>().notNull().default({}),
    secretEnv: jsonb("secret_env").$type<EnvMap>().notNull().default({}),
    /** Provisioned size of a pool machine, counted against the pool's limits; null for BYO machines. */
    cpu: integer("cpu"),
    memoryMb: integer("memory_mb"),
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull().default({}),
    idempotencyKey: text("idempotency_key"),
    /**
     * The connected daemon's lease and the token it authenticated with, renewed by its heartbeats
     * (the daemon routes). `connection_state` is derived from them with the database clock.
     */
    leaseExpiresAt: optionalTime("lease_expires_at"),
    leaseTokenId: uuid("lease_token_id"),
    /** The expired lease `machine.offline` was sent for (modules/machines/offline-webhooks.ts), so it is sent once per lapse. */
    offlineAnnouncedLease: optionalTime("offline_announced_lease"),
    asleepSince: optionalTime("asleep_since"),
    lastObservedAt: optionalTime("last_observed_at"),
    nextReconcileAfter: optionalTime("next_reconcile_after"),
    provisionAttempts: integer("provision_attempts").notNull().default(0),
    deleteAttempts: integer("delete_attempts").notNull().default(0),
    failureReport: jsonb("failure_report").$type<Record<string, unknown>>(),
    /**
     * A pool machine's idle period, fixed when it is created from pool → grant → agent config (null: never
     * deleted for idleness). Idle means no queued or live process since the later of its activation and
     * its last process's end.
     */
    deleteAfterIdleMinutes: integer("delete_after_idle_minutes"),
    /**
     * The `create_machine` tool call waiting for this machine to come online or fail. No foreign key: the
     * call lives in the timeline tables and goes with its agent; a dangling id matches no waiting call.
     */
    createToolCallId: uuid("create_tool_call_id"),
    deletedAt: optionalTime("deleted_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    unique("machines_org_id_id").on(t.orgId, t.id),
    unique("machines_org_idempotency_key").on(t.orgId, t.idempotencyKey),
    foreignKey({ columns: [t.orgId, t.machinePoolId], foreignColumns: [machinePools.orgId, machinePools.id] }).onDelete("cascade"),
    // Agent configs name BYO machines by display name, so a live name means one machine.
    uniqueIndex("machines_live_byo_name")
      .on(t.orgId, t.displayName)
      .where(sql`${t.sourceKind} = 'byo' AND ${t.deletedAt} IS NULL`),
    check("machines_source_kind", sql`${t.sourceKind} IN ('byo', 'pool')`),
    check("machines_pool_shape", sql`(${t.sourceKind} = 'pool') = (${t.machinePoolId} IS NOT NULL)`),
    check(
      "machines_lifecycle_state",
      sql`${t.lifecycleState} IN ('provisioning', 'provision_failed', 'active', 'deleting', 'delete_failed', 'deleted')`,
    ),
    check("machines_deleted_shape", sql`(${t.lifecycleState} = 'deleted') = (${t.deletedAt} IS NOT NULL)`),
    index("machines_org_created_idx").on(t.orgId, t.createdAt, t.id),
    index("machines_pool_idx").on(t.machinePoolId),
    // Maintenance finds pool machines with lifecycle work (provisioning, deleting) without a scan.
    index("machines_pool_lifecycle_idx")
      .on(t.lifecycleState, t.createdAt)
      .where(sql`${t.sourceKind} = 'pool' AND ${t.deletedAt} IS NULL`),
    check("machines_idle", sql`${t.deleteAfterIdleMinutes} IS NULL OR ${t.deleteAfterIdleMinutes} >= 1`),
  ],
);

export const machineDaemonTokens = pgTable(
  "machine_daemon_tokens",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    machineId: uuid("machine_id").notNull(),
    name: text("name").notNull(),
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull().default({}),
    tokenHash: text("token_hash").notNull().unique(),
    lastUsedAt: optionalTime("last_used_at"),
    revokedAt: optionalTime("revoked_at"),
    revokeReason: text("revoke_reason").notNull().default(""),
    createdAt: createdAt(),
  },
  (t) => [
    foreignKey({ columns: [t.orgId, t.machineId], foreignColumns: [machines.orgId, machines.id] }).onDelete("cascade"),
    index("machine_daemon_tokens_machine_created_idx").on(t.machineId, t.createdAt, t.id),
  ],
);

export const projectMachinePoolGrants = pgTable(
  "project_machine_pool_grants",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    projectId: uuid("project_id").notNull(),
    machinePoolId: uuid("machine_pool_id").notNull(),
    description: text("description").notNull().default(""),
    defaultMachineCpu: integer("default_machine_cpu"),
    defaultMachineMemoryMb: integer("default_machine_memory_mb"),
    defaultMachineEnvOverlay: jsonb("default_machine_env_overlay").$type<EnvOverlay>().notNull().default({}),
    defaultMachineSecretEnvOverlay: jsonb("default_machine_secret_env_overlay").$type<EnvOverlay>().notNull().default({}),
    defaultMachineProviderOptionsOverlay: jsonb("default_machine_provider_options_overlay")
      .$type<Record<string, unknown>>()
      .notNull()
      .default({}),
    defaultCwd: text("default_cwd").notNull().default(""),
    maxTotalMachines: integer("max_total_machines"),
    maxTotalCpu: integer("max_total_cpu"),
    maxTotalMemoryMb: integer("max_total_memory_mb"),
    minMachineCpu: integer("min_machine_cpu"),
    minMachineMemoryMb: integer("min_machine_memory_mb"),
    maxMachineCpu: integer("max_machine_cpu"),
    maxMachineMemoryMb: integer("max_machine_memory_mb"),
    /** Null inherits the pool's period; 0 disables idle deletion for this project. */
    deleteAfterIdleMinutes: integer("delete_after_idle_minutes"),
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull().default({}),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    unique("project_machine_pool_grants_project_pool").on(t.projectId, t.machinePoolId),
    foreignKey({ columns: [t.orgId, t.projectId], foreignColumns: [projects.orgId, projects.id] }).onDelete("cascade"),
    foreignKey({ columns: [t.orgId, t.machinePoolId], foreignColumns: [machinePools.orgId, machinePools.id] }).onDelete("cascade"),
    check(
      "project_machine_pool_grants_idle",
      sql`${t.deleteAfterIdleMinutes} IS NULL OR ${t.deleteAfterIdleMinutes} = 0 OR ${t.deleteAfterIdleMinutes} >= 5`,
    ),
    index("project_machine_pool_grants_project_created_idx").on(t.projectId, t.createdAt, t.id),
    index("project_machine_pool_grants_pool_idx").on(t.machinePoolId),
  ],
);

export const projectMachineGrants = pgTable(
  "project_machine_grants",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    projectId: uuid("project_id").notNull(),
    machineId: uuid("machine_id").notNull(),
    sourceKind: text("source_kind").notNull(),
    /** Set for the grants a pool grant generated; they go with it. */
    projectMachinePoolGrantId: uuid("project_machine_pool_grant_id").references(() => projectMachinePoolGrants.id, {
      onDelete: "cascade",
    }),
    description: text("description").notNull().default(""),
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull().default({}),
    idempotencyKey: text("idempotency_key"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    unique("project_machine_grants_project_machine").on(t.projectId, t.machineId),
    unique("project_machine_grants_project_idempotency_key").on(t.projectId, t.idempotencyKey),
    foreignKey({ columns: [t.orgId, t.projectId], foreignColumns: [projects.orgId, projects.id] }).onDelete("cascade"),
    foreignKey({ columns: [t.orgId, t.machineId], foreignColumns: [machines.orgId, machines.id] }).onDelete("cascade"),
    check("project_machine_grants_source_kind", sql`${t.sourceKind} IN ('explicit', 'pool')`),
    check(
      "project_machine_grants_pool_shape",
      sql`(${t.sourceKind} = 'pool') = (${t.projectMachinePoolGrantId} IS NOT NULL)`,
    ),
    index("project_machine_grants_project_created_idx").on(t.projectId, t.createdAt, t.id),
    index("project_machine_grants_machine_idx").on(t.machineId),
  ],
);
