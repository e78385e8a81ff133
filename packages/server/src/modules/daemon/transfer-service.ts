import { basename } from "node:path";
import type { Database } from "../../platform/db/index.js";
import { AppError, conflict, forbidden, invalidRequest, notFound } from "../../platform/errors.js";
import type { DaemonPrincipal } from "../../platform/http/auth.js";
import { encodeId } from "../../platform/ids.js";
import type { ArtifactsService, ArtifactRow } from "../artifacts/service.js";
import { contentTypeOf } from "../artifacts/file-types.js";
import { TRANSFER_LIMITS } from "../../runtime/tools/catalog-transfer.js";
import * as store from "./transfer-store.js";
import type { MemoryPort } from "../../runtime/tools/files/memory.js";
import { findVersion } from "../memory-stores/store.js";

/*
 * The daemon's side of upload_file and download_file (reference openapi.yaml: uploadDaemonArtifact,
 * downloadDaemonArtifact). svcd's transfer process posts a machine file to its tool call, or fetches the
 * artifact its call names. A daemon reaches only the tool calls whose process runs on its own machine (any
 * other is not found, as is a call of the other transfer kind), and only while that process is running
 * and its call was not canceled (403 after). An upload is stored once per call.
 */

export const MAX_TRANSFER_BYTES = TRANSFER_LIMITS.maxFileBytes;

export function createTransferService(deps: { db: Database; artifacts: ArtifactsService; memory: MemoryPort }) {
  const { db, artifacts, memory } = deps;

  /** The transfer a route may act on, or the refusal the route answers with. */
  function usable(found: store.TransferRow | undefined, kind: "upload" | "download"): store.TransferRow {
    if (!found || found.process.kind !== kind) throw notFound("tool call");
    const { process } = found;
    if (process.state !== "running") throw forbidden(`this tool call's ${kind} is not running (its process is ${process.state}); it takes no transfer now`);
    if (found.callState === "completed" && found.callOutcome !== "succeeded") throw forbidden(`this tool call ended (${found.callOutcome}); it takes no transfer now`);
    return found;
  }

  /** Stores the file as an artifact of the call's agent (or its memory file) and records it on the process. */
  async function upload(daemon: DaemonPrincipal, toolCallId: string, filename: string, bytes: Buffer): Promise<{ artifact_id?: string; path?: string; digest?: string }> {
    const found = usable(await store.findTransfer(db.read, daemon.machineId, toolCallId), "upload");
    if (found.process.transfer?.memory) return uploadToMemory(daemon, toolCallId, bytes);
    if (bytes.length === 0) throw invalidRequest("the file is empty; artifacts must be non-empty");
    if (bytes.length > MAX_TRANSFER_BYTES) throw new AppError("request_too_large", `the file is larger than ${MAX_TRANSFER_BYTES} bytes (10 MiB)`);
    // Only a name: a path a daemon sends never becomes part of it.
    const name = basename(filename);
    if (name === "" || name === "." || name === "..") throw invalidRequest("filename must name a file");
    usable(await store.findTransfer(db.read, daemon.machineId, toolCallId), "upload");
    // The bytes are stored before the transaction (no blob write inside one); a refusal there deletes them.
    const pending = await artifacts.prepareFile(bytes, contentTypeOf(name, bytes), name);
    try {
      await db.tx(async (tx) => {
        const { process, projectId } = usable(await store.findTransfer(tx, daemon.machineId, toolCallId, true), "upload");
        if (process.transfer?.artifact_id) throw conflict(`this tool call already uploaded its file (${encodeId("artifact", process.transfer.artifact_id)})`);
        await artifacts.recordArtifacts(tx, { artifacts: [pending], blocks: [] }, { orgId: process.orgId, projectId, agentId: process.agentId });
        await store.setUploadedArtifact(tx, process.id, pending.id);
      });
    } catch (err) {
      await artifacts.discardFile(pending);
      throw err;
    }
    return { artifact_id: encodeId("artifact", pending.id) };
  }

  /** The artifact the download call names, with its bytes; any other artifact is not found. */
  async function download(daemon: DaemonPrincipal, toolCallId: string, artifactId: string): Promise<{ row: ArtifactRow; bytes: Buffer }> {
    const { process } = usable(await store.findTransfer(db.read, daemon.machineId, toolCallId), "download");
    if (process.transfer?.artifact_id !== artifactId) throw notFound("artifact");
    const row = await artifacts.findAgentArtifact(process.agentId, artifactId);
    if (!row) throw notFound("artifact");
    return { row, bytes: await artifacts.artifactBytes(row) };
  }

  /**
   * An upload into a memory store (issue 31): UTF-8 text without NUL, written as the file's next version
   * attributed to the call's agent and tool call, once per call: the version and its mark on the process
   * commit together, so a repeated post is a 409 and writes nothing.
   */
  async function uploadToMemory(daemon: DaemonPrincipal, toolCallId: string, bytes: Buffer): Promise<{ path: string; digest: string }> {
    if (bytes.length > MAX_TRANSFER_BYTES) throw new AppError("request_too_large", `the file is larger than ${MAX_TRANSFER_BYTES} bytes (10 MiB)`);
    let content: string;
    try {
      content = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
    } catch {
      throw invalidRequest("the file is not UTF-8 text; memory files are text");
    }
    if (content.includes("\u0000")) throw invalidRequest("the file contains NUL bytes; memory files are text without NUL");
    return db.tx(async (tx) => {
      const { process, projectId } = usable(await store.findTransfer(tx, daemon.machineId, toolCallId, true), "upload");
      const target = process.transfer!.memory!;
      if (target.digest) throw conflict("this tool call already uploaded its file");
      const change = { storeId: target.store_id, path: target.path, mode: "replace" as const, content, agentId: process.agentId, toolCallId: process.toolCallId };
      const written = await memory.write(tx, process.orgId, projectId, target.expected_digest !== undefined ? { ...change, expectedDigest: target.expected_digest } : change);
      if (!written.ok && written.reason === "conflict") throw new AppError("file_content_conflict", written.message, written.currentDigest ? { currentDigest: written.currentDigest } : {});
      if (!written.ok) throw conflict(written.message);
      await store.setUploadedMemory(tx, process.id, { ...target, digest: written.digest, version: written.version, size_bytes: written.sizeBytes });
      return { path: `/memory/${target.store_name}/${target.path}`, digest: written.digest };
    });
  }

  /** The memory file version the download call names (the one current when it was dispatched), as bytes. */
  async function downloadMemory(daemon: DaemonPrincipal, toolCallId: string): Promise<Buffer> {
    const { process } = usable(await store.findTransfer(db.read, daemon.machineId, toolCallId), "download");
    const target = process.transfer?.memory;
    if (!target?.memory_id || target.version === undefined) throw notFound("memory file");
    const version = await findVersion(db.read, target.memory_id, target.version);
    if (!version || version.content === null) throw notFound("memory file");
    return Buffer.from(version.content, "utf8");
  }

  return { upload, download, downloadMemory };
}

export type TransferService = ReturnType<typeof createTransferService>;
