import { sql } from "drizzle-orm";
import { bigint, check, foreignKey, index, integer, jsonb, pgTable, text, unique, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { createdAt, idColumn, optionalTime, requiredTime, updatedAt } from "./columns.js";
import { agents } from "./agents.js";
import { machineDaemonTokens, machines, type EnvMap, type EnvOverlay } from "./machines.js";
import { toolCalls } from "./timeline.js";

/*
 * What connected daemons do (docs/architecture.md, "The daemon protocol"): their runtimes, the machines
 * agents hold (bindings), and the processes run_command starts on them. Rows carry org_id and point at
 * their machine through (org_id, id), so nothing reaches another org's machine.
 */

/**
 * One svcd run connected to a machine. At most one is active per machine; a new daemon instance ends the
 * previous one (`replaced`). Its lease is mirrored on the machine row, where `connection_state` reads it.
 */
export const daemonRuntimes = pgTable(
  "daemon_runtimes",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    machineId: uuid("machine_id").notNull(),
    daemonTokenId: uuid("daemon_token_id")
      .notNull()
      .references(() => machineDaemonTokens.id, { onDelete: "cascade" }),
    daemonInstanceId: uuid("daemon_instance_id").notNull(),
    daemonVersion: text("daemon_version").notNull(),
    state: text("state").notNull().default("active"),
    stateReasonCode: text("state_reason_code").notNull().default(""),
    stateReasonMessage: text("state_reason_message").notNull().default(""),
    capacity: jsonb("capacity").$type<Record<string, unknown>>().notNull().default({}),
    observedPlatform: jsonb("observed_platform").$type<Record<string, unknown>>().notNull().default({}),
    createdAt: createdAt(),
    lastSeenAt: requiredTime("last_seen_at"),
    leaseExpiresAt: requiredTime("lease_expires_at"),
    endedAt: optionalTime("ended_at"),
  },
  (t) => [
    foreignKey({ columns: [t.orgId, t.machineId], foreignColumns: [machines.orgId, machines.id] }).onDelete("cascade"),
    unique("daemon_runtimes_machine_instance").on(t.machineId, t.daemonInstanceId),
    uniqueIndex("daemon_runtimes_one_active").on(t.machineId).where(sql`${t.state} = 'active'`),
    check("daemon_runtimes_state", sql`(${t.state} = 'active') = (${t.endedAt} IS NULL) AND ${t.state} IN ('active', 'ended')`),
    index("daemon_runtimes_token_idx").on(t.daemonTokenId),
  ],
);

/** A machine an agent holds, named by `machine_ref` in its tools; made at launch from the config's `machine_sources`. */
export const agentMachineBindings = pgTable(
  "agent_machine_bindings",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    projectId: uuid("project_id").notNull(),
    agentId: uuid("agent_id")
      .notNull()
      .references(() => agents.id, { onDelete: "cascade" }),
    machineId: uuid("machine_id").notNull(),
    machineRef: text("machine_ref").notNull(),
    bindingKind: text("binding_kind").notNull(),
    state: text("state").notNull().default("attached"),
    description: text("description").notNull().default(""),
    cwd: text("cwd").notNull().default(""),
    envOverlay: jsonb("env_overlay").$type<EnvOverlay>().notNull().default({}),
    secretEnvOverlay: jsonb("secret_env_overlay").$type<EnvOverlay>().notNull().default({}),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    foreignKey({ columns: [t.orgId, t.machineId], foreignColumns: [machines.orgId, machines.id] }).onDelete("cascade"),
    unique("agent_machine_bindings_agent_ref").on(t.agentId, t.machineRef),
    check("agent_machine_bindings_kind", sql`${t.bindingKind} IN ('explicit', 'pool')`),
    check("agent_machine_bindings_state", sql`${t.state} IN ('attached', 'released')`),
    index("agent_machine_bindings_machine_idx").on(t.machineId),
  ],
);

/**
 * What a file transfer process moves (`kind` upload or download; null for commands). Upload: the machine
 * file `source`, and once the daemon has posted it, the `artifact_id` it became. Download: the artifact
 * (`artifact_id`, as a row id) and the machine path `destination`.
 */
export interface TransferSpec {
  source?: string;
  destination?: string;
  artifact_id?: string;
  /** A memory file instead of an artifact (issue 31): the store, the file's path in it, and for a download the version read. */
  memory?: TransferMemory;
}

/**
 * The memory side of a transfer. Upload: where the file goes, the `expected_digest` the model gave, and once
 * the daemon has posted it, the `digest` and `version` it became. Download: the file's version when the call
 * was dispatched (the bytes sent are that version's), with its digest and size.
 */
