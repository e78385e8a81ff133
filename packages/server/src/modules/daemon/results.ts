import type { ArtifactsService, PreparedBlocks } from "../artifacts/service.js";
import { encodeId } from "../../platform/ids.js";
import { storableText } from "../../platform/storable.js";
import type { ProcessRow } from "../../runtime/store/processes.js";
import type { ToolOutcome } from "../../runtime/store/tool-calls.js";
import { OVERFLOW_BYTES, previewOf, saveAsArtifact } from "../../runtime/tools/overflow.js";
import type { ProcessFinishedEvent } from "./schemas.js";

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
  const value = {
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
  const size = Buffer.byteLength(JSON.stringify(value), "utf8");
  if (size <= OVERFLOW_BYTES) return { outcome, prepared: await artifacts.prepareContentBlocks([{ type: "structured_data", value }], TEXT) };

  const full = `$ ${process.command}\n\n## stdout\n${stdout}\n\n## stderr\n${stderr}\n`;
  const { stored, ref } = await saveAsArtifact(artifacts, full, "text/plain", `${value.process_id}-output.txt`);
  const preview = { ...value, output: previewOf(stdout), stderr: previewOf(stderr), truncated: true, artifact: ref };
  const marker = await artifacts.prepareContentBlocks([{ type: "structured_data", value: preview }], TEXT);
  return { outcome, prepared: { artifacts: stored.artifacts, blocks: [...marker.blocks, ...stored.blocks] } };
}
