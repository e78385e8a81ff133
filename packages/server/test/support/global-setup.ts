import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { migrateEmbedded, migratePostgres } from "../../src/platform/db/index.js";

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
  const dir = mkdtempSync(join(tmpdir(), "svc-test-"));
  const url = process.env["DATABASE_URL"];
  if (url) {
    const template = `svc_tpl_${runId}`;
    await adminQuery(url, `CREATE DATABASE ${template}`);
    await migratePostgres(withDatabase(url, template));
    project.provide("postgresTemplate", template);
    project.provide("embeddedTemplate", "");
    return async () => {
      await dropRunDatabases(url, runId);
      rmSync(dir, { recursive: true, force: true });
    };
  }
  const client = await PGlite.create();
  await migrateEmbedded(client);
  const dump = await client.dumpDataDir("none");
  await client.close();
  const path = join(dir, "template.tar");
  writeFileSync(path, Buffer.from(await dump.arrayBuffer()));
  project.provide("embeddedTemplate", path);
  project.provide("postgresTemplate", "");
  return () => rmSync(dir, { recursive: true, force: true });
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
