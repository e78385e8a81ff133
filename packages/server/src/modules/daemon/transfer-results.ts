import { eq } from "drizzle-orm";
import type { ProcessFinishedEvent, TransferOffer } from "@svc/protocol";
import { processes } from "../../db/schema/index.js";
import type { TransferMemory } from "../../db/schema/daemon.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { parseJsonWithin } from "../../platform/http/json-depth.js";
import { encodeId } from "../../platform/ids.js";
import { storableText } from "../../platform/storable.js";
import { findArtifact } from "../artifacts/store.js";
import type { PreparedBlocks, StoredContentBlock } from "../artifacts/service.js";
import type { ProcessRow } from "../../runtime/store/processes.js";
import type { ToolOutcome } from "../../runtime/store/tool-calls.js";
import { TRANSFER_LIMITS } from "../../runtime/tools/catalog-transfer.js";

/*
 * upload_file and download_file processes as the daemon sees them (offers) and as their calls end (results).
 * svcd runs a transfer as a process of its own (packages/daemon/src/transfer.ts): it prints one JSON line on
 * success and exits 0, or prints why it failed on stderr and exits 1. Unlike run_command, a transfer that
 * did not happen is a failed call. An upload's result is built from the artifact svc stored, not from what
 * the daemon printed: path, digest, a media_ref, size_bytes and content_type (reference docs/tools/built-in.mdx).
 */

type Db = AppDb | Tx;

/**
 * The offer's transfer members. `command` is what an svcd that predates transfers would run: it fails with
 * that reason instead of doing something else.
 */
export async function transferOffer(tx: Tx, process: ProcessRow): Promise<{ command: string; timeout_seconds: number; transfer: TransferOffer; preparation_error?: string }> {
  const kind = process.kind as TransferOffer["kind"];
  const timeout = kind === "upload" ? TRANSFER_LIMITS.uploadTimeoutSeconds : TRANSFER_LIMITS.downloadTimeoutSeconds;
  const base = {
    command: `echo "this svcd cannot run ${kind === "upload" ? "upload_file" : "download_file"}: update it" >&2; exit 2`,
    timeout_seconds: timeout,
  };
  const transfer = { kind, tool_call_id: encodeId("toolCall", process.toolCallId), timeout_seconds: timeout, max_bytes: TRANSFER_LIMITS.maxFileBytes };
  const memory = process.transfer?.memory;
  if (kind === "upload") return { ...base, transfer: { ...transfer, source: process.transfer?.source ?? "", ...(memory ? { allow_empty: true } : {}) } };
  if (memory) {
    // A memory download: svcd fetches the version read when the call was dispatched from the memory route.
    const content_path = `/api/v1/daemon/tool-calls/${encodeId("toolCall", process.toolCallId)}/memory/content`;
    return { ...base, transfer: { ...transfer, destination: process.transfer?.destination ?? "", digest: memory.digest ?? "", size_bytes: memory.size_bytes ?? 0, content_path } };
  }
  const artifactId = process.transfer?.artifact_id;
  const artifact = artifactId ? await findArtifact(tx, process.agentId, artifactId) : undefined;
  const named = { ...transfer, destination: process.transfer?.destination ?? "" };
  if (!artifact) return { ...base, transfer: named, preparation_error: "the artifact to download no longer exists" };
  return { ...base, transfer: { ...named, artifact_id: encodeId("artifact", artifact.id), digest: artifact.digest, size_bytes: artifact.sizeBytes } };
}

