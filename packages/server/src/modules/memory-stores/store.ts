import { and, asc, desc, eq, inArray, isNull, lt, sql, type SQL } from "drizzle-orm";
import type { PgInsertValue } from "drizzle-orm/pg-core";
import { memories, memoryStores, memoryVersions } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";

type Db = AppDb | Tx;
import { allOf, keyset, nameMatches, type PageRequest } from "../../platform/http/lists.js";

export type MemoryStoreRow = typeof memoryStores.$inferSelect;

const ms = memoryStores;
const m = memories;
const v = memoryVersions;
const storeSortColumns = { name: ms.name, created_at: ms.createdAt, updated_at: ms.updatedAt, id: ms.id };

/** A memory without its content or search vector: what lists show. */
const memoryColumns = {
  id: m.id,
  orgId: m.orgId,
  memoryStoreId: m.memoryStoreId,
  path: m.path,
  digest: m.digest,
  sizeBytes: m.sizeBytes,
  currentVersion: m.currentVersion,
  createdAt: m.createdAt,
  updatedAt: m.updatedAt,
  deletedAt: m.deletedAt,
};
export type MemoryRow = { [K in keyof typeof memoryColumns]: (typeof m.$inferSelect)[K] };
export type MemoryWithContentRow = MemoryRow & { content: string };

const versionColumns = {
  version: v.version,
  digest: v.digest,
  sizeBytes: v.sizeBytes,
  writerKind: v.writerKind,
  writerId: v.writerId,
  agentId: v.agentId,
  toolCallId: v.toolCallId,
  createdAt: v.createdAt,
};
export type VersionRow = { [K in keyof typeof versionColumns]: (typeof v.$inferSelect)[K] };
export type VersionWithContentRow = VersionRow & { content: string | null };

/** Inserts the store unless its name is taken in the project; then returns undefined. */
export async function insertStore(tx: Tx, row: PgInsertValue<typeof memoryStores>): Promise<MemoryStoreRow | undefined> {
  const [inserted] = await tx.insert(ms).values(row).onConflictDoNothing().returning();
  return inserted;
}

/** The project's store; `update` serializes the writes to its files and counters. */
export async function findStore(tx: Tx, orgId: string, projectId: string, storeId: string, lock?: "update"): Promise<MemoryStoreRow | undefined> {
  const query = tx
    .select()
    .from(ms)
    .where(and(eq(ms.orgId, orgId), eq(ms.projectId, projectId), eq(ms.id, storeId)));
  const [row] = lock ? await query.for(lock) : await query;
  return row;
}

/**
 * The project's stores among `names` (for configs that attach them), read FOR KEY SHARE: a delete of one
 * at the same moment waits for the reader's transaction, or has already removed it.
 */
export async function findStoresByName(tx: Tx, orgId: string, projectId: string, names: readonly string[]): Promise<Array<Pick<MemoryStoreRow, "id" | "name">>> {
  return tx
    .select({ id: ms.id, name: ms.name })
    .from(ms)
    .where(and(eq(ms.orgId, orgId), eq(ms.projectId, projectId), inArray(ms.name, [...names])))
    .for("key share");
}

export async function updateStore(
  tx: Tx,
  orgId: string,
  storeId: string,
  changes: Partial<Pick<MemoryStoreRow, "description" | "writable" | "metadata">>,
): Promise<MemoryStoreRow> {
  const [row] = await tx
    .update(ms)
    .set({ ...changes, updatedAt: dbNow })
    .where(and(eq(ms.orgId, orgId), eq(ms.id, storeId)))
    .returning();
  return row!;
}

/** Adds the change of one write or delete to the store's live-file counters. */
export async function addToCounters(tx: Tx, orgId: string, storeId: string, change: { files: number; bytes: number }): Promise<MemoryStoreRow> {
  const [row] = await tx
    .update(ms)
    .set({ memoryCount: sql`${ms.memoryCount} + ${change.files}`, sizeBytes: sql`${ms.sizeBytes} + ${change.bytes}`, updatedAt: dbNow })
    .where(and(eq(ms.orgId, orgId), eq(ms.id, storeId)))
    .returning();
  return row!;
}

/** Deletes the store and, by cascade, its memories and their versions. False when absent. */
export async function deleteStore(tx: Tx, orgId: string, projectId: string, storeId: string): Promise<boolean> {
  const deleted = await tx
    .delete(ms)
    .where(and(eq(ms.orgId, orgId), eq(ms.projectId, projectId), eq(ms.id, storeId)))
    .returning({ id: ms.id });
  return deleted.length > 0;
}

/** One page of the project's stores, filtered by name, in keyset order (`limit + 1` rows). */
export async function listStores(tx: Tx, input: { orgId: string; projectId: string; name?: string; page: PageRequest }): Promise<MemoryStoreRow[]> {
  const ks = keyset(input.page.sort, storeSortColumns, input.page.cursor);
  return tx
    .select()
    .from(ms)
    .where(allOf(eq(ms.orgId, input.orgId), eq(ms.projectId, input.projectId), nameMatches(ms.name, input.name), ks.where))
    .orderBy(...ks.orderBy)
    .limit(input.page.limit + 1);
}

/** The memory at `path`, deleted or not, locked against concurrent writes to it. */
export async function findMemoryByPath(tx: Tx, storeId: string, path: string): Promise<MemoryRow | undefined> {
  const [row] = await tx
    .select(memoryColumns)
    .from(m)
    .where(and(eq(m.memoryStoreId, storeId), eq(m.path, path)))
    .for("update");
  return row;
}

