import { gunzipSync } from "node:zlib";

/*
 * Reads a skill archive into its files, without native code: a small ustar/pax reader over gunzip. svc
 * serves only archives it wrote itself (a .tar.gz of the files it checked and listed, whatever format was
 * uploaded; docs/skills.md), so svcd never interprets the names of an uploaded archive. svcd checks the
 * digest before this runs, and the path rules are applied again here (files and folders only, no path
 * leaving the skill's folder, bounded sizes) so a bug or a tampered store can never write outside the
 * install folder.
 */

export interface UnpackedFile {
  /** Relative to the skill's folder (the archive's top folder, when it has one, is removed). */
  path: string;
  data: Buffer;
  executable: boolean;
}

const MAX_ENTRIES = 1000;
const MAX_EXTRACTED_BYTES = 100 * 1024 * 1024;
const SKILL_MD = "SKILL.md";
const MAC_METADATA = "__MACOSX";

interface Entry {
  name: string;
  kind: "file" | "directory";
  data: Buffer;
  mode: number;
}

export function unpackSkill(bytes: Buffer): UnpackedFile[] {
  if (!isGzip(bytes)) fail("the archive is not a .tar.gz, the only format svc serves skills in");
  const entries = readTar(gunzipSync(bytes, { maxOutputLength: MAX_EXTRACTED_BYTES + 8 * 1024 * 1024 }));
  if (entries.length > MAX_ENTRIES) fail(`the archive has more than ${MAX_ENTRIES} entries`);
  const files: Entry[] = [];
  const tops = new Set<string>();
  let total = 0;
  for (const entry of entries) {
    const path = normalize(entry.name);
    if (path === "" || path.split("/")[0] === MAC_METADATA) continue;
    tops.add(path.split("/")[0]!);
    if (entry.kind === "directory") continue;
    total += entry.data.length;
    if (total > MAX_EXTRACTED_BYTES) fail("the archive extracts to more than 100 MiB");
    files.push({ ...entry, name: path });
  }
  const names = new Set(files.map((f) => f.name));
  const [top] = tops;
  const prefix = names.has(SKILL_MD) ? "" : tops.size === 1 && names.has(`${top}/${SKILL_MD}`) ? `${top}/` : fail(`no ${SKILL_MD} at the archive's root or in its single top folder`);
  return files.map((f) => ({ path: f.name.slice(prefix.length), data: f.data, executable: (f.mode & 0o111) !== 0 }));
}

function fail(message: string): never {
  throw new Error(message);
}

const isGzip = (b: Buffer) => b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;

/** The entry's path relative to the archive's root; anything that could leave it is refused. */
function normalize(raw: string): string {
  let path = raw;
  while (path.startsWith("./")) path = path.slice(2);
  if (path.endsWith("/")) path = path.slice(0, -1);
  if (path === "" || path === ".") return "";
  const shown = JSON.stringify(raw.slice(0, 200));
  if (/[\u0000-\u001f\u007f\\]/.test(path)) fail(`entry ${shown} has a control character or a backslash in its name`);
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path)) fail(`entry ${shown} has an absolute path`);
  if (path.split("/").some((s) => s === "" || s === "." || s === "..")) fail(`entry ${shown} has an empty, "." or ".." segment`);
  return path;
}

// ---- tar (ustar, GNU long names, pax path records) ----

function readTar(tar: Buffer): Entry[] {
  const entries: Entry[] = [];
  let offset = 0;
  let longName: string | undefined;
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const size = tarNumber(header.subarray(124, 136));
    const type = String.fromCharCode(header[156] || 0x30);
    const data = tar.subarray(offset + 512, offset + 512 + size);
    if (data.length !== size) fail("the tar archive is truncated");
    offset += 512 + Math.ceil(size / 512) * 512;
    if (type === "L") {
      longName = cString(data);
      continue;
    }
    if (type === "x") {
      longName = paxPath(data) ?? longName;
      continue;
    }
    if (type === "g") continue;
    const prefix = header.subarray(257, 262).toString("latin1") === "ustar" ? cString(header.subarray(345, 500)) : "";
    const name = longName ?? (prefix ? `${prefix}/${cString(header.subarray(0, 100))}` : cString(header.subarray(0, 100)));
    longName = undefined;
    const mode = tarNumber(header.subarray(100, 108));
    if (type === "0" || type === "7") entries.push({ name, kind: "file", data, mode });
    else if (type === "5") entries.push({ name, kind: "directory", data: Buffer.alloc(0), mode });
    else fail(`entry ${JSON.stringify(name.slice(0, 200))} is not a file or a folder`);
  }
  return entries;
}

function cString(bytes: Buffer): string {
  const end = bytes.indexOf(0);
  return bytes.subarray(0, end === -1 ? bytes.length : end).toString("utf8");
}

/** An octal field, or GNU's base-256 form (first byte 0x80) for large sizes. */
function tarNumber(field: Buffer): number {
  if (field[0]! & 0x80) {
    let value = 0;
    for (let i = 1; i < field.length; i++) value = value * 256 + field[i]!;
    return value;
  }
  const text = cString(field).trim();
  return text === "" ? 0 : parseInt(text, 8);
}

/** The `path` record of a pax extended header ("<length> path=<value>\n" records). */
function paxPath(data: Buffer): string | undefined {
  let offset = 0;
  let path: string | undefined;
  while (offset < data.length) {
    const space = data.indexOf(0x20, offset);
    if (space === -1) break;
    const length = parseInt(data.subarray(offset, space).toString("latin1"), 10);
    if (!(length > 0)) break;
    const record = data.subarray(space + 1, offset + length - 1).toString("utf8");
    const equals = record.indexOf("=");
    if (record.slice(0, equals) === "path") path = record.slice(equals + 1);
    offset += length;
  }
  return path;
}
