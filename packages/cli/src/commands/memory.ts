import type { Command } from "commander";
import { unwrap } from "@svc/sdk";
import { context, table, UsageError, type Context } from "../context.js";
import { listAll, pageQuery } from "../lists.js";
import { readSource, readStdin } from "../input.js";
import { idOfMemoryStore } from "../names.js";
import { printPart } from "../output.js";
import { limitOption } from "./options.js";
import { parseCount } from "./orgs.js";

/*
 * `svc memory`: the project's memory stores (docs/memory.md) and their files. Stores are named by id
 * (mst_…) or name; files by their path in the store, looked up through the list's path_prefix filter.
 * `put` reads the content from standard input or --from-file, never from the command line.
 */

const STORES = "/api/v1/orgs/{orgID}/projects/{projectID}/memory-stores" as const;
const STORE = "/api/v1/orgs/{orgID}/projects/{projectID}/memory-stores/{memoryStoreID}" as const;
const MEMORIES = "/api/v1/orgs/{orgID}/projects/{projectID}/memory-stores/{memoryStoreID}/memories" as const;
const MEMORY = "/api/v1/orgs/{orgID}/projects/{projectID}/memory-stores/{memoryStoreID}/memories/{memoryID}" as const;
const VERSIONS = "/api/v1/orgs/{orgID}/projects/{projectID}/memory-stores/{memoryStoreID}/memories/{memoryID}/versions" as const;
const VERSION = "/api/v1/orgs/{orgID}/projects/{projectID}/memory-stores/{memoryStoreID}/memories/{memoryID}/versions/{version}" as const;

async function projectPath(ctx: Context) {
  return { orgID: await ctx.org(), projectID: await ctx.project() };
}

async function storePath(ctx: Context, given: string) {
  return { ...(await projectPath(ctx)), memoryStoreID: await idOfMemoryStore(ctx, given) };
}

/** The live file at `path` in the store: its id, found through the list's path_prefix. */
async function memoryIdOf(ctx: Context, path: { orgID: string; projectID: string; memoryStoreID: string }, file: string, store: string): Promise<string> {
  const page = await unwrap(ctx.client().GET(MEMORIES, { params: { path, query: { path_prefix: file, limit: 100 } } }));
  const found = page.data.find((m) => m.path === file);
  if (!found) throw new UsageError(`no file ${file} in memory store ${store} (\`svc memory ls ${store}\` lists them)`);
  return found.id;
}

