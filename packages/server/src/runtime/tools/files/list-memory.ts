import type { MemoryAttachmentDefinition } from "../../definition.js";
import { matchesPath, type Segment } from "./glob.js";
import type { MemoryFileFacts, MemoryStoreFacts } from "./memory.js";
import { MEMORY_DIR, memoryPath, NO_MEMORY } from "./paths.js";
import type { FileToolContext, FileToolDeps } from "./text.js";

/*
 * `/memory` as list_files and search_files see it (reference docs/tools/built-in.mdx, list_files): the
 * directory itself, one directory per attached store (with its description and the agent's access), and
 * in each store its live files and the directories their paths imply. A store's files are read by the
 * longest literal path prefix the pattern starts with, then matched segment by segment.
 */

/** A store holds at most this many live files, so a listing of one store reads at most this many rows. */
const STORE_FILES = 10_000;

export interface MemoryListedFile extends MemoryFileFacts {
  storeId: string;
  /** The path inside the store. */
  file: string;
}

/** Whether some path strictly below `names` could match the pattern. */
function matchesBelow(segments: readonly Segment[], names: readonly string[]): boolean {
  if (names.length === 0) return segments.length > 0;
  if (segments.length === 0) return false;
  const [first, ...rest] = segments as [Segment, ...Segment[]];
  if (first.deep) return matchesBelow(rest, names) || matchesBelow(segments, names.slice(1));
  return first.regex.test(names[0]!) && matchesBelow(rest, names.slice(1));
}

/** The literal path the pattern's segments after `/memory/<store>/` start with, as a prefix for SQL. */
function literalPrefix(segments: readonly Segment[]): string {
  const literal: string[] = [];
  for (const segment of segments.slice(2)) {
    if (segment.deep || !segment.literal) break;
    literal.push(segment.glob.replace(/\\(.)/g, "$1"));
  }
  return literal.join("/");
}

/** Attached stores that still exist, with their facts, in the config's order. */
export async function attachedStoreFacts(deps: FileToolDeps, ctx: FileToolContext): Promise<Array<{ entry: MemoryAttachmentDefinition; facts: MemoryStoreFacts }>> {
  if (ctx.attached.length === 0 || !deps.memory) return [];
  const facts = new Map((await deps.memory.stores(ctx.orgId, ctx.projectId, ctx.attached.map((a) => a.storeId))).map((s) => [s.storeId, s]));
  return ctx.attached.flatMap((entry) => {
    const found = facts.get(entry.storeId);
    return found ? [{ entry, facts: found }] : [];
  });
}

/** The attached stores' live files the pattern matches, at most `take`, store by store in path order. */
export async function matchingMemoryFiles(deps: FileToolDeps, ctx: FileToolContext, segments: readonly Segment[], take: number): Promise<{ files: MemoryListedFile[] } | { error: string }> {
  if (ctx.attached.length === 0 || !deps.memory) return { error: NO_MEMORY };
  const files: MemoryListedFile[] = [];
  for (const entry of ctx.attached) {
    if (files.length >= take || !matchesBelow(segments, [MEMORY_DIR, entry.name])) continue;
    const rows = await deps.memory.listFiles(entry.storeId, literalPrefix(segments), STORE_FILES);
    for (const row of rows) {
      if (files.length >= take) break;
      if (matchesPath(segments, [MEMORY_DIR, entry.name, ...row.path.split("/")])) files.push({ ...row, storeId: entry.storeId, file: row.path, path: memoryPath(entry.name, row.path) });
    }
  }
  return { files };
}

/** list_files entries under `/memory` (the directory, the stores, files and directories), at most `take`. */
export async function memoryEntries(deps: FileToolDeps, ctx: FileToolContext, segments: readonly Segment[], take: number): Promise<Array<Record<string, unknown>>> {
  const entries: Array<Record<string, unknown>> = [];
  if (ctx.attached.length === 0) return entries;
  if (matchesPath(segments, [MEMORY_DIR])) entries.push({ path: `/${MEMORY_DIR}`, type: "directory" });
  for (const { entry, facts } of await attachedStoreFacts(deps, ctx)) {
    if (entries.length >= take) break;
    if (matchesPath(segments, [MEMORY_DIR, entry.name])) entries.push(storeEntry(entry, facts));
    if (!matchesBelow(segments, [MEMORY_DIR, entry.name])) continue;
    const rows = await deps.memory!.listFiles(entry.storeId, literalPrefix(segments), STORE_FILES);
    const found = new Map<string, Record<string, unknown>>();
    for (const row of rows) {
      const names = row.path.split("/");
      // The directories the path implies, then the file itself.
      for (let depth = 1; depth < names.length; depth++) {
        const dir = names.slice(0, depth);
        const path = memoryPath(entry.name, dir.join("/"));
        if (!found.has(path) && matchesPath(segments, [MEMORY_DIR, entry.name, ...dir])) found.set(path, { path, type: "directory" });
      }
      if (matchesPath(segments, [MEMORY_DIR, entry.name, ...names])) {
        const path = memoryPath(entry.name, row.path);
        found.set(path, { path, type: "file", size_bytes: row.sizeBytes, digest: row.digest, updated_at: row.updatedAt.toISOString() });
      }
    }
    const sorted = [...found.values()].sort((a, b) => ((a["path"] as string) < (b["path"] as string) ? -1 : 1));
    entries.push(...sorted.slice(0, Math.max(take - entries.length, 0)));
  }
  return entries;
}

function storeEntry(entry: MemoryAttachmentDefinition, facts: MemoryStoreFacts): Record<string, unknown> {
  return {
    path: `/${MEMORY_DIR}/${entry.name}`,
    type: "directory",
    description: facts.description,
    access: entry.access === "read_only" || !facts.writable ? "read_only" : "read_write",
    ...(facts.writable ? {} : { store_writable: false }),
    file_count: facts.memoryCount,
    size_bytes: facts.sizeBytes,
  };
}
