import { Type, type Static } from "typebox";
import { idPattern } from "../../platform/ids.js";
import { Id, NullableTimestamp, Timestamp } from "../../platform/http/schemas.js";

export const TAG = "Machine Daemon";

const strict = { additionalProperties: false } as const;
const Uuid = Type.String({ format: "uuid" });
const Free = Type.Unsafe<Record<string, unknown>>({ type: "object", additionalProperties: true, maxProperties: 64 });

export const RuntimeParams = Type.Object({ runtimeID: Id("daemonRuntime") });

export const BootstrapDaemonResponse = Type.Object({ installation_id: Id("installation"), machine_id: Id("machine") }, strict);

export const ProcessActionClaim = Type.Object(
  {
    process_action_id: Type.String({ minLength: 1, maxLength: 64 }),
    seq: Type.Integer({ minimum: 1 }),
    action_kind: Type.Union([Type.Literal("write"), Type.Literal("interrupt"), Type.Literal("terminate")]),
    position: Type.Union([Type.Literal("effect_committed"), Type.Literal("terminal")]),
  },
  strict,
);

export const ProcessClaim = Type.Object(
  {
    process_id: Type.String({ minLength: 1, maxLength: 64 }),
    supervisor_instance_id: Type.String({ minLength: 1, maxLength: 128 }),
    phase: Type.Union([Type.Literal("preparing"), Type.Literal("prepared"), Type.Literal("accepted"), Type.Literal("terminal")]),
    supervisor_live: Type.Boolean(),
    execution_committed: Type.Boolean(),
    action_admission_closed: Type.Boolean(),
    resolved_action_seq: Type.Integer({ minimum: 0 }),
    actions: Type.Array(ProcessActionClaim, { maxItems: 256 }),
  },
  strict,
);
export type ProcessClaim = Static<typeof ProcessClaim>;

export const RegisterDaemonRuntimeRequest = Type.Object(
  {
    daemon_instance_id: Uuid,
    daemon_version: Type.String({ minLength: 1, maxLength: 64 }),
    capacity: Type.Optional(Free),
    observed_platform: Type.Optional(Free),
    processes: Type.Array(ProcessClaim, { maxItems: 1024 }),
  },
  strict,
);

export const Disposition = Type.Union([Type.Literal("close_preparation"), Type.Literal("start"), Type.Literal("retain"), Type.Literal("release")]);
export type Disposition = Static<typeof Disposition>;

const ActionKind = Type.Union([Type.Literal("write"), Type.Literal("read"), Type.Literal("interrupt"), Type.Literal("terminate")]);

