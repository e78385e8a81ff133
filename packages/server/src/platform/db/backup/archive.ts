import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/*
 * An embedded backup is a directory: `database.sql` (PGlite's pg_dump, plain SQL), `manifest.json`
 * (format, time, checksum) and, only when asked for, `secret.key` (the master key that opens the
 * secrets in the dump). Plain files, so an operator can inspect, copy, encrypt or load the SQL into
 * another PostgreSQL with the usual tools.
 */

export const BACKUP_FORMAT = "svc-embedded-backup";
const DATABASE_FILE = "database.sql";
const MANIFEST_FILE = "manifest.json";
const KEY_FILE = "secret.key";

export interface Manifest {
  format: typeof BACKUP_FORMAT;
  version: 1;
  created_at: string;
  database: { file: string; bytes: number; sha256: string };
  master_key_included: boolean;
}

export class BackupError extends Error {}

const sha256 = (data: string) => createHash("sha256").update(data).digest("hex");

/** Writes a backup into `dir`, which must not exist or be empty; files are readable by the owner only. */
export function writeBackup(dir: string, sql: string, masterKey: string | undefined): Manifest {
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new BackupError(`${dir} is not empty; choose a new directory for the backup`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const manifest: Manifest = {
    format: BACKUP_FORMAT,
    version: 1,
    created_at: new Date().toISOString(),
    database: { file: DATABASE_FILE, bytes: Buffer.byteLength(sql), sha256: sha256(sql) },
    master_key_included: masterKey !== undefined,
  };
  writeFileSync(join(dir, DATABASE_FILE), sql, { mode: 0o600 });
  if (masterKey !== undefined) writeFileSync(join(dir, KEY_FILE), `${masterKey}\n`, { mode: 0o600 });
  writeFileSync(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  return manifest;
}

/** Reads and verifies a backup: a missing file or a checksum that does not match refuses it. */
export function readBackup(dir: string): { manifest: Manifest; sql: string; masterKey: string | undefined } {
  const manifest = readManifest(dir);
  const sql = readRequired(join(dir, manifest.database.file));
  if (sha256(sql) !== manifest.database.sha256) throw new BackupError(`${manifest.database.file} does not match the checksum in ${MANIFEST_FILE}; the backup is damaged`);
  const masterKey = manifest.master_key_included ? readRequired(join(dir, KEY_FILE)).trim() : undefined;
  return { manifest, sql, masterKey };
}

function readManifest(dir: string): Manifest {
  let manifest: Partial<Manifest>;
  try {
    manifest = JSON.parse(readRequired(join(dir, MANIFEST_FILE))) as Partial<Manifest>;
  } catch (err) {
    if (err instanceof BackupError) throw err;
    throw new BackupError(`${join(dir, MANIFEST_FILE)} is not valid JSON`);
  }
  if (manifest.format !== BACKUP_FORMAT || manifest.version !== 1 || typeof manifest.database?.sha256 !== "string" || manifest.database.file !== DATABASE_FILE) {
    throw new BackupError(`${dir} does not hold an svc embedded backup (format ${BACKUP_FORMAT}, version 1)`);
  }
  return manifest as Manifest;
}

function readRequired(path: string): string {
  if (!existsSync(path)) throw new BackupError(`${path} is missing`);
  return readFileSync(path, "utf8");
}
