import type { Database } from "../../platform/db/index.js";
import { AppError } from "../../platform/errors.js";
import type { MemoryPort, MemoryStoreFacts, MemoryWriteResult } from "../../runtime/tools/files/memory.js";
import { pathProblem } from "./paths.js";
import { MAX_MEMORY_BYTES } from "./schemas.js";
import { writeMemory } from "./service.js";
import * as store from "./store.js";

/**
 * The memory stores as the engine's file tools reach them (runtime/tools/files/memory.ts). Reads go to
 * the read handle outside any transaction; a write runs in the transaction that records the tool call's
 * result, so the new version and the recorded result commit together or not at all (issue 31, item 2).
 */
export function createMemoryPort(deps: { db: Database }): MemoryPort {
  const { db } = deps;
  return {
    async stores(orgId, projectId, storeIds) {
      const rows = await store.findStoresById(db.read, orgId, projectId, storeIds);
      return rows.map(
        (row): MemoryStoreFacts => ({
          storeId: row.id,
          name: row.name,
          description: row.description,
          writable: row.writable,
          memoryCount: row.memoryCount,
          sizeBytes: row.sizeBytes,
        }),
      );
    },

    async listFiles(storeId, prefix, take) {
      const rows = await store.listLivePaths(db.read, storeId, prefix, take);
      return rows.map((row) => ({ path: row.path, sizeBytes: row.sizeBytes, digest: row.digest, updatedAt: row.updatedAt }));
    },

    async readFile(storeId, path, tx) {
      const row = await store.findLiveByPath(tx ?? db.read, storeId, path);
      return row && { memoryId: row.id, version: row.currentVersion, path: row.path, sizeBytes: row.sizeBytes, digest: row.digest, updatedAt: row.updatedAt, content: row.content };
    },

    async write(tx, orgId, projectId, change): Promise<MemoryWriteResult> {
      const problem = pathProblem(change.path);
      if (problem) return { ok: false, reason: "refused", message: `the file path ${problem}` };
      // Locked first: writes to one store are serialized, so two agents' writes become consecutive versions.
      const memoryStore = await store.findStore(tx, orgId, projectId, change.storeId, "update");
      if (!memoryStore) return { ok: false, reason: "refused", message: "the memory store no longer exists" };
      let content = change.content;
      if (change.mode === "append") {
        const current = await store.findLiveByPath(tx, memoryStore.id, change.path);
        if (change.expectedDigest !== undefined && current?.digest !== change.expectedDigest) return conflictOf(current?.digest);
        content = (current?.content ?? "") + change.content;
      }
      if (Buffer.byteLength(content, "utf8") > MAX_MEMORY_BYTES) {
        return { ok: false, reason: "refused", message: `the file would be larger than ${MAX_MEMORY_BYTES / 1024 / 1024} MiB (${MAX_MEMORY_BYTES} bytes)` };
      }
      try {
        const input = { path: change.path, content, ...(change.expectedDigest !== undefined ? { expectedDigest: change.expectedDigest } : {}) };
        const before = await store.findMemoryByPath(tx, memoryStore.id, change.path);
        const { memory, created } = await writeMemory(tx, memoryStore, input, { kind: "agent", id: change.agentId, toolCallId: change.toolCallId });
        const changed = memory.currentVersion !== (before?.currentVersion ?? 0);
        return { ok: true, path: memory.path, digest: memory.digest, sizeBytes: memory.sizeBytes, version: memory.currentVersion, created, changed };
      } catch (err) {
        // writeMemory refuses before it writes anything, so the transaction goes on to record the failure.
        if (!(err instanceof AppError)) throw err;
        if (err.code === "file_content_conflict") return conflictOf(err.details.currentDigest);
        return { ok: false, reason: "refused", message: err.message };
      }
    },
  };
}

function conflictOf(currentDigest: string | undefined): MemoryWriteResult {
  return {
    ok: false,
    reason: "conflict",
    message: currentDigest
      ? `the file changed: its digest is now ${currentDigest}, not expected_digest. Read it again, reapply your change, and retry with the new digest.`
      : "the file does not exist, so it has no digest to expect. Leave expected_digest out to create it.",
    ...(currentDigest !== undefined ? { currentDigest } : {}),
  };
}
