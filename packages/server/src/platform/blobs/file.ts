import { randomBytes } from "node:crypto";
import type { Dirent } from "node:fs";
import { mkdir, open, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { BlobEntry, BlobStore } from "./index.js";
import { assertBlobKey, isBlobKey } from "./keys.js";

/**
 * Blobs as files under `root` (`$SVC_DATA_DIR/blobs`). A write goes to a temporary file that is
 * flushed and then renamed into place, so a reader sees the whole blob or none of it, and a crash
 * never leaves a truncated blob under a real key. The content type is not kept: the artifact row has it.
 */
export function createFileBlobStore(root: string): BlobStore {
  const pathOf = (key: string) => join(root, assertBlobKey(key));

  return {
    async put(key, bytes) {
      const path = pathOf(key);
      await mkdir(dirname(path), { recursive: true });
      // The temporary name is itself a valid key: if the process dies before the rename, the orphan
      // sweep finds it like any other unreferenced blob.
      const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`;
      try {
        const file = await open(temporary, "wx");
        try {
          await file.writeFile(bytes);
          await file.sync();
        } finally {
          await file.close();
        }
        await rename(temporary, path);
      } catch (err) {
        await rm(temporary, { force: true });
        throw err;
      }
      await syncDirectory(dirname(path));
    },

    async get(key) {
      try {
        return await readFile(pathOf(key));
      } catch (err) {
        if (isMissing(err)) return null;
        throw err;
      }
    },

    async delete(key) {
      await rm(pathOf(key), { force: true });
    },

    async list(prefix, after, limit) {
      const out: BlobEntry[] = [];
      await walk(assertBlobKey(prefix));
      return out;

      async function walk(dirKey: string): Promise<void> {
        let entries: Dirent[];
        try {
          entries = await readdir(join(root, dirKey), { withFileTypes: true });
        } catch (err) {
          if (isMissing(err)) return;
          throw err;
        }
        // Sorted as the keys they lead to: a directory `d` holds keys `d/…`, which sort after a sibling `d-1`.
        const named = entries
          .filter((entry) => isBlobKey(entry.name) && (entry.isDirectory() || entry.isFile()))
          .map((entry) => ({ entry, key: `${dirKey}/${entry.name}`, order: entry.isDirectory() ? `${entry.name}/` : entry.name }))
          .sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
        for (const { entry, key } of named) {
          if (out.length >= limit) return;
          if (entry.isDirectory()) {
            // Every key inside sorts like `key/`: skip the directory when all of them come before `after`.
            if (after !== undefined && `${key}/` < after && !after.startsWith(`${key}/`)) continue;
            await walk(key);
          } else if (after === undefined || key > after) {
            // A file may be deleted between the listing and the stat; it is then simply not there.
            const info = await stat(join(root, key)).catch((err: unknown) => {
              if (isMissing(err)) return null;
              throw err;
            });
            if (info) out.push({ key, modifiedAt: info.mtime });
          }
        }
      }
    },
  };
}

function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === "ENOENT";
}

/** Makes the rename durable. Some platforms cannot fsync a directory; there the rename is as durable as it gets. */
async function syncDirectory(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, "r");
    await handle.sync();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "EISDIR" && code !== "EPERM" && code !== "EINVAL") throw err;
  } finally {
    await handle?.close();
  }
}
