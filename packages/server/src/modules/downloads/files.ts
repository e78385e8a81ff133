import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/*
 * The package tarballs svc serves (docs/machines.md "Install svcd", docs/cli.md, docs/sdk.md): built by
 * `npm run build` into each workspace's dist/download/ (scripts/download-package.mjs). Read from disk on
 * each request, so a rebuild while svc runs is served at once; the digest is computed again only when the
 * file changed.
 */

/** packages/, found from this file in src/ and in dist/ alike (both sit at the same depth). */
const PACKAGES = join(dirname(fileURLToPath(import.meta.url)), "../../../..");

/** The public file names, and where each one is built. */
export const DOWNLOADS: Readonly<Record<string, string>> = {
  "svcd.tgz": "daemon/dist/download/svcd.tgz",
  "svc-cli.tgz": "cli/dist/download/svc-cli.tgz",
  "svc-sdk.tgz": "sdk/dist/download/svc-sdk.tgz",
};

export interface Download {
  bytes: Buffer;
  /** Lowercase hex SHA-256 of the bytes. */
  sha256: string;
}

export type DownloadReader = (name: string) => Promise<Download | undefined>;

/** Reads the named download (undefined when unknown or not built), remembering digests by size and modification time. */
export function downloadReader(root: string = PACKAGES): DownloadReader {
  const digests = new Map<string, { size: number; mtimeMs: number; sha256: string }>();
  return async (name) => {
    // Own names only: `constructor` or `__proto__` in the path must not reach Object.prototype.
    const relative = Object.hasOwn(DOWNLOADS, name) ? DOWNLOADS[name] : undefined;
    if (!relative) return undefined;
    const path = join(root, relative);
    const found = await stat(path).catch(() => undefined);
    if (!found?.isFile()) return undefined;
    const bytes = await readFile(path);
    const known = digests.get(name);
    if (known && known.size === found.size && known.mtimeMs === found.mtimeMs) return { bytes, sha256: known.sha256 };
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    digests.set(name, { size: found.size, mtimeMs: found.mtimeMs, sha256 });
    return { bytes, sha256 };
  };
}
