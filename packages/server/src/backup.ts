import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Config } from "./config.js";
import { BackupError, readBackup, writeBackup } from "./platform/db/backup/archive.js";
import { requestDump } from "./platform/db/backup/socket.js";
import { DataDirInUse, EmbeddedWorkerClient } from "./platform/db/index.js";
import { lockDataDir } from "./platform/db/data-dir-lock.js";

/*
 * `svc backup` and `svc restore` for the embedded database (docs/operations.md, "Backup and restore").
 * A backup is taken while svc runs: the running process dumps its own database (one consistent
 * snapshot) over the data directory's socket; with no svc running, the command opens the data itself.
 */

export const BACKUP_USAGE = `usage: svc backup <dir> [--include-master-key]
       svc restore <dir> [--force]`;

class CommandError extends Error {}

export async function runBackup(argv: string[], config: Config): Promise<number> {
  return reportErrors(async () => {
    const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: { "include-master-key": { type: "boolean" } } });
    const dir = onePath(positionals);
    embeddedOnly(config, "svc backup copies the embedded database; a PostgreSQL server is backed up with its own tools (pg_dump)");
    if (!existsSync(join(config.dataDir, "pgdata"))) throw new CommandError(`no embedded database in ${config.dataDir} (SVC_DATA_DIR)`);
    const masterKey = values["include-master-key"] ? currentMasterKey(config) : undefined;
    const sql = await dumpDataDir(config.dataDir);
    const manifest = writeBackup(dir, sql, masterKey);
    console.log(`svc: backed up ${config.dataDir} to ${dir} (${manifest.database.bytes} bytes of SQL${masterKey ? ", with the master key" : ", without the master key"})`);
    return 0;
  });
}

export async function runRestore(argv: string[], config: Config): Promise<number> {
  return reportErrors(async () => {
    const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: { force: { type: "boolean" } } });
    const dir = onePath(positionals);
    embeddedOnly(config, "svc restore loads the embedded database; to load a backup into PostgreSQL, run its database.sql with psql");
    const backup = readBackup(dir);
    const force = values.force === true;
    mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
    const release = claim(config.dataDir, "stop svc before restoring: the data directory is in use");
    try {
      const replaceKey = checkTarget(config, backup.masterKey, force);
      await loadDatabase(config, backup.sql, force);
      if (backup.masterKey !== undefined) installMasterKey(config, backup.masterKey, replaceKey);
    } finally {
      release();
    }
    console.log(`svc: restored ${dir} (taken ${backup.manifest.created_at}) into ${config.dataDir}`);
    if (!backup.masterKey && !config.secretKey && !existsSync(join(config.dataDir, "secret.key"))) {
      console.log("svc: the backup holds no master key: set SVC_SECRET_KEY (or secret.key) to the original key, or stored secrets cannot be read");
    }
    return 0;
  });
}

async function dumpDataDir(dataDir: string): Promise<string> {
  let release: () => void;
  try {
    release = lockDataDir(dataDir);
  } catch (err) {
    if (!(err instanceof DataDirInUse)) throw err;
    return requestDump(dataDir);
  }
  try {
    const client = await EmbeddedWorkerClient.start({ dataDir: join(dataDir, "pgdata"), migrate: false });
    try {
      return await client.dump();
    } finally {
      await client.close();
    }
  } finally {
    release();
  }
}

/** Refuses a data directory holding another database or key unless forced; tells whether the key is replaced. */
function checkTarget(config: Config, masterKey: string | undefined, force: boolean): boolean {
  const pgdata = join(config.dataDir, "pgdata");
  if (existsSync(pgdata) && readdirSync(pgdata).length > 0 && !force) {
    throw new CommandError(`${config.dataDir} already holds a database; pass --force to set it aside and restore over it`);
  }
  const keyFile = join(config.dataDir, "secret.key");
  const differentKey = masterKey !== undefined && existsSync(keyFile) && readFileSync(keyFile, "utf8").trim() !== masterKey;
  if (differentKey && !force) throw new CommandError(`${keyFile} differs from the backup's master key; pass --force to set it aside`);
  return differentKey;
}

/** Loads the dump into a new database, then migrates it; on failure the previous database comes back. */
async function loadDatabase(config: Config, sql: string, force: boolean): Promise<void> {
  const pgdata = join(config.dataDir, "pgdata");
  const previous = force && existsSync(pgdata) ? `${pgdata}.replaced-${stamp()}` : undefined;
  if (previous) renameSync(pgdata, previous);
  try {
    const client = await EmbeddedWorkerClient.start({ dataDir: pgdata, restoreSql: sql, migrate: true });
    await client.close();
  } catch (err) {
    rmSync(pgdata, { recursive: true, force: true });
    if (previous) renameSync(previous, pgdata);
    throw new CommandError(`the backup could not be loaded (${(err as Error).message}); the data directory is as it was`);
  }
  if (previous) console.log(`svc: the previous database was kept at ${previous}`);
}

function installMasterKey(config: Config, masterKey: string, replace: boolean): void {
  const keyFile = join(config.dataDir, "secret.key");
  if (replace) renameSync(keyFile, `${keyFile}.replaced-${stamp()}`);
  if (!existsSync(keyFile)) writeFileSync(keyFile, `${masterKey}\n`, { mode: 0o600 });
}

function currentMasterKey(config: Config): string {
  if (config.secretKey) return config.secretKey;
  const keyFile = join(config.dataDir, "secret.key");
  if (!existsSync(keyFile)) throw new CommandError(`--include-master-key: no SVC_SECRET_KEY and no ${keyFile}`);
  return readFileSync(keyFile, "utf8").trim();
}

function claim(dataDir: string, inUse: string): () => void {
  try {
    return lockDataDir(dataDir);
  } catch (err) {
    if (err instanceof DataDirInUse) throw new CommandError(`${inUse} (svc process ${err.pid})`);
    throw err;
  }
}

function onePath(positionals: string[]): string {
  if (positionals.length !== 1) throw new CommandError(`expected one backup directory\n\n${BACKUP_USAGE}`);
  return positionals[0]!;
}

function embeddedOnly(config: Config, message: string): void {
  if (config.databaseUrl) throw new CommandError(message);
}

const stamp = () => new Date().toISOString().replace(/[:.]/g, "-");

async function reportErrors(command: () => Promise<number>): Promise<number> {
  try {
    return await command();
  } catch (err) {
    const expected = err instanceof CommandError || err instanceof BackupError || (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS");
    if (!expected) throw err;
    console.error(`svc: ${(err as Error).message}`);
    return 2;
  }
}
