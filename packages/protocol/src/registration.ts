import { Type, type Static } from "typebox";
import { component, Free, NullableTimestamp, PublicId, strict, Timestamp, Uuid } from "./fields.js";
import { ActionKind, type ActionPayload } from "./offers.js";

/*
 * The HTTP bodies of bootstrap and registration. svc validates the request, serializes the responses and
 * documents all three in api/openapi.json from these schemas.
 */

export const BootstrapDaemonResponse = Type.Object(
  { installation_id: PublicId("installation"), machine_id: PublicId("machine") },
  { ...strict, ...component("BootstrapDaemonResponse") },
);
export type BootstrapDaemonResponse = Static<typeof BootstrapDaemonResponse>;

/** An action svcd has taken on: `effect_committed` (it may have had its effect) or `terminal` (its report is in the outbox). */
export const ProcessActionClaim = Type.Object(
  {
    process_action_id: Type.String({ minLength: 1, maxLength: 64 }),
    seq: Type.Integer({ minimum: 1 }),
    action_kind: Type.Union([Type.Literal("write"), Type.Literal("interrupt"), Type.Literal("terminate")]),
    position: Type.Union([Type.Literal("effect_committed"), Type.Literal("terminal")]),
  },
  { ...strict, ...component("ProcessActionReconciliationClaim") },
);
export type ProcessActionClaim = Static<typeof ProcessActionClaim>;

/** What svcd holds for one process when it registers a runtime: svc answers with a directive. */
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
  { ...strict, ...component("ProcessReconciliationClaim") },
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
  { ...strict, ...component("RegisterDaemonRuntimeRequest") },
);
export type RegisterDaemonRuntimeRequest = Static<typeof RegisterDaemonRuntimeRequest>;

export const Disposition = Type.Union([Type.Literal("close_preparation"), Type.Literal("start"), Type.Literal("retain"), Type.Literal("release")]);
export type Disposition = Static<typeof Disposition>;

/** svc's answer for an action svcd claims or svc had granted: apply it (never applied, or harmless to repeat), keep it, or forget it. */
export const ProcessActionDirective = Type.Object(
  {
    process_action_id: Type.String(),
    seq: Type.Integer({ minimum: 1 }),
    action_kind: ActionKind,
    disposition: Type.Union([Type.Literal("apply"), Type.Literal("retain"), Type.Literal("settle"), Type.Literal("release")]),
    // The contract documents an open object; what it holds is the action's payload, as in an action_offer.
    payload: Type.Optional(Type.Unsafe<ActionPayload>(Type.Object({}, { additionalProperties: true }))),
  },
  { ...strict, ...component("ProcessActionReconciliationDirective") },
);
export type ProcessActionDirective = Static<typeof ProcessActionDirective>;

export const ProcessDirective = Type.Object(
  { process_id: Type.String(), supervisor_instance_id: Type.String(), disposition: Disposition, actions: Type.Array(ProcessActionDirective) },
  { ...strict, ...component("ProcessReconciliationDirective") },
);
export type ProcessDirective = Static<typeof ProcessDirective>;

export const DaemonRuntime = Type.Object(
  {
    id: PublicId("daemonRuntime"),
    org_id: PublicId("org"),
    machine_id: PublicId("machine"),
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
  { ...strict, ...component("DaemonRuntime") },
);
export type DaemonRuntime = Static<typeof DaemonRuntime>;

export const RegisterDaemonRuntimeResponse = Type.Object(
  { runtime: DaemonRuntime, reconciliation: Type.Object({ processes: Type.Array(ProcessDirective) }, strict) },
  { ...strict, ...component("RegisterDaemonRuntimeResponse") },
);
export type RegisterDaemonRuntimeResponse = Static<typeof RegisterDaemonRuntimeResponse>;
