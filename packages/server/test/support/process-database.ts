import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, inject } from "vitest";
import { adminQuery, withDatabase } from "./global-setup.js";

/** tar by its path, found when this loads: a test may start a server with a PATH that has no tar on it. */
const TAR = (process.env["PATH"] ?? "").split(delimiter).map((dir) => join(dir, "tar")).find((path) => existsSync(path)) ?? "tar";

/** The settings a `svc serve` child needs to reach its database. */
export type DatabaseEnv = Record<string, string>;

/**
 * Databases for the `svc` child processes of one test file, each fresh and already migrated: on
 * PostgreSQL a database cloned from the run's template, embedded a data directory unpacked from the run's
 * template dump. An embedded directory svc had to create itself would cost an initdb and every migration
 * (about 16 s of CPU, measured here) in each child's first start; unpacking costs milliseconds. Tests of
 * the migration itself (serve, npm-start) start from an empty directory on purpose and do not use this.
 * Everything made here is removed after the file.
 */
export function useProcessDatabases(prefix: string): () => Promise<DatabaseEnv> {
  const adminUrl = process.env["DATABASE_URL"];
  const made: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const remove of made) await remove();
  });
  return async (): Promise<DatabaseEnv> => {
    const dataDir = mkdtempSync(join(tmpdir(), `svc-${prefix}-`));
    made.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    if (!adminUrl) {
      seedEmbeddedDataDir(dataDir);
      return { DATABASE_URL: "", SVC_DATA_DIR: dataDir };
    }
    const name = `svc_t_${inject("runId")}_${prefix.replace(/\W/g, "_")}_${randomBytes(4).toString("hex")}`;
    await adminQuery(adminUrl, `CREATE DATABASE ${name} TEMPLATE ${inject("postgresTemplate")}`);
    made.push(() => adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    return { DATABASE_URL: withDatabase(adminUrl, name), SVC_DATA_DIR: dataDir, SVC_SECRET_KEY: "0".repeat(63) + "1" };
  };
}

/**
 * Makes `dataDir` an embedded svc data directory whose database is migrated: the run's template unpacked
 * where `svc serve` opens it.
 */
export function seedEmbeddedDataDir(dataDir: string): void {
  const pgdata = join(dataDir, "pgdata");
  mkdirSync(pgdata, { recursive: true });
  unpackEmbeddedTemplate(pgdata);
}

/** Unpacks the run's migrated template (PGlite's data-dir dump, a tar of PGDATA) into `pgdata`. */
export function unpackEmbeddedTemplate(pgdata: string): void {
  execFileSync(TAR, ["-xf", inject("embeddedTemplate"), "-C", pgdata], { stdio: ["ignore", "ignore", "pipe"] });
}