/** The call's result when the transfer ended within its initial wait. */
export async function transferFinished(db: Db, process: ProcessRow, event: ProcessFinishedEvent): Promise<{ outcome: ToolOutcome; prepared: PreparedBlocks }> {
  const done = (outcome: ToolOutcome, blocks: StoredContentBlock[]) => ({ outcome, prepared: { artifacts: [], blocks } });
  const base = { process_id: encodeId("process", process.id), state: event.state, done: true, exit_code: event.exit_code };
  const printed = event.state === "exited" && event.exit_code === 0 ? parseLine(event.result.stdout) : undefined;
  if (!printed) {
    const reason = failureOf(process, event);
    return done("failed", [{ type: "structured_data", value: { ...base, reason } }, { type: "text", text: reason }]);
  }
  if (process.kind === "download") {
    const value = { ...base, path: pathOf(process), destination: printed["destination"], digest: printed["digest"], size_bytes: printed["size_bytes"] };
    return done("succeeded", [{ type: "structured_data", value: storableValue(value) }]);
  }
  // The upload route recorded the artifact (or the memory version) on the process before svcd's transfer printed its line.
  const [fresh] = await db.select({ transfer: processes.transfer }).from(processes).where(eq(processes.id, process.id));
  const memory = fresh?.transfer?.memory;
  if (memory) {
    if (!memory.digest) {
      const reason = "the daemon reported the upload done, but svc wrote no memory file for this call";
      return done("failed", [{ type: "structured_data", value: { ...base, reason } }, { type: "text", text: reason }]);
    }
    const value = { ...base, path: memoryPathOf(memory), digest: memory.digest, version: memory.version, size_bytes: memory.size_bytes, source: printed["source"] };
    return done("succeeded", [{ type: "structured_data", value: storableValue(value) }]);
  }
  const artifact = fresh?.transfer?.artifact_id ? await findArtifact(db, process.agentId, fresh.transfer.artifact_id) : undefined;
  if (!artifact) {
    const reason = "the daemon reported the upload done, but svc holds no file for this call";
    return done("failed", [{ type: "structured_data", value: { ...base, reason } }, { type: "text", text: reason }]);
  }
  const artifactId = encodeId("artifact", artifact.id);
  const value = {
    ...base,
    path: `/artifacts/${artifactId}`,
    digest: artifact.digest,
    media_ref: { type: "media_ref", artifact_id: artifactId },
    size_bytes: artifact.sizeBytes,
    content_type: artifact.contentType,
    filename: artifact.filename,
    source: printed["source"],
  };
  // The file appears in the conversation as the result's media_ref; its bytes stay out of the model's context.
  return done("succeeded", [{ type: "structured_data", value: storableValue(value) }, { type: "media_ref", artifact_id: artifactId, exclude_from_model_context: true }]);
}

/** A transfer still running when its initial wait ended (a slow download): its process_id, for the process tools. */
export function transferStarted(process: ProcessRow): PreparedBlocks {
  const value = {
    process_id: encodeId("process", process.id),
    state: "running",
    done: false,
    exit_code: null,
    ...(process.kind === "download"
      ? { path: pathOf(process), destination: process.transfer?.destination ?? "" }
      : { path: process.transfer?.memory ? memoryPathOf(process.transfer.memory) : "/artifacts", source: process.transfer?.source ?? "" }),
    note: "The transfer is still running. read_process with this process_id waits for its end (its output is the result line); stop_process stops it.",
  };
  return { artifacts: [], blocks: [{ type: "structured_data", value: storableValue(value) }] };
}

function failureOf(process: ProcessRow, event: ProcessFinishedEvent): string {
  const what = process.kind === "upload" ? "upload_file" : "download_file";
  if (event.state === "killed") return `${what} was stopped before it finished (stop_process, or the call was canceled).`;
  const said = storableText(event.result.stderr).trim().slice(0, 2000);
  if (event.state === "exited" && said) return `${what} failed: ${said}`;
  return `${what} failed: ${storableText(event.reason).trim() || `the transfer ended ${event.state} with exit code ${event.exit_code ?? "none"}`}`;
}

/** The last non-empty stdout line as a JSON object, or undefined. */
function parseLine(stdout: string): Record<string, unknown> | undefined {
  const line = stdout.trim().split("\n").pop() ?? "";
  try {
    const value = parseJsonWithin(line);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const artifactPathOf = (artifactId: string | undefined) => (artifactId ? `/artifacts/${encodeId("artifact", artifactId)}` : "");
const memoryPathOf = (memory: TransferMemory) => `/memory/${memory.store_name}/${memory.path}`;
/** The svc-side path of a download: its memory file, or its artifact. */
const pathOf = (process: ProcessRow) => (process.transfer?.memory ? memoryPathOf(process.transfer.memory) : artifactPathOf(process.transfer?.artifact_id));

/** What the daemon printed is machine text (paths): made storable before it enters the timeline. */
function storableValue(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, typeof v === "string" ? storableText(v) : v]));
}
