/*
 * The daemon protocol's messages as svcd speaks them (docs/architecture.md, "The daemon protocol"; design
 * brief §7). HTTP bodies for bootstrap and registration, and JSON `{type, payload}` frames on the runtime's
 * WebSocket. The server validates every frame against its own schemas; svcd checks what it reads here.
 */

export interface BootstrapResponse {
  installation_id: string;
  machine_id: string;
}

export type ClaimPhase = "preparing" | "prepared" | "accepted" | "terminal";

export type ActionKind = "write" | "read" | "interrupt" | "terminate";

/** An action svcd has taken on: `effect_committed` (it may have had its effect) or `terminal` (its report is in the outbox). */
export interface ActionClaim {
  process_action_id: string;
  seq: number;
  action_kind: "write" | "interrupt" | "terminate";
  position: "effect_committed" | "terminal";
}

/** What svcd holds for one process when it registers a runtime: the server answers with a directive. */
export interface ProcessClaim {
  process_id: string;
  supervisor_instance_id: string;
  phase: ClaimPhase;
  supervisor_live: boolean;
  execution_committed: boolean;
  action_admission_closed: boolean;
  resolved_action_seq: number;
  actions: ActionClaim[];
}

export type Disposition = "close_preparation" | "start" | "retain" | "release";

/** svc's answer for one action: apply it now (never applied, or harmless to repeat), keep it, or forget it. */
export interface ActionDirective {
  process_action_id: string;
  seq: number;
  action_kind: ActionKind;
  disposition: "apply" | "retain" | "settle" | "release";
  payload?: ActionPayload;
}

export interface ProcessDirective {
  process_id: string;
  supervisor_instance_id: string;
  disposition: Disposition;
  actions: ActionDirective[];
}

export interface DaemonRuntime {
  id: string;
  machine_id: string;
  daemon_instance_id: string;
  state: "active" | "ended";
  next_heartbeat_after_ms: number;
}

export interface RegisterResponse {
  runtime: DaemonRuntime;
  reconciliation: { processes: ProcessDirective[] };
}

/** A command the server asks svcd to run. `preparation_error` set means: refuse it, report it failed. */
export interface ProcessOffer {
  process_id: string;
  io_mode: "pipe" | "pty";
  command: string;
  shell_selector: string;
  cwd: string;
  env: Record<string, string>;
  wait_ms: number;
  timeout_seconds: number;
  preparation_error?: string;
  /** upload_file or download_file: svcd runs this transfer (transfer.ts) instead of `command`. */
  transfer?: TransferOffer;
}

/** A file to move between this machine and svc through the tool call's daemon transfer routes. */
export interface TransferOffer {
  kind: "upload" | "download";
  tool_call_id: string;
  timeout_seconds: number;
  max_bytes: number;
  /** upload: the machine file, as the model gave it. */
  source?: string;
  /** download: the artifact, its digest and size, and the machine file to write, as the model gave it. */
  artifact_id?: string;
  digest?: string;
  size_bytes?: number;
  destination?: string;
}

/** What an action asks for; only the members of its kind are set. */
export interface ActionPayload {
  data?: string;
  close_stdin?: boolean;
  cursor?: number;
  stderr_cursor?: number;
  max_bytes?: number;
  wait_ms?: number;
}

export interface ActionOffer {
  process_id: string;
  process_action_id: string;
  action_kind: ActionKind;
  seq: number;
  payload: ActionPayload;
}

/** Output from a cursor: `*_cursor` is where the next read starts; `truncated` when retention dropped bytes before the cursor asked for. */
export interface OutputSlice {
  stdout: string;
  stderr: string;
  stdout_cursor: number;
  stderr_cursor: number;
  truncated: boolean;
}

/** The process was still running when its initial wait ended: the call returns with the output so far. */
export interface ProcessStarted {
  type: "process_started";
  process_id: string;
  started_at: string;
  observed_at: string;
  result: OutputSlice;
}

export interface ActionResult extends Partial<OutputSlice> {
  process_state: "running" | "exited" | "failed" | "killed" | "unknown";
  exit_code: number | null;
  bytes_written?: number;
  stdin_closed?: boolean;
  signal?: string;
}

export interface ProcessActionReport {
  type: "process_action_applied" | "process_action_failed" | "process_action_unknown";
  process_id: string;
  process_action_id: string;
  reason?: string;
  result: ActionResult;
}

export interface ProcessFinished {
  type: "process_finished";
  process_id: string;
  state: "exited" | "failed" | "killed" | "unknown";
  exit_code: number | null;
  exit_signal: string | null;
  reason: string;
  started_at: string | null;
  ended_at: string;
  result: { stdout: string; stderr: string; stdout_bytes: number; stderr_bytes: number; truncated: boolean };
}

export interface Report {
  report_id: string;
  event: ProcessFinished | ProcessStarted | ProcessActionReport;
}

export type AckStatus = "committed" | "cleanup_only" | "permanent_reject" | "transient_error";

/** svc asks for a skill revision's files (skills.ts); the token downloads its archive for a few minutes. */
export interface SkillOffer {
  request_id: string;
  skill_id: string;
  revision_id: string;
  skill_name: string;
  download_token: string;
  /** Unix seconds. */
  download_expires_at: number;
  digest: string;
}

export interface SkillReport {
  request_id: string;
  skill_id: string;
  state: "ready" | "failed";
  error?: string;
  /** Where the files are. */
  path?: string;
}

export type ServerFrame =
  | { type: "heartbeat_ack"; payload: { next_heartbeat_after_ms: number } }
  | { type: "process_offer"; payload: ProcessOffer }
  | { type: "process_accept_ack"; payload: { process_id: string; accepted: boolean; reason?: string } }
  | { type: "process_terminate"; payload: { process_id: string } }
  | { type: "action_offer"; payload: ActionOffer }
  | { type: "action_accept_ack"; payload: { process_id: string; process_action_id: string; accepted: boolean; reason?: string; process_state?: string } }
  | { type: "report_ack"; payload: { report_id: string; ack_status: AckStatus; error?: string } }
  | { type: "error"; payload: { error_code: string; error: string } }
  | { type: "runtime_ended"; payload: { error_code: string } }
  | { type: "skill_offer"; payload: SkillOffer };

export type DaemonFrame =
  | { type: "heartbeat"; payload: { daemon_instance_id: string } }
  | { type: "process_accept"; payload: { process_id: string } }
  | { type: "action_accept"; payload: { process_id: string; process_action_id: string } }
  | { type: "report"; payload: Report }
  | { type: "skill_report"; payload: SkillReport };

/** Why a runtime ended, when svcd must stop instead of reconnecting: its credential or machine is gone. */
export const FATAL_END_CODES: ReadonlySet<string> = new Set(["token_revoked", "machine_deleted", "superseded"]);

/** Reads a frame's envelope; anything else is dropped by the caller. */
export function parseServerFrame(text: string): ServerFrame | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { type, payload } = value as { type?: unknown; payload?: unknown };
  if (typeof type !== "string" || typeof payload !== "object" || payload === null) return undefined;
  return value as ServerFrame;
}
