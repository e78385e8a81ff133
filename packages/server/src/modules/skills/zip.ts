import yauzl, { type Entry, type ZipFile } from "yauzl";
import { AppError } from "../../platform/errors.js";
import { archiveError, decodeEntryName, type ArchiveChecker, type EntryKind } from "./archive-rules.js";

/** Receives each accepted file's path, its bytes (already counted by the checker) and its executable bit. */
export type FileVisitor = (path: string, data: AsyncIterable<Buffer>, executable: boolean) => Promise<void>;

const S_IFMT = 0o170000;
const UNIX_KINDS: Record<number, EntryKind> = { 0o120000: "link", 0o020000: "device", 0o060000: "device", 0o010000: "device", 0o140000: "device" };
const MADE_BY_UNIX = 3;
/** Info-ZIP Unicode Path: a second name for an entry, which some readers use and others ignore. */
const UNICODE_PATH_FIELD = 0x7075;

/**
 * Reads a zip with yauzl, one entry at a time. Names are decoded here (yauzl's own checks are turned off
 * so that the checker gives every refusal in the same words) and sizes are validated by yauzl against what
 * the entry declared, so an entry cannot inflate past its declared size.
 */
export async function readZip(bytes: Buffer, checker: ArchiveChecker, visit?: FileVisitor): Promise<void> {
  const zip = await openZip(bytes);
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on("error", (err: Error) => reject(corrupt(err)));
      zip.on("end", () => resolve());
      zip.on("entry", (entry: Entry) => {
        readEntry(zip, entry, checker, visit).then(() => zip.readEntry(), reject);
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
}

function openZip(bytes: Buffer): Promise<ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(bytes, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true }, (err, zip) => {
      if (err || !zip) reject(corrupt(err ?? new Error("no zip")));
      else resolve(zip);
    });
  });
}

async function readEntry(zip: ZipFile, entry: Entry, checker: ArchiveChecker, visit?: FileVisitor): Promise<void> {
  const name = entryName(entry);
  const path = checker.begin(name, kindOf(entry, name), entry.uncompressedSize);
  if (path === null) return;
  if (entry.isEncrypted()) throw archiveError(`entry "${path}" is encrypted`);
  const stream = await openStream(zip, entry);
  const data = counted(stream, checker, path);
  if (visit) await visit(path, data, (unixMode(entry) & 0o111) !== 0);
  else for await (const _chunk of data) void _chunk;
}

/**
 * The entry's UTF-8 name. A Unicode Path field is accepted only when it repeats that name byte for byte
 * (what Info-ZIP writes for UTF-8 names); one naming the entry otherwise would give it a second name.
 * Backslashes are read as separators, as yauzl reads them: some Windows tools (PowerShell 5's
 * Compress-Archive) write them, and the zip format allows only `/` in names.
 */
function entryName(entry: Entry): string {
  const raw = entry.fileName as unknown as Buffer;
  const name = decodeEntryName(raw).replaceAll("\\", "/");
  for (const field of entry.extraFields) {
    if (field.id !== UNICODE_PATH_FIELD) continue;
    const version = field.data[0];
    const unicodeName = field.data.subarray(5);
    if (version !== 1 || field.data.length < 5 || !unicodeName.equals(raw)) {
      throw archiveError(`entry "${name}" has an Info-ZIP Unicode Path field (0x7075) naming it something else; create the archive again without it`);
    }
  }
  return name;
}

/** The Unix mode bits, when the entry was made on Unix (other systems keep DOS attributes there). */
function unixMode(entry: Entry): number {
  return entry.versionMadeBy >> 8 === MADE_BY_UNIX ? entry.externalFileAttributes >>> 16 : 0;
}

function kindOf(entry: Entry, name: string): EntryKind {
  const type = unixMode(entry) & S_IFMT;
  if (type !== 0 && UNIX_KINDS[type]) return UNIX_KINDS[type]!;
  return name.endsWith("/") ? "directory" : "file";
}

function openStream(zip: ZipFile, entry: Entry): Promise<NodeJS.ReadableStream> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (err, stream) => {
      if (err || !stream) reject(corrupt(err ?? new Error("no stream")));
      else resolve(stream);
    });
  });
}

/** The entry's bytes, each chunk counted before it is passed on; a stream error is the archive's fault. */
async function* counted(stream: NodeJS.ReadableStream, checker: ArchiveChecker, path: string): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of stream) {
      checker.data(path, chunk as Buffer);
      yield chunk as Buffer;
    }
  } catch (err) {
    throw err instanceof AppError ? err : corrupt(err);
  }
}

function corrupt(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const detail = err instanceof Error ? err.message.slice(0, 200) : "unreadable";
  return archiveError(`it is not a valid zip file (${detail})`);
}