/** A memory of the store, deleted or not; with `lock`, held against concurrent writes. */
export async function findMemory(tx: Tx, storeId: string, memoryId: string, lock?: "update"): Promise<MemoryRow | undefined> {
  const query = tx
    .select(memoryColumns)
    .from(m)
    .where(and(eq(m.memoryStoreId, storeId), eq(m.id, memoryId)));
  const [row] = lock ? await query.for(lock) : await query;
  return row;
}

export async function findLiveMemoryWithContent(tx: Tx, storeId: string, memoryId: string): Promise<MemoryWithContentRow | undefined> {
  const [row] = await tx
    .select({ ...memoryColumns, content: m.content })
    .from(m)
    .where(and(eq(m.memoryStoreId, storeId), eq(m.id, memoryId), isNull(m.deletedAt)));
  return row;
}

export async function insertMemory(tx: Tx, row: PgInsertValue<typeof memories>): Promise<MemoryRow> {
  const [inserted] = await tx.insert(m).values(row).returning(memoryColumns);
  return inserted!;
}

/** Sets the memory's current state: new content, or a tombstone (`deleted`). */
export async function updateMemory(
  tx: Tx,
  memoryId: string,
  state: { content: string; digest: string; sizeBytes: number; currentVersion: number; deleted: boolean },
): Promise<MemoryRow> {
  const { deleted, ...values } = state;
  const [row] = await tx
    .update(m)
    .set({ ...values, updatedAt: dbNow, deletedAt: deleted ? dbNow : null })
    .where(eq(m.id, memoryId))
    .returning(memoryColumns);
  return row!;
}

export async function insertVersion(tx: Tx, row: PgInsertValue<typeof memoryVersions>): Promise<void> {
  await tx.insert(v).values(row);
}

/** Where a page of memories continues: after a path, or in a search after a rank and id. */
export type MemoryPosition = { path: string } | { rank: number; id: string };

/**
 * One page of the store's live memories (`limit + 1` rows), by path in code point order; with `q`, the
 * matches of PostgreSQL's text search ('simple' configuration: no stemming, any language), best
 * `ts_rank` first, then id.
 */
export async function listMemories(
  tx: Tx,
  input: { storeId: string; pathPrefix?: string; q?: string; after?: MemoryPosition; limit: number },
): Promise<Array<MemoryRow & { rank: number }>> {
  const query = input.q === undefined ? undefined : sql`websearch_to_tsquery('simple', ${input.q})`;
  const rank = query === undefined ? sql<number>`0::real` : sql<number>`ts_rank(${m.search}, ${query})`;
  const path = sql`${m.path} COLLATE "C"`;
  let after: SQL | undefined;
  if (input.after && "rank" in input.after) after = sql`(${rank}, ${m.id}) < (${input.after.rank}::real, ${input.after.id}::uuid)`;
  else if (input.after) after = sql`${path} > ${input.after.path}`;
  return tx
    .select({ ...memoryColumns, rank: sql<number>`${rank}`.mapWith(Number) })
    .from(m)
    .where(
      allOf(
        eq(m.memoryStoreId, input.storeId),
        isNull(m.deletedAt),
        input.pathPrefix === undefined ? undefined : sql`starts_with(${m.path}, ${input.pathPrefix})`,
        query === undefined ? undefined : sql`${m.search} @@ ${query}`,
        after,
      ),
    )
    .orderBy(...(query === undefined ? [asc(path)] : [desc(rank), desc(m.id)]))
    .limit(input.limit + 1);
}

/** One page of a memory's versions, newest first, before `beforeVersion` (`limit + 1` rows). */
export async function listVersions(tx: Tx, memoryId: string, beforeVersion: number | undefined, limit: number): Promise<VersionRow[]> {
  return tx
    .select(versionColumns)
    .from(v)
    .where(allOf(eq(v.memoryId, memoryId), beforeVersion === undefined ? undefined : lt(v.version, beforeVersion)))
    .orderBy(desc(v.version))
    .limit(limit + 1);
}

export async function findVersion(tx: Db, memoryId: string, version: number): Promise<VersionWithContentRow | undefined> {
  const [row] = await tx
    .select({ ...versionColumns, content: v.content })
    .from(v)
    .where(and(eq(v.memoryId, memoryId), eq(v.version, version)));
  return row;
}

/** The project's stores among `storeIds` (an agent's attached stores). */
export async function findStoresById(tx: Db, orgId: string, projectId: string, storeIds: readonly string[]): Promise<MemoryStoreRow[]> {
  if (storeIds.length === 0) return [];
  return tx
    .select()
    .from(ms)
    .where(and(eq(ms.orgId, orgId), eq(ms.projectId, projectId), inArray(ms.id, [...storeIds])));
}

/** Live files of the store whose path starts with `prefix`, in code point order of path, at most `take`. */
export async function listLivePaths(tx: Db, storeId: string, prefix: string, take: number): Promise<MemoryRow[]> {
  return tx
    .select(memoryColumns)
    .from(m)
    .where(allOf(eq(m.memoryStoreId, storeId), isNull(m.deletedAt), prefix === "" ? undefined : sql`starts_with(${m.path}, ${prefix})`))
    .orderBy(asc(sql`${m.path} COLLATE "C"`))
    .limit(take);
}

/** The live file at `path` with its content. */
export async function findLiveByPath(tx: Db, storeId: string, path: string): Promise<MemoryWithContentRow | undefined> {
  const [row] = await tx
    .select({ ...memoryColumns, content: m.content })
    .from(m)
    .where(and(eq(m.memoryStoreId, storeId), eq(m.path, path), isNull(m.deletedAt)));
  return row;
}
