import { isUuid } from "../ids.js";
import type { BlobStore } from "./index.js";

// Old enough that no request or step still writing its row can own the blob.
const ORPHAN_MIN_AGE_MS = 60 * 60 * 1000;
const SWEEP_BATCH = 500;

/**
 * A maintenance sweep of the blobs under `prefix` whose keys end in their row's id: each call takes the
 * next batch in key order (starting over after the last key) and deletes the blobs older than an hour
 * that `referenced` does not name: uploads whose transaction failed, temporary files of a crashed
 * write, and the bytes of deleted rows whose removal failed. Returns how many it deleted.
 */
export function orphanSweep(blobs: BlobStore, prefix: string, referenced: (ids: string[]) => Promise<Set<string>>): () => Promise<number> {
  let after: string | undefined;
  return async () => {
    const entries = await blobs.list(prefix, after, SWEEP_BATCH);
    after = entries.length === SWEEP_BATCH ? entries.at(-1)!.key : undefined;
    const cutoff = Date.now() - ORPHAN_MIN_AGE_MS;
    const old = entries.filter((e) => e.modifiedAt.getTime() < cutoff).map((e) => e.key);
    // Anything whose key does not end in an id (a temporary file) has no row by construction.
    const kept = await referenced(old.map((key) => key.slice(key.lastIndexOf("/") + 1)).filter(isUuid));
    let removed = 0;
    for (const key of old) {
      if (kept.has(key)) continue;
      await blobs.delete(key);
      removed += 1;
    }
    return removed;
  };
}
