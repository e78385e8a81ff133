import { AppError } from "../../platform/errors.js";

/*
 * What a skill archive may hold (issue 10): SKILL.md at the root or inside one top folder, plus supporting
 * files. Both readers (zip.ts, tar.ts) feed every entry through one `ArchiveChecker`, which enforces the
 * limits while the bytes stream, so nothing larger than the limits is ever inflated or kept in memory.
 */

const KiB = 1024;
const MiB = 1024 * KiB;
/** The upload itself; a larger one is a 413 at the HTTP edge. */
export const MAX_ARCHIVE_BYTES = 25 * MiB;
export const MAX_SKILL_MD_BYTES = 256 * KiB;
export const MAX_ENTRIES = 1000;
export const MAX_EXTRACTED_BYTES = 100 * MiB;
const MAX_PATH_LENGTH = 1024;
const SKILL_MD = "SKILL.md";
/** Finder's zip metadata folder: neither a top folder nor a supporting file. */
const MAC_METADATA = "__MACOSX";

export type ArchiveFormat = "zip" | "tar.gz";
export type EntryKind = "file" | "directory" | "link" | "device" | "other";

/** A file of the archive, relative to the skill's folder. */
export interface ArchiveFile {
  path: string;
  size: number;
}

export interface ArchiveContents {
  /** The single top folder the skill sits in, or null when SKILL.md is at the root. */
  topFolder: string | null;
  skillMd: Buffer;
  /** Sorted by path; SKILL.md included. */
  files: ArchiveFile[];
}

/** Refusal of an archive: a 400 whose issue points at the form field the archive came in. */
export function archiveError(message: string, field = "/archive"): AppError {
  return new AppError("validation_failed", `the skill archive was refused: ${message}`, { issues: [{ path: field, message }] });
}

/** The archive's format from its first bytes; the file name a client sent is not trusted. */
export function sniffFormat(bytes: Buffer): ArchiveFormat {
  if (bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && (bytes[2] === 3 || bytes[2] === 5) && (bytes[3] === 4 || bytes[3] === 6)) return "zip";
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) return "tar.gz";
  throw archiveError("it is neither a .zip nor a .tar.gz file");
}

/**
 * The checks every entry passes, in archive order. `begin` refuses a bad name or kind before any of
 * the entry's bytes are read; `data` counts them as they inflate and keeps only SKILL.md candidates.
 */
export class ArchiveChecker {
  private entries = 0;
  private extracted = 0;
  private readonly files = new Map<string, number>();
  private readonly names = new NameClashes();
  private readonly tops = new Set<string>();
  private readonly skillMds = new Map<string, Buffer[]>();

  /** Checks an entry's name and kind; returns its normalized path, or null for an entry to skip. */
  begin(rawName: string, kind: EntryKind, declaredSize: number): string | null {
    this.entries += 1;
    if (this.entries > MAX_ENTRIES) throw archiveError(`it has more than ${MAX_ENTRIES} entries`);
    const path = normalizePath(rawName);
    if (kind === "link") throw archiveError(`entry "${path}" is a link; links are not allowed`);
    if (kind === "device") throw archiveError(`entry "${path}" is a device or special file; only files and folders are allowed`);
    if (kind === "other") throw archiveError(`entry "${path}" is of an unsupported type; only files and folders are allowed`);
    if (path === "" || path.split("/")[0] === MAC_METADATA) return null;
    this.names.add(path, kind === "directory" ? "folder" : "file");
    this.tops.add(path.split("/")[0]!);
    if (kind === "directory") return null;
    if (this.extracted + declaredSize > MAX_EXTRACTED_BYTES) throw tooLarge();
    this.files.set(path, 0);
    if (this.isSkillMdCandidate(path)) this.skillMds.set(path, []);
    return path;
  }

  /** Counts `chunk` of the file at `path`, refusing as soon as a limit is passed. */
  data(path: string, chunk: Buffer): void {
    this.extracted += chunk.length;
    if (this.extracted > MAX_EXTRACTED_BYTES) throw tooLarge();
    const size = this.files.get(path)! + chunk.length;
    this.files.set(path, size);
    const kept = this.skillMds.get(path);
    if (!kept) return;
    if (size > MAX_SKILL_MD_BYTES) throw archiveError(`${path} is larger than ${MAX_SKILL_MD_BYTES / KiB} KiB`);
    kept.push(chunk);
  }