export interface TransferMemory {
  store_id: string;
  store_name: string;
  path: string;
  expected_digest?: string;
  memory_id?: string;
  version?: number;
  digest?: string;
  size_bytes?: number;
}

/**
 * One per run_command, upload_file or download_file call (`kind`). `queued` until a daemon accepts it
 * (`starting`, bound to that runtime, with `execution_granted_at`), then ended by the daemon's report. The
 * environment is stored without secret values: `secret_env` keeps references, resolved when the process is
 * offered. A transfer's `command` only describes it (list_processes shows it); svcd runs the transfer itself.
 */
export const processes = pgTable(
  "processes",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    agentId: uuid("agent_id")
      .notNull()
      .references(() => agents.id, { onDelete: "cascade" }),
    toolCallId: uuid("tool_call_id")
      .notNull()
      .unique()
      .references(() => toolCalls.id, { onDelete: "cascade" }),
    machineId: uuid("machine_id").notNull(),
    bindingId: uuid("binding_id")
      .notNull()
      .references(() => agentMachineBindings.id, { onDelete: "cascade" }),
    kind: text("kind").notNull().default("command"),
    transfer: jsonb("transfer").$type<TransferSpec>(),
    ioMode: text("io_mode").notNull(),
    command: text("command").notNull(),
    shellSelector: text("shell_selector").notNull(),
    cwd: text("cwd").notNull(),
    env: jsonb("env").$type<EnvMap>().notNull().default({}),
    secretEnv: jsonb("secret_env").$type<EnvMap>().notNull().default({}),
    waitMs: integer("wait_ms").notNull(),
    state: text("state").notNull().default("queued"),
    runtimeId: uuid("runtime_id"),
    executionGrantedAt: optionalTime("execution_granted_at"),
    exitCode: integer("exit_code"),
    exitSignal: text("exit_signal"),
    reason: text("reason").notNull().default(""),
    outputBytes: bigint("output_bytes", { mode: "number" }).notNull().default(0),
    sourceStartedAt: optionalTime("source_started_at"),
    sourceEndedAt: optionalTime("source_ended_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    foreignKey({ columns: [t.orgId, t.machineId], foreignColumns: [machines.orgId, machines.id] }).onDelete("cascade"),
    check("processes_io_mode", sql`${t.ioMode} IN ('pipe', 'pty')`),
    check("processes_kind", sql`${t.kind} IN ('command', 'upload', 'download')`),
    check("processes_transfer", sql`(${t.kind} = 'command') = (${t.transfer} IS NULL)`),
    check("processes_state", sql`${t.state} IN ('queued', 'starting', 'running', 'exited', 'failed', 'killed', 'unknown')`),
    index("processes_machine_queued_idx").on(t.machineId, t.createdAt).where(sql`${t.state} = 'queued'`),
    index("processes_runtime_idx").on(t.runtimeId),
    index("processes_agent_idx").on(t.agentId),
  ],
);

/**
 * Follow-up work on a process (reference design-brief.md §2.6): read_process, write_process and stop_process each queue
 * one, numbered per process by `seq`. A daemon is offered a process's lowest queued action only while none
 * of that process is `accepted` (the partial unique index), so a process's actions apply one at a time, in
 * order. The daemon's report ends it (`applied`, `failed`) and completes its tool call; `unknown` means
 * svc cannot tell whether it had its effect (the daemon restarted mid-way, or its machine stayed away).
 */
export const processActions = pgTable(
  "process_actions",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    processId: uuid("process_id")
      .notNull()
      .references(() => processes.id, { onDelete: "cascade" }),
    toolCallId: uuid("tool_call_id")
      .notNull()
      .unique()
      .references(() => toolCalls.id, { onDelete: "cascade" }),
    seq: integer("seq").notNull(),
    kind: text("kind").notNull(),
    payload: jsonb("payload").$type<Record<string, unknown>>().notNull().default({}),
    state: text("state").notNull().default("queued"),
    runtimeId: uuid("runtime_id"),
    acceptedAt: optionalTime("accepted_at"),
    reason: text("reason").notNull().default(""),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    unique("process_actions_process_seq").on(t.processId, t.seq),
    uniqueIndex("process_actions_one_accepted").on(t.processId).where(sql`${t.state} = 'accepted'`),
    check("process_actions_kind", sql`${t.kind} IN ('write', 'read', 'interrupt', 'terminate')`),
    check("process_actions_state", sql`${t.state} IN ('queued', 'accepted', 'applied', 'failed', 'unknown')`),
    index("process_actions_open_idx").on(t.processId, t.seq).where(sql`${t.state} IN ('queued', 'accepted')`),
  ],
);
