import { createHash } from "node:crypto";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import tarStream from "tar-stream";
import { ArchiveChecker, archiveError, sniffFormat, type ArchiveContents, type ArchiveFile, type ArchiveFormat } from "./archive-rules.js";
import { parseSkillMd, type SkillMd } from "./skill-md.js";
import { readTarGz } from "./tar.js";
import { readZip, type FileVisitor } from "./zip.js";

/** An archive that passed every check, ready to be stored as a revision. */
export interface CheckedArchive {
  bytes: Buffer;
  format: ArchiveFormat;
  /** `sha256:<hex>` of `bytes`. */
  digest: string;
  skillMd: SkillMd;
  files: ArchiveFile[];
}

async function walk(bytes: Buffer, visit?: FileVisitor): Promise<ArchiveContents> {
  const format = sniffFormat(bytes);
  const checker = new ArchiveChecker(format);
  if (format === "zip") await readZip(bytes, checker, visit);
  else await readTarGz(bytes, checker, visit);
  return checker.finish();
}

/**
 * Reads the whole archive and checks it (archive-rules.ts), then its SKILL.md (skill-md.ts). Throws a 400
 * for the first problem; nothing is stored before this has returned.
 */
export async function checkArchive(bytes: Buffer): Promise<CheckedArchive> {
  const contents = await walk(bytes);
  const skillMd = parseSkillMd(contents.skillMd, "/archive");
  if (contents.topFolder !== null && contents.topFolder !== skillMd.name) {
    throw archiveError(
      `the top folder "${contents.topFolder}" must be named as the skill, "${skillMd.name}" (the name in SKILL.md's front matter)`,
    );
  }
  return { bytes, format: contents.format, digest: digestOf(bytes), skillMd, files: contents.files };
}

/**
 * A new archive holding every file of `previous` with SKILL.md replaced: what an update that sends only
 * `skill_md` stores. It is always a .tar.gz with the files inside a folder named as the skill, whatever
 * the previous archive's format, so one writer serves both. The previous archive passed the same checks
 * when it was stored, so its files (at most 100 MiB) are held in memory while the new one is written.
 */
export async function replaceSkillMd(previous: Buffer, name: string, skillMd: SkillMd): Promise<CheckedArchive> {
  const kept: Array<{ path: string; bytes: Buffer }> = [];
  const contents = await walk(previous, async (path, data) => {
    const chunks: Buffer[] = [];
    for await (const chunk of data) chunks.push(chunk);
    kept.push({ path, bytes: Buffer.concat(chunks) });
  });
  const prefix = contents.topFolder === null ? "" : `${contents.topFolder}/`;
  const replacement = Buffer.from(skillMd.text, "utf8");
  const bytes = await writeTarGz(
    kept.map((file) => {
      const relative = file.path.slice(prefix.length);
      return { name: `${name}/${relative}`, bytes: relative === "SKILL.md" ? replacement : file.bytes };
    }),
  );
  const files = contents.files.map((f) => (f.path === "SKILL.md" ? { path: f.path, size: replacement.length } : f));
  return { bytes, format: "tar.gz", digest: digestOf(bytes), skillMd, files };
}

async function writeTarGz(files: ReadonlyArray<{ name: string; bytes: Buffer }>): Promise<Buffer> {
  const pack = tarStream.pack();
  const compressed: Buffer[] = [];
  const output = pipeline(pack, createGzip(), async (source: AsyncIterable<Buffer>) => {
    for await (const chunk of source) compressed.push(chunk);
  });
  for (const file of files) {
    await new Promise<void>((resolve, reject) => {
      pack.entry({ name: file.name, size: file.bytes.length, mode: 0o644 }, file.bytes, (err) => (err ? reject(err) : resolve()));
    });
  }
  pack.finalize();
  await output;
  return Buffer.concat(compressed);
}

export function digestOf(bytes: Buffer): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}
