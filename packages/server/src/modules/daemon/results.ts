import type { ProcessActionEvent, ProcessFinishedEvent, ProcessStartedEvent } from "@svc/protocol";
import type { ArtifactsService, PreparedBlocks } from "../artifacts/service.js";
import { encodeId } from "../../platform/ids.js";
import { storableText } from "../../platform/storable.js";
import type { ProcessRow } from "../../runtime/store/processes.js";
import type { ToolOutcome } from "../../runtime/store/tool-calls.js";
import { OVERFLOW_BYTES, previewOf, saveAsArtifact } from "../../runtime/tools/overflow.js";
import type { ProcessActionRow } from "../../runtime/store/processes.js";

/*
 * A finished process as its run_command call's result (the reference's shape: process_id, state, command,
 * output, done, exit_code, cursor; svc adds stderr and its own cursor). A command that exits is a
 * successful call whatever its exit code: the code is the answer. The overflow rule of other tools holds:
 * a result over 50 KiB is saved as an artifact and an 8 KiB preview of each stream returned.
 */

const TEXT = new Set(["text", "structured_data"] as const);

export async function finishedResult(artifacts: ArtifactsService, process: ProcessRow, event: ProcessFinishedEvent): Promise<{ outcome: ToolOutcome; prepared: PreparedBlocks }> {
  const outcome: ToolOutcome = event.state === "exited" ? "succeeded" : "failed";
  // Output is whatever bytes the command wrote; only storable text may enter svc.
  const stdout = storableText(event.result.stdout);
  const stderr = storableText(event.result.stderr);
  const value: Record<string, unknown> & { process_id: string } = {
    process_id: encodeId("process", process.id),
    state: event.state,
    command: process.command,
    output: stdout,
    stderr,
    done: true,
    exit_code: event.exit_code,
    exit_signal: event.exit_signal,
    cursor: event.result.stdout_bytes,
    stderr_cursor: event.result.stderr_bytes,
    truncated: event.result.truncated,
    ...(event.reason ? { reason: event.reason } : {}),
  };
  return { outcome, prepared: await withOverflow(artifacts, process, value, stdout, stderr) };
}

/**
 * A process still running when run_command's wait ended (the reference's early return): `state: running`,
 * `done: false`, the output so far, and cursors a read_process call continues from.
 */
export async function startedResult(artifacts: ArtifactsService, process: ProcessRow, event: ProcessStartedEvent): Promise<PreparedBlocks> {
  const stdout = storableText(event.result.stdout);
  const stderr = storableText(event.result.stderr);
  const value = {
    process_id: encodeId("process", process.id),
    state: "running",
    command: process.command,
    output: stdout,
    stderr,
    done: false,
    exit_code: null,
    exit_signal: null,
    cursor: event.result.stdout_cursor,
    stderr_cursor: event.result.stderr_cursor,
    truncated: event.result.truncated,
  };
  return withOverflow(artifacts, process, value, stdout, stderr);
}

/**
 * An action's report as its tool call's result. The process's state is svc's when svc knows its end,
 * else what the daemon saw. A read returns the output from the cursors and where the next read starts.
 */
export function actionResult(process: ProcessRow, action: ProcessActionRow, event: ProcessActionEvent): { outcome: ToolOutcome; blocks: unknown[] } {
  const ended = TERMINAL.has(process.state);
  const state = ended ? process.state : event.result.process_state;
  const r = event.result;
  const base = { process_id: encodeId("process", process.id), state, done: state !== "running", exit_code: ended ? process.exitCode : r.exit_code };
  if (event.type !== "process_action_applied") {
    const reason = event.reason || "the daemon could not apply it";
    return { outcome: "failed", blocks: [{ type: "structured_data", value: { ...base, reason } }, { type: "text", text: reason }] };
  }
  let value: Record<string, unknown>;
  if (action.kind === "read") {
    value = { ...base, output: storableText(r.stdout ?? ""), cursor: r.stdout_cursor ?? 0, stderr: storableText(r.stderr ?? ""), stderr_cursor: r.stderr_cursor ?? 0, truncated: r.truncated ?? false };
  } else if (action.kind === "write") {
    value = { ...base, bytes_written: r.bytes_written ?? 0, stdin_closed: r.stdin_closed ?? false };
  } else {
    value = { ...base, mode: action.kind, signal: r.signal ?? null, stopped: true };
  }
  return { outcome: "succeeded", blocks: [{ type: "structured_data", value }] };
}

const TERMINAL = new Set(["exited", "failed", "killed", "unknown"]);

async function withOverflow(artifacts: ArtifactsService, process: ProcessRow, value: Record<string, unknown> & { process_id: string }, stdout: string, stderr: string): Promise<PreparedBlocks> {
  const size = Buffer.byteLength(JSON.stringify(value), "utf8");
  if (size <= OVERFLOW_BYTES) return artifacts.prepareContentBlocks([{ type: "structured_data", value }], TEXT);

  const full = `$ ${process.command}\n\n## stdout\n${stdout}\n\n## stderr\n${stderr}\n`;
  const { stored, ref } = await saveAsArtifact(artifacts, full, "text/plain", `${value.process_id}-output.txt`);
  const preview = { ...value, output: previewOf(stdout), stderr: previewOf(stderr), truncated: true, artifact: ref };
  const marker = await artifacts.prepareContentBlocks([{ type: "structured_data", value: preview }], TEXT);
  return { artifacts: stored.artifacts, blocks: [...marker.blocks, ...stored.blocks] };
}
