import { createHash } from "node:crypto";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import tarStream from "tar-stream";
import { ArchiveChecker, archiveError, sniffFormat, type ArchiveContents, type ArchiveFile } from "./archive-rules.js";
import { parseSkillMd, type SkillMd } from "./skill-md.js";
import { readTarGz } from "./tar.js";
import { readZip, type FileVisitor } from "./zip.js";

/** An archive that passed every check, ready to be stored as a revision. */
export interface CheckedArchive {
  /** The archive svc stores and serves: see `normalized`. */
  bytes: Buffer;
  format: "tar.gz";
  /** `sha256:<hex>` of `bytes`. */
  digest: string;
  skillMd: SkillMd;
  files: ArchiveFile[];
}

interface KeptFile {
  bytes: Buffer;
  executable: boolean;
}

/** Reads and checks the archive, keeping each accepted file's bytes by its path. */
async function walk(bytes: Buffer): Promise<{ contents: ArchiveContents; kept: Map<string, KeptFile> }> {
  const checker = new ArchiveChecker();
  const kept = new Map<string, KeptFile>();
  const visit: FileVisitor = async (path, data, executable) => {
    const chunks: Buffer[] = [];
    for await (const chunk of data) chunks.push(chunk);
    kept.set(path, { bytes: Buffer.concat(chunks), executable });
  };
  if (sniffFormat(bytes) === "zip") await readZip(bytes, checker, visit);
  else await readTarGz(bytes, checker, visit);
  return { contents: checker.finish(), kept };
}

/**
 * Reads the whole archive and checks it (archive-rules.ts), then its SKILL.md (skill-md.ts). Throws a 400
 * for the first problem; nothing is stored before this has returned.
 */
export async function checkArchive(bytes: Buffer): Promise<CheckedArchive> {
  const { contents, kept } = await walk(bytes);
  const skillMd = parseSkillMd(contents.skillMd, "/archive");
  if (contents.topFolder !== null && contents.topFolder !== skillMd.name) {
    throw archiveError(
      `the top folder "${contents.topFolder}" must be named as the skill, "${skillMd.name}" (the name in SKILL.md's front matter)`,
    );
  }
  return normalized(contents, kept, skillMd);
}

/**
 * A new revision of a stored archive with SKILL.md replaced: what an update that sends only `skill_md`
 * stores. The previous archive passed the same checks when it was stored.
 */
export async function replaceSkillMd(previous: Buffer, skillMd: SkillMd): Promise<CheckedArchive> {
  const { contents, kept } = await walk(previous);
  const prefix = contents.topFolder === null ? "" : `${contents.topFolder}/`;
  const old = kept.get(`${prefix}SKILL.md`)!;
  kept.set(`${prefix}SKILL.md`, { ...old, bytes: Buffer.from(skillMd.text, "utf8") });
  return normalized(contents, kept, skillMd);
}

/**
 * The archive svc stores, whatever was uploaded: a .tar.gz that svc writes from the files it checked and
 * lists, inside a folder named as the skill. svcd unpacks only this, so the files a machine gets are by
 * construction the ones svc showed, and no two readers ever interpret an uploaded archive's names, sizes
 * or headers differently. The files are held in memory meanwhile (at most 100 MiB, the extraction limit).
 */
async function normalized(contents: ArchiveContents, kept: Map<string, KeptFile>, skillMd: SkillMd): Promise<CheckedArchive> {
  const prefix = contents.topFolder === null ? "" : `${contents.topFolder}/`;
  const files = contents.files.map(({ path }) => ({ path, ...kept.get(`${prefix}${path}`)! }));
  const bytes = await writeTarGz(files.map((file) => ({ name: `${skillMd.name}/${file.path}`, bytes: file.bytes, executable: file.executable })));
  return { bytes, format: "tar.gz", digest: digestOf(bytes), skillMd, files: files.map((file) => ({ path: file.path, size: file.bytes.length })) };
}

async function writeTarGz(files: ReadonlyArray<{ name: string; bytes: Buffer; executable: boolean }>): Promise<Buffer> {
  const pack = tarStream.pack();
  const compressed: Buffer[] = [];
  const output = pipeline(pack, createGzip(), async (source: AsyncIterable<Buffer>) => {
    for await (const chunk of source) compressed.push(chunk);
  });
  for (const file of files) {
    await new Promise<void>((resolve, reject) => {
      pack.entry({ name: file.name, size: file.bytes.length, mode: file.executable ? 0o755 : 0o644 }, file.bytes, (err) => (err ? reject(err) : resolve()));
    });
  }
  pack.finalize();
  await output;
  return Buffer.concat(compressed);
}

export function digestOf(bytes: Buffer): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}
