import { Type, type Static, type TObjectOptions, type TSchema } from "typebox";
import { Free, strict, Uuid } from "./fields.js";
import { ActionOffer, ProcessOffer, SkillOffer } from "./offers.js";
import { Report, SkillReport } from "./reports.js";

/*
 * The runtime's WebSocket carries JSON `{type, payload}` frames of at most 1 MiB each way. svc validates every
 * frame svcd sends (`DaemonFrame`, strict); svcd reads the envelope of what svc sends (`ServerFrame`, open,
 * see offers.ts) and drops frames of a type it does not know.
 */

const Frame = <Name extends string, Payload extends TSchema>(type: Name, payload: Payload, options?: TObjectOptions) =>
  Type.Object({ type: Type.Literal(type), payload }, options);

/** Frames svcd sends on its runtime's socket. */
export const DaemonFrame = Type.Union([
  Frame("heartbeat", Type.Object({ daemon_instance_id: Uuid, observed_platform: Type.Optional(Free) }, strict), strict),
  Frame("process_accept", Type.Object({ process_id: Type.String({ maxLength: 64 }) }, strict), strict),
  Frame("action_accept", Type.Object({ process_id: Type.String({ maxLength: 64 }), process_action_id: Type.String({ maxLength: 64 }) }, strict), strict),
  Frame("report", Report, strict),
  Frame("skill_report", SkillReport, strict),
]);
export type DaemonFrame = Static<typeof DaemonFrame>;

/** How svc took a report: svcd drops it from its outbox unless the error was transient. */
export const AckStatus = Type.Union([Type.Literal("committed"), Type.Literal("cleanup_only"), Type.Literal("permanent_reject"), Type.Literal("transient_error")]);
export type AckStatus = Static<typeof AckStatus>;

/** Why a runtime may not go on, as `runtime_ended`'s error code; svcd stops for good on the first three. */
export const RuntimeEndCode = Type.Union([Type.Literal("token_revoked"), Type.Literal("machine_deleted"), Type.Literal("superseded"), Type.Literal("ended")]);
export type RuntimeEndCode = Static<typeof RuntimeEndCode>;

/** Frames svc sends on a runtime's socket. */
export const ServerFrame = Type.Union([
  Frame("heartbeat_ack", Type.Object({ next_heartbeat_after_ms: Type.Integer() })),
  Frame("process_offer", ProcessOffer),
  Frame("process_accept_ack", Type.Object({ process_id: Type.String(), accepted: Type.Boolean(), reason: Type.Optional(Type.String()) })),
  Frame("process_terminate", Type.Object({ process_id: Type.String() })),
  Frame("action_offer", ActionOffer),
  Frame(
    "action_accept_ack",
    Type.Object({
      process_id: Type.String(),
      process_action_id: Type.String(),
      accepted: Type.Boolean(),
      reason: Type.Optional(Type.String()),
      process_state: Type.Optional(Type.String()),
    }),
  ),
  Frame("report_ack", Type.Object({ report_id: Type.String(), ack_status: AckStatus })),
  Frame("error", Type.Object({ error_code: Type.String(), error: Type.String() })),
  Frame("runtime_ended", Type.Object({ error_code: RuntimeEndCode })),
  Frame("skill_offer", SkillOffer),
]);
export type ServerFrame = Static<typeof ServerFrame>;
