import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { migrateEmbedded, migratePostgres } from "../../src/platform/db/index.js";
import { MIGRATIONS_DIR } from "../../src/platform/db/migrate.js";

declare module "vitest" {
  export interface ProvidedContext {
    embeddedTemplate: string;
    postgresTemplate: string;
    runId: string;
  }
}

/**
 * Migrates one database per run and hands its location to every test file, which clones it: a fresh
 * PGlite from a data-dir dump, or a PostgreSQL database created from a template (milliseconds each).
 */
export default async function setup(project: TestProject) {
  const runId = `${process.pid}_${Date.now().toString(36)}`;
  project.provide("runId", runId);
  const url = process.env["DATABASE_URL"];
  if (!url) {
    project.provide("embeddedTemplate", await embeddedTemplate());
    project.provide("postgresTemplate", "");
    return;
  }
  project.provide("embeddedTemplate", "");
  const template = `svc_tpl_${runId}`;
  await adminQuery(url, `CREATE DATABASE ${template}`);
  await migratePostgres(withDatabase(url, template));
  project.provide("postgresTemplate", template);
  return () => dropRunDatabases(url, runId);
}

const STALE_TEMPLATE_MS = 3_600_000;
const TEMPLATE_CACHE = join(dirname(fileURLToPath(import.meta.url)), "../../../../node_modules/.cache/svc-test");

/**
 * The migrated embedded database as a PGlite data-dir dump, made once per set of migrations and PGlite
 * version and kept between runs: an initdb and every migration cost about 16 s of CPU (measured here).
 */
async function embeddedTemplate(): Promise<string> {
  const path = join(TEMPLATE_CACHE, `embedded-${templateKey()}.tar`);
  if (existsSync(path)) {
    // Its time says when a run last started from it (see the pruning below).
    utimesSync(path, new Date(), new Date());
    return path;
  }
  const client = await PGlite.create();
  await migrateEmbedded(client);
  const dump = await client.dumpDataDir("none");
  await client.close();
  mkdirSync(TEMPLATE_CACHE, { recursive: true });
  // Another run in this checkout may still be starting servers from an older template (its migrations were
  // changed under it): only templates unused for an hour go.
  for (const old of readdirSync(TEMPLATE_CACHE).filter((name) => name.endsWith(".tar"))) {
    const file = join(TEMPLATE_CACHE, old);
    if (Date.now() - statSync(file).mtimeMs > STALE_TEMPLATE_MS) rmSync(file, { force: true });
  }
  // Written aside and renamed, so a run stopped halfway never leaves a partial template behind.
  const partial = `${path}.${process.pid}`;
  writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
  renameSync(partial, path);
  return path;
}

/** What the template depends on: every migration file and the PGlite that wrote it. */
function templateKey(): string {
  const hash = createHash("sha256");
  const pglite = join(dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite")), "../package.json");
  hash.update(readFileSync(pglite));
  for (const name of readdirSync(MIGRATIONS_DIR, { recursive: true, encoding: "utf8" }).sort()) {
    const file = join(MIGRATIONS_DIR, name);
    if (statSync(file).isFile()) hash.update(name).update(readFileSync(file));
  }
  return hash.digest("hex").slice(0, 16);
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export async function adminQuery(url: string, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

async function dropRunDatabases(url: string, runId: string): Promise<void> {
  const { rows } = await adminQuery(url, `SELECT datname FROM pg_database WHERE datname LIKE 'svc\\_%${runId}%'`);
  for (const row of rows as Array<{ datname: string }>) {
    await adminQuery(url, `DROP DATABASE IF EXISTS ${row.datname} WITH (FORCE)`);
  }
}
