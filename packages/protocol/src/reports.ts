import { Type, type Static } from "typebox";
import { PublicId, strict } from "./fields.js";

/*
 * What svcd reports on the runtime's socket: a process's start and end, an action's outcome (each in a
 * `report` frame, kept in svcd's outbox until svc acknowledges it), and a skill install's end. svc
 * validates every frame against these schemas.
 */

const Output = Type.String({ maxLength: 256 * 1024 });
const Cursor = Type.Integer({ minimum: 0 });
const ExitCode = Type.Union([Type.Integer({ minimum: -2147483648, maximum: 2147483647 }), Type.Null()]);

/** A daemon's report of a process's end. Output is capped by svcd. */
export const ProcessFinishedEvent = Type.Object(
  {
    type: Type.Literal("process_finished"),
    process_id: PublicId("process"),
    state: Type.Union([Type.Literal("exited"), Type.Literal("failed"), Type.Literal("killed"), Type.Literal("unknown")]),
    exit_code: ExitCode,
    exit_signal: Type.Union([Type.String({ maxLength: 32 }), Type.Null()]),
    reason: Type.String({ maxLength: 4000 }),
    started_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
    ended_at: Type.String({ format: "date-time" }),
    result: Type.Object(
      {
        stdout: Output,
        stderr: Output,
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

/**
 * The initial wait ended with the process running: its run_command call returns with the output so far.
 * `*_cursor` is where the next read starts; `truncated` when retention dropped bytes before the cursor asked for.
 */
export const ProcessStartedEvent = Type.Object(
  {
    type: Type.Literal("process_started"),
    process_id: PublicId("process"),
    started_at: Type.String({ format: "date-time" }),
    observed_at: Type.String({ format: "date-time" }),
    result: Type.Object({ stdout: Output, stderr: Output, stdout_cursor: Cursor, stderr_cursor: Cursor, truncated: Type.Boolean() }, strict),
  },
  strict,
);
export type ProcessStartedEvent = Static<typeof ProcessStartedEvent>;

/** Where the process stands after an action, and what the action produced: output for a read, bytes for a write, the signal sent. */
export const ProcessActionResult = Type.Object(
  {
    process_state: Type.Union([Type.Literal("running"), Type.Literal("exited"), Type.Literal("failed"), Type.Literal("killed"), Type.Literal("unknown")]),
    exit_code: ExitCode,
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
);
export type ProcessActionResult = Static<typeof ProcessActionResult>;

/** An action's outcome: applied, failed (no effect), or unknown (it may have had its effect). */
export const ProcessActionEvent = Type.Object(
  {
    type: Type.Union([Type.Literal("process_action_applied"), Type.Literal("process_action_failed"), Type.Literal("process_action_unknown")]),
    process_id: PublicId("process"),
    process_action_id: PublicId("processAction"),
    reason: Type.Optional(Type.String({ maxLength: 4000 })),
    result: ProcessActionResult,
  },
  strict,
);
export type ProcessActionEvent = Static<typeof ProcessActionEvent>;

export const ReportEvent = Type.Union([ProcessFinishedEvent, ProcessStartedEvent, ProcessActionEvent]);
export type ReportEvent = Static<typeof ReportEvent>;

/** A report as svcd keeps it in its outbox and sends it until svc acknowledges `report_id`. */
export const Report = Type.Object({ report_id: Type.String({ minLength: 1, maxLength: 64 }), event: ReportEvent }, strict);
export type Report = Static<typeof Report>;

/** svcd's answer to a `skill_offer`: `path` is where the files went, `error` why they did not. */
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
