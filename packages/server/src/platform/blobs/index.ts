import type { BlobConfig } from "../../config.js";
import { createFileBlobStore } from "./file.js";
import { createS3BlobStore } from "./s3.js";

/**
 * Where file bytes live (artifacts today). The database holds the metadata and the key; the store
 * holds the bytes. Keys are relative paths svc generates (see `keys.ts`), never client input.
 */
export interface BlobStore {
  /** Stores `bytes` under `key`, replacing what was there; resolves once the bytes are durable. */
  put(key: string, bytes: Buffer, contentType: string): Promise<void>;
  /** The bytes under `key`, or null when there are none. */
  get(key: string): Promise<Buffer | null>;
  /** Removes `key`; removing a missing key is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Keys under `prefix` sorted ascending and strictly after `after`, at most `limit` of them, with
   * their last-modified times (the file store walks its directories, the S3 store pages through
   * ListObjectsV2). The orphan sweep works through it.
   */
  list(prefix: string, after: string | undefined, limit: number): Promise<BlobEntry[]>;
}

export interface BlobEntry {
  key: string;
  modifiedAt: Date;
}

/** The store the configuration names: files under the data directory (default) or an S3 bucket. */
export function createBlobStore(config: BlobConfig): BlobStore {
  return config.kind === "file" ? createFileBlobStore(config.dir) : createS3BlobStore(config);
}