export function memoryCommands(program: Command): void {
  const memory = program.command("memory").description("memory stores (shared files agents read and write under /memory) and their files");
  storeCommands(memory.command("stores").description("the project's memory stores"));

  memory
    .command("ls <store> [prefix]")
    .description("the store's files (whose path starts with prefix), with size, version and digest")
    .option(...limitOption)
    .action(async (store: string, prefix: string | undefined, options: { limit: number }, command: Command) => {
      const ctx = await context(command);
      const path = await storePath(ctx, store);
      const query = prefix ? { path_prefix: prefix } : {};
      const items = await listAll((cursor) => unwrap(ctx.client().GET(MEMORIES, { params: { path, query: { ...query, ...pageQuery(cursor) } } })), options.limit);
      ctx.print(items, () => table(items.map((m) => [m.path, String(m.size_bytes), `v${m.version}`, m.updated_at])));
    });
  memory
    .command("cat <store> <path>")
    .description("print a file's content (or one version's, with --at-version)")
    .option("--at-version <n>", "an earlier version (`svc memory versions` lists them)", parseCount)
    .action(async (store: string, file: string, options: { atVersion?: number }, command: Command) => {
      const ctx = await context(command);
      const path = await storePath(ctx, store);
      const memoryID = await memoryIdOf(ctx, path, file, store);
      if (options.atVersion !== undefined) {
        const version = await unwrap(ctx.client().GET(VERSION, { params: { path: { ...path, memoryID, version: options.atVersion } } }));
        if (ctx.json) return ctx.print(version, () => "");
        if (version.content === null) throw new UsageError(`version ${options.atVersion} of ${file} is its deletion; it has no content`);
        return printPart(version.content);
      }
      const found = await unwrap(ctx.client().GET(MEMORY, { params: { path: { ...path, memoryID } } }));
      if (ctx.json) return ctx.print(found, () => "");
      printPart(found.content);
    });
  memory
    .command("put <store> <path>")
    .description("create or replace a file with standard input (or --from-file); --expected-digest refuses if someone changed it")
    .option("--from-file <file>", "read the content from this file (- is standard input)")
    .option("--expected-digest <digest>", "the digest the file must still have (from `svc memory ls` or `cat --json`)")
    .action(async (store: string, file: string, options: { fromFile?: string; expectedDigest?: string }, command: Command) => {
      const ctx = await context(command);
      const path = await storePath(ctx, store);
      const content = options.fromFile ? await readSource(options.fromFile) : await readStdin();
      const body = { path: file, content, ...(options.expectedDigest ? { expected_digest: options.expectedDigest } : {}) };
      const written = await unwrap(ctx.client().PUT(MEMORIES, { params: { path }, body }));
      ctx.print(written, () => `${written.path} is at version ${written.version} (${written.digest}).`);
    });
  memory
    .command("rm <store> <path>")
    .description("delete a file (its versions stay readable)")
    .action(async (store: string, file: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const path = await storePath(ctx, store);
      const memoryID = await memoryIdOf(ctx, path, file, store);
      await unwrap(ctx.client().DELETE(MEMORY, { params: { path: { ...path, memoryID } } }));
      ctx.print({ deleted: memoryID }, () => "Deleted.");
    });
  memory
    .command("versions <store> <path>")
    .description("a file's versions, newest first, with who wrote each (a user, an API key, or an agent's tool call)")
    .option(...limitOption)
    .action(async (store: string, file: string, options: { limit: number }, command: Command) => {
      const ctx = await context(command);
      const path = await storePath(ctx, store);
      const memoryID = await memoryIdOf(ctx, path, file, store);
      const items = await listAll((cursor) => unwrap(ctx.client().GET(VERSIONS, { params: { path: { ...path, memoryID }, query: pageQuery(cursor) } })), options.limit);
      ctx.print(items, () =>
        table(items.map((v) => [`v${v.version}`, v.deleted ? "deleted" : String(v.size_bytes), `${v.written_by.kind} ${v.written_by.id}`, v.tool_call_id ?? "", v.created_at])),
      );
    });
  memory
    .command("search <store> <query>")
    .description("full-text search over the store's paths and contents, best match first")
    .option(...limitOption)
    .action(async (store: string, q: string, options: { limit: number }, command: Command) => {
      const ctx = await context(command);
      const path = await storePath(ctx, store);
      const items = await listAll((cursor) => unwrap(ctx.client().GET(MEMORIES, { params: { path, query: { q, ...pageQuery(cursor) } } })), options.limit);
      ctx.print(items, () => table(items.map((m) => [m.path, String(m.size_bytes), `v${m.version}`])));
    });
}

function storeCommands(stores: Command): void {
  stores
    .command("list")
    .description("the project's memory stores")
    .option("--name <glob>", "only stores whose name matches (case-insensitive, * and ?)")
    .option(...limitOption)
    .action(async (options: { name?: string; limit: number }, command: Command) => {
      const ctx = await context(command);
      const path = await projectPath(ctx);
      const query = options.name ? { name: options.name } : {};
      const items = await listAll((cursor) => unwrap(ctx.client().GET(STORES, { params: { path, query: { ...query, ...pageQuery(cursor) } } })), options.limit);
      ctx.print(items, () => table(items.map((s) => [s.id, s.name, s.writable ? "writable" : "read-only", `${s.memory_count} files`, s.description])));
    });
  stores
    .command("create <name>")
    .description("create a store; agents attach it by name in their config's memory section")
    .option("--description <text>", "what the store holds: agents that attach it see this", "")
    .option("--read-only", "refuse every write to its files (change it later with the API's PATCH)")
    .action(async (name: string, options: { description: string; readOnly?: boolean }, command: Command) => {
      const ctx = await context(command);
      const body = { name, description: options.description, writable: !options.readOnly };
      const created = await unwrap(ctx.client().POST(STORES, { params: { path: await projectPath(ctx) }, body }));
      ctx.print(created, () => created.id);
    });
  stores
    .command("get <store>")
    .description("one store: its description, whether it is writable, its files and bytes")
    .action(async (given: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const s = await unwrap(ctx.client().GET(STORE, { params: { path: await storePath(ctx, given) } }));
      ctx.print(s, () =>
        table([["id", s.id], ["name", s.name], ["description", s.description], ["writable", String(s.writable)], ["files", String(s.memory_count)], ["bytes", String(s.size_bytes)], ["updated", s.updated_at]]),
      );
    });
  stores
    .command("delete <store>")
    .description("delete a store with all its files and versions (refused while an agent or profile config in use attaches it)")
    .action(async (given: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const path = await storePath(ctx, given);
      await unwrap(ctx.client().DELETE(STORE, { params: { path } }));
      ctx.print({ deleted: path.memoryStoreID }, () => "Deleted.");
    });
}