  /** The archive's layout once every entry was read: where SKILL.md is and the files relative to it. */
  finish(): ArchiveContents {
    const top = this.files.has(SKILL_MD) ? null : this.singleTop();
    const prefix = top === null ? "" : `${top}/`;
    const skillMd = this.skillMds.get(`${prefix}${SKILL_MD}`);
    if (!skillMd) throw archiveError(`no ${SKILL_MD} at the archive's root or inside its single top folder`);
    const files = [...this.files]
      .map(([path, size]) => ({ path: path.slice(prefix.length), size }))
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return { topFolder: top, skillMd: Buffer.concat(skillMd), files };
  }

  private singleTop(): string | null {
    const [top] = this.tops;
    return this.tops.size === 1 && this.files.has(`${top}/${SKILL_MD}`) ? top! : null;
  }

  /**
   * Only SKILL.md at the root and the first one a folder down are kept: a crafted archive with a SKILL.md
   * in each of a thousand folders must not be held in memory.
   */
  private isSkillMdCandidate(path: string): boolean {
    if (path === SKILL_MD) return true;
    const parts = path.split("/");
    return parts.length === 2 && parts[1] === SKILL_MD && ![...this.skillMds.keys()].some((p) => p !== SKILL_MD);
  }
}

function tooLarge(): AppError {
  return archiveError(`it extracts to more than ${MAX_EXTRACTED_BYTES / MiB} MiB`);
}

/**
 * An entry's path relative to the archive root, or a refusal: absolute paths, `..`, backslashes and
 * control characters never name a file. A leading `./` (what `tar -C dir .` writes) is dropped.
 */
export function normalizePath(raw: string): string {
  let path = raw;
  while (path.startsWith("./")) path = path.slice(2);
  if (path.endsWith("/")) path = path.slice(0, -1);
  const shown = JSON.stringify(raw.slice(0, 200));
  if (/[\u0000-\u001f\u007f]/.test(path)) throw archiveError(`entry ${shown} has control characters in its name`);
  if (path.length > MAX_PATH_LENGTH) throw archiveError(`entry ${shown} has a path longer than ${MAX_PATH_LENGTH} characters`);
  if (path.includes("\\")) throw archiveError(`entry ${shown} has a backslash in its path; archive paths use /`);
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path)) throw archiveError(`entry ${shown} has an absolute path`);
  if (path === "" || path === ".") return "";
  const segments = path.split("/");
  if (segments.includes("..")) throw archiveError(`entry ${shown} points outside the archive with ..`);
  if (segments.some((s) => s === "" || s === ".")) throw archiveError(`entry ${shown} has an empty or "." segment in its path`);
  return path;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * An entry's name from its raw bytes: UTF-8, whatever the archive's flags say (zip's UTF-8 flag is often
 * unset on UTF-8 names, and reading them as CP437 shows names no machine would write). Anything else is
 * refused rather than guessed, so the name svc shows is the name every reader finds.
 */
export function decodeEntryName(raw: Buffer): string {
  try {
    return strictUtf8.decode(raw);
  } catch {
    throw archiveError(`entry "${escapedBytes(raw.subarray(0, 200))}" has a name that is not UTF-8 (legacy encodings such as CP437 are refused); create the archive on a system that writes UTF-8 names`);
  }
}

/** Printable ASCII as is, every other byte as \xNN: how a name that is not text is shown. */
function escapedBytes(raw: Buffer): string {
  return [...raw].map((byte) => (byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c ? String.fromCharCode(byte) : `\\x${byte.toString(16).padStart(2, "0")}`)).join("");
}

type NameKind = "file" | "folder";

/**
 * One spelling and one kind per name, as a file system that ignores case and Unicode normalization
 * (macOS, Windows) would see it: two files whose names differ only in case, or a file `a` beside `a/b`,
 * would install as something else than the list svc shows, or not at all.
 */
class NameClashes {
  private readonly seen = new Map<string, { path: string; kind: NameKind }>();

  /** Records `path` and every folder above it, refusing the first clash with an earlier entry. */
  add(path: string, kind: NameKind): void {
    const segments = path.split("/");
    for (let i = 1; i < segments.length; i++) this.record(segments.slice(0, i).join("/"), "folder", path);
    this.record(path, kind, path);
  }

  private record(name: string, kind: NameKind, entry: string): void {
    const key = name.toUpperCase().toLowerCase().normalize("NFC");
    const earlier = this.seen.get(key);
    if (!earlier) {
      this.seen.set(key, { path: name, kind });
      return;
    }
    if (earlier.path !== name) {
      throw archiveError(`entry "${entry}" has "${name}", which differs from "${earlier.path}" only in case or Unicode normalization; file systems that ignore case would merge them`);
    }
    if (earlier.kind !== kind) throw archiveError(`entry "${entry}" makes "${name}" both a file and a folder`);
    if (kind === "file") throw archiveError(`entry "${entry}" appears twice`);
  }
}