/** svc's answer for an action svcd claims or svc had granted: apply it (never applied, or harmless to repeat), keep it, or forget it. */
export const ProcessActionDirective = Type.Object(
  {
    process_action_id: Type.String(),
    seq: Type.Integer({ minimum: 1 }),
    action_kind: ActionKind,
    disposition: Type.Union([Type.Literal("apply"), Type.Literal("retain"), Type.Literal("settle"), Type.Literal("release")]),
    payload: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  strict,
);
export type ProcessActionDirective = Static<typeof ProcessActionDirective>;

export const ProcessDirective = Type.Object(
  { process_id: Type.String(), supervisor_instance_id: Type.String(), disposition: Disposition, actions: Type.Array(ProcessActionDirective) },
  strict,
);
export type ProcessDirective = Static<typeof ProcessDirective>;

export const DaemonRuntime = Type.Object(
  {
    id: Id("daemonRuntime"),
    org_id: Id("org"),
    machine_id: Id("machine"),
    daemon_instance_id: Uuid,
    daemon_version: Type.String(),
    state: Type.Union([Type.Literal("active"), Type.Literal("ended")]),
    state_reason_code: Type.String(),
    state_reason_message: Type.String(),
    created_at: Timestamp,
    last_seen_at: Timestamp,
    lease_expires_at: Timestamp,
    next_heartbeat_after_ms: Type.Integer(),
    ended_at: NullableTimestamp,
    capacity: Type.Object({}, { additionalProperties: true }),
  },
  strict,
);

export const RegisterDaemonRuntimeResponse = Type.Object(
  { runtime: DaemonRuntime, reconciliation: Type.Object({ processes: Type.Array(ProcessDirective) }, strict) },
  strict,
);

/** A daemon's report of a process's end. Output is capped by svcd. */
export const ProcessFinishedEvent = Type.Object(
  {
    type: Type.Literal("process_finished"),
    process_id: Type.String({ pattern: idPattern("process") }),
    state: Type.Union([Type.Literal("exited"), Type.Literal("failed"), Type.Literal("killed"), Type.Literal("unknown")]),
    exit_code: Type.Union([Type.Integer({ minimum: -2147483648, maximum: 2147483647 }), Type.Null()]),
    exit_signal: Type.Union([Type.String({ maxLength: 32 }), Type.Null()]),
    reason: Type.String({ maxLength: 4000 }),
    started_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
    ended_at: Type.String({ format: "date-time" }),
    result: Type.Object(
      {
        stdout: Type.String({ maxLength: 256 * 1024 }),
        stderr: Type.String({ maxLength: 256 * 1024 }),
        stdout_bytes: Type.Integer({ minimum: 0 }),
        stderr_bytes: Type.Integer({ minimum: 0 }),
        truncated: Type.Boolean(),
      },
      strict,
    ),
  },
  strict,
);
export type ProcessFinishedEvent = Static<typeof ProcessFinishedEvent>;

const Output = Type.String({ maxLength: 256 * 1024 });
const Cursor = Type.Integer({ minimum: 0 });
const ProcessId = Type.String({ pattern: idPattern("process") });
const ActionId = Type.String({ pattern: idPattern("processAction") });

/** The initial wait ended with the process running: its run_command call returns with the output so far. */
export const ProcessStartedEvent = Type.Object(
  {
    type: Type.Literal("process_started"),
    process_id: ProcessId,
    started_at: Type.String({ format: "date-time" }),
    observed_at: Type.String({ format: "date-time" }),
    result: Type.Object({ stdout: Output, stderr: Output, stdout_cursor: Cursor, stderr_cursor: Cursor, truncated: Type.Boolean() }, strict),
  },
  strict,
);
export type ProcessStartedEvent = Static<typeof ProcessStartedEvent>;

const ProcessStanding = Type.Union([Type.Literal("running"), Type.Literal("exited"), Type.Literal("failed"), Type.Literal("killed"), Type.Literal("unknown")]);

/** An action's outcome: applied, failed (no effect), or unknown (it may have had its effect). */
export const ProcessActionEvent = Type.Object(
  {
    type: Type.Union([Type.Literal("process_action_applied"), Type.Literal("process_action_failed"), Type.Literal("process_action_unknown")]),
    process_id: ProcessId,
    process_action_id: ActionId,
    reason: Type.Optional(Type.String({ maxLength: 4000 })),
    result: Type.Object(
      {
        process_state: ProcessStanding,
        exit_code: Type.Union([Type.Integer({ minimum: -2147483648, maximum: 2147483647 }), Type.Null()]),
        stdout: Type.Optional(Output),
        stderr: Type.Optional(Output),
        stdout_cursor: Type.Optional(Cursor),
        stderr_cursor: Type.Optional(Cursor),
        truncated: Type.Optional(Type.Boolean()),
        bytes_written: Type.Optional(Cursor),
        stdin_closed: Type.Optional(Type.Boolean()),
        signal: Type.Optional(Type.String({ maxLength: 32 })),
      },
      strict,
    ),
  },
  strict,
);
export type ProcessActionEvent = Static<typeof ProcessActionEvent>;

export const ReportEvent = Type.Union([ProcessFinishedEvent, ProcessStartedEvent, ProcessActionEvent]);
export type ReportEvent = Static<typeof ReportEvent>;

/** A daemon's answer to a `skill_offer` (design brief §7); `path` (svc's addition) is where the files went. */
export const SkillReport = Type.Object(
  {
    request_id: Type.String({ maxLength: 64 }),
    skill_id: Type.String({ maxLength: 64 }),
    state: Type.Union([Type.Literal("ready"), Type.Literal("failed"), Type.Literal("timeout"), Type.Literal("unreachable")]),
    error: Type.Optional(Type.String({ maxLength: 4000 })),
    path: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  strict,
);
export type SkillReport = Static<typeof SkillReport>;

/** Frames a daemon sends on its runtime's socket. */
export const DaemonFrame = Type.Union([
  Type.Object({ type: Type.Literal("heartbeat"), payload: Type.Object({ daemon_instance_id: Uuid, observed_platform: Type.Optional(Free) }, strict) }, strict),
  Type.Object({ type: Type.Literal("process_accept"), payload: Type.Object({ process_id: Type.String({ maxLength: 64 }) }, strict) }, strict),
  Type.Object(
    { type: Type.Literal("action_accept"), payload: Type.Object({ process_id: Type.String({ maxLength: 64 }), process_action_id: Type.String({ maxLength: 64 }) }, strict) },
    strict,
  ),
  Type.Object(
    { type: Type.Literal("report"), payload: Type.Object({ report_id: Type.String({ minLength: 1, maxLength: 64 }), event: ReportEvent }, strict) },
    strict,
  ),
  Type.Object({ type: Type.Literal("skill_report"), payload: SkillReport }, strict),
]);
export type DaemonFrame = Static<typeof DaemonFrame>;
