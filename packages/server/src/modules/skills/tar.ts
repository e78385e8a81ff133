import { Readable, Transform, type TransformCallback } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import tarStream, { type Headers } from "tar-stream";
import { AppError } from "../../platform/errors.js";
import { archiveError, decodeEntryName, MAX_ENTRIES, MAX_EXTRACTED_BYTES, type ArchiveChecker, type EntryKind } from "./archive-rules.js";
import type { FileVisitor } from "./zip.js";

/**
 * Everything a tar may hold besides file data: a header block per entry, long-name and pax records, and
 * padding. The gunzipped stream is cut off past the data limit plus this, so a gzip bomb stops inflating
 * there even when its tar headers hide the bytes (tar-stream buffers pax records in memory).
 */
const TAR_OVERHEAD = MAX_ENTRIES * 4 * 1024 + 64 * 1024;

const KINDS: Record<string, EntryKind> = {
  file: "file",
  "contiguous-file": "file",
  directory: "directory",
  symlink: "link",
  link: "link",
  "character-device": "device",
  "block-device": "device",
  fifo: "device",
};

/** Reads a gzip-compressed tar with tar-stream, entry by entry, as the checker allows. */
export async function readTarGz(bytes: Buffer, checker: ArchiveChecker, visit?: FileVisitor): Promise<void> {
  // Names come as bytes (one Latin-1 character per byte) so that decodeEntryName sees what the tar holds.
  const extract = tarStream.extract({ filenameEncoding: "latin1" });
  const feeding = pipeline(Readable.from([bytes]), createGunzip(), byteCap(MAX_EXTRACTED_BYTES + TAR_OVERHEAD), extract);
  // Observed below; without a handler here a failure while entries are read would be unhandled.
  feeding.catch(() => {});
  try {
    for await (const entry of extract) await readEntry(entry.header, entry, checker, visit);
    await feeding;
  } catch (err) {
    extract.destroy();
    throw err instanceof AppError ? err : notTarGz(err);
  }
}

async function readEntry(header: Headers, data: AsyncIterable<Buffer>, checker: ArchiveChecker, visit?: FileVisitor): Promise<void> {
  const path = checker.begin(entryName(header), KINDS[header.type ?? "file"] ?? "other", header.size ?? 0);
  if (path === null) {
    for await (const _chunk of data) void _chunk;
    return;
  }
  const counted = (async function* () {
    for await (const chunk of data) {
      checker.data(path, chunk);
      yield chunk;
    }
  })();
  if (visit) await visit(path, counted, ((header.mode ?? 0) & 0o111) !== 0);
  else for await (const _chunk of counted) void _chunk;
}

/**
 * The entry's UTF-8 name. A pax path record is UTF-8 by definition and tar-stream has decoded it, turning
 * bytes that are not UTF-8 into U+FFFD: such a name is refused as the header's own would be.
 */
function entryName(header: Headers & { pax?: Record<string, string> | null }): string {
  const paxPath = header.pax?.["path"];
  if (paxPath === undefined) return decodeEntryName(Buffer.from(header.name, "latin1"));
  if (paxPath.includes("\uFFFD")) throw archiveError(`entry ${JSON.stringify(paxPath.slice(0, 200))} has a name that is not UTF-8 (legacy encodings such as CP437 are refused)`);
  return paxPath;
}

function byteCap(limit: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      seen += chunk.length;
      if (seen > limit) done(archiveError(`it extracts to more than ${MAX_EXTRACTED_BYTES / 1024 / 1024} MiB`));
      else done(null, chunk);
    },
  });
}

function notTarGz(err: unknown): AppError {
  const detail = err instanceof Error ? err.message.slice(0, 200) : "unreadable";
  return archiveError(`it is not a valid .tar.gz file (${detail})`);
}
