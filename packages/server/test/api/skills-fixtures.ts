import { crc32, deflateRawSync, gunzipSync, gzipSync } from "node:zlib";
import tarStream, { type Headers } from "tar-stream";
import { expect } from "vitest";
import type { BrowserSession } from "../support/client.js";

/** Archive builders for the skills tests: real .zip and .tar.gz bytes, including malicious ones, made in the test. */

export const SKILL_ID = /^skl_[a-z2-7]{26}$/;
export const REVISION_ID = /^skr_[a-z2-7]{26}$/;
export const GRANT_ID = /^skg_[a-z2-7]{26}$/;

export function skillMd(name: string, description = `Use when testing ${name}.`, body = "Follow these steps.\n"): string {
  return `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}`;
}

export interface ZipEntry {
  name: string;
  data?: Buffer | string;
  /** Unix mode bits for the external attributes (a symlink is 0o120777). */
  mode?: number;
  /** Declare a size other than the real one (a lying zip bomb). */
  declaredSize?: number;
  /** The name's bytes as written, instead of `name` in UTF-8; the UTF-8 flag is then left unset. */
  rawName?: Buffer;
  /** An Info-ZIP Unicode Path extra field (0x7075) in the central directory, naming the entry this. */
  unicodePath?: string;
}

/** The Info-ZIP Unicode Path extra field: version 1, the CRC-32 of the raw name, the UTF-8 name. */
function unicodePathField(rawName: Buffer, path: string): Buffer {
  const name = Buffer.from(path, "utf8");
  const field = Buffer.alloc(9);
  field.writeUInt16LE(0x7075, 0);
  field.writeUInt16LE(5 + name.length, 2);
  field.writeUInt8(1, 4);
  field.writeUInt32LE(crc32(rawName), 5);
  return Buffer.concat([field, name]);
}

/** A zip written by hand (deflate, Unix "made by"), so tests control names, modes and declared sizes. */
export function zip(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const data = Buffer.from(entry.data ?? "");
    const compressed = deflateRawSync(data);
    const name = entry.rawName ?? Buffer.from(entry.name, "utf8");
    const flags = entry.rawName ? 0 : 0x0800;
    const extra = entry.unicodePath === undefined ? Buffer.alloc(0) : unicodePathField(name, entry.unicodePath);
    const size = entry.declaredSize ?? data.length;
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(compressed.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(compressed.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt16LE(extra.length, 30);
    const mode = entry.mode ?? (entry.name.endsWith("/") ? 0o040755 : 0o100644);
    central.writeUInt32LE((mode << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, compressed);
    centrals.push(central, name, extra);
    offset += local.length + name.length + compressed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

export interface TarEntry extends Headers {
  data?: Buffer | string;
}

/** A .tar.gz through tar-stream's packer, which writes any header a test asks for (links, devices, odd names). */
export async function tarGz(entries: TarEntry[]): Promise<Buffer> {
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  const done = (async () => {
    for await (const chunk of pack) chunks.push(chunk);
  })();
  for (const { data, ...header } of entries) {
    const bytes = Buffer.from(data ?? "");
    await new Promise<void>((resolve, reject) =>
      pack.entry({ ...header, ...(header.type === "file" || header.type === undefined ? { size: bytes.length } : {}) }, bytes, (err) => (err ? reject(err) : resolve())),
    );
  }
  pack.finalize();
  await done;
  return gzipSync(Buffer.concat(chunks));
}

/** A well-formed skill folder `name/` with SKILL.md and one template, as files for either builder. */
export function skillFiles(name: string, md = skillMd(name)): Array<{ name: string; data: string }> {
  return [
    { name: `${name}/SKILL.md`, data: md },
    { name: `${name}/templates/example.md`, data: "# Example\n" },
  ];
}

export type Owner = { kind: "org" } | { kind: "project"; project_id: string } | { kind: "user" };
export type Auth = { token: string } | { session: BrowserSession };

/** Sends a multipart form as curl -F would; `owner` is a JSON text field, files are file parts. */
export async function sendForm(
  baseUrl: string,
  method: "POST",
  path: string,
  auth: Auth,
  fields: Record<string, string | { file: Buffer; filename?: string }>,
): Promise<{ status: number; body: any; text: string }> {
  const form = new FormData();
  for (const [key, value] of Object.entries(fields)) {
    if (typeof value === "string") form.append(key, value);
    else form.append(key, new Blob([value.file]), value.filename ?? "skill.zip");
  }
  const headers: Record<string, string> = {};
  if ("token" in auth) headers["authorization"] = `Bearer ${auth.token}`;
  else {
    headers["cookie"] = auth.session.cookie;
    headers["x-svc-csrf"] = auth.session.csrf;
    headers["origin"] = "http://svc.test";
  }
  const reply = await fetch(baseUrl + path, { method, headers, body: form });
  const text = await reply.text();
  return { status: reply.status, body: text && reply.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text, text };
}

/** Uploads `archive` for `owner` and expects a 201; returns the skill. */
export async function uploadSkill(baseUrl: string, auth: Auth, orgId: string, owner: Owner, archive: Buffer): Promise<any> {
  const reply = await sendForm(baseUrl, "POST", `/api/v1/orgs/${orgId}/skills`, auth, { owner: JSON.stringify(owner), archive: { file: archive } });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

/** A .zip of a fresh, valid skill called `name`. */
export const skillZip = (name: string, md?: string) => zip(skillFiles(name, md));

/** A .tar.gz of plain files whose header names are the given bytes, as no tar library would write them. */
export function rawTarGz(entries: Array<{ name: Buffer; data: string }>): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const data = Buffer.from(entry.data);
    const header = Buffer.alloc(512);
    entry.name.copy(header, 0);
    header.write("0000644\0", 100, "latin1");
    header.write(`${data.length.toString(8).padStart(11, "0")}\0`, 124, "latin1");
    header.write("00000000000\0", 136, "latin1");
    header.write("        ", 148, "latin1");
    header.write("0", 156, "latin1");
    header.write("ustar\u000000", 257, "latin1");
    const sum = header.reduce((total, byte) => total + byte, 0);
    header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "latin1");
    blocks.push(header, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  return gzipSync(Buffer.concat([...blocks, Buffer.alloc(1024)]));
}

/** The entries of a .tar.gz as tar-stream reads them: name, mode and text. */
export async function readTarGz(bytes: Buffer): Promise<Array<{ name: string; mode: number; data: string }>> {
  const extract = tarStream.extract();
  const entries: Array<{ name: string; mode: number; data: string }> = [];
  const reading = (async () => {
    for await (const entry of extract) {
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk);
      entries.push({ name: entry.header.name, mode: entry.header.mode ?? 0, data: Buffer.concat(chunks).toString("utf8") });
    }
  })();
  extract.end(gunzipSync(bytes));
  await reading;
  return entries;
}
