import { and, asc, desc, eq, getTableColumns, inArray, lt, sql, type SQL } from "drizzle-orm";
import { mcpRegistryServers, mcpRegistrySync } from "../../db/schema/index.js";
import { dbNow, dbSecondsAgo } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import type { SnapshotServer } from "./registry-page.js";
import { remoteKey, storedWords, urlWords } from "./registry-words.js";

/** The registry snapshot's tables; SQL for them lives only here. */

export type SyncRow = typeof mcpRegistrySync.$inferSelect;
export type RegistryServerRow = typeof mcpRegistryServers.$inferSelect & { rank: number };

const SYNC_ID = 1;

export async function readSync(db: AppDb | Tx): Promise<SyncRow | undefined> {
  const [row] = await db.select().from(mcpRegistrySync).where(eq(mcpRegistrySync.id, SYNC_ID));
  return row;
}

/** Creates the sync state the first time; true when this call did (and so should load the shipped snapshot). */
export async function createSync(tx: Tx): Promise<boolean> {
  const rows = await tx
    .insert(mcpRegistrySync)
    .values({ id: SYNC_ID, sourceUrl: null, pass: 0, full: true, open: false })
    .onConflictDoNothing()
    .returning({ id: mcpRegistrySync.id });
  return rows.length > 0;
}

/**
 * Opens the next pass when one is due: never run, the last finished more than `refreshSeconds` ago, or
 * the registry URL changed (then a full pass from scratch, whatever was under way). A pass is full when
 * no earlier pass finished against this URL. Undefined when none is due or another process opened it.
 */
export async function openPass(db: AppDb, url: string, refreshSeconds: number): Promise<SyncRow | undefined> {
  const sourceChanged = sql`${mcpRegistrySync.sourceUrl} IS DISTINCT FROM ${url}`;
  const [row] = await db
    .update(mcpRegistrySync)
    .set({
      pass: sql`${mcpRegistrySync.pass} + 1`,
      open: true,
      cursor: null,
      full: sql`${sourceChanged} OR ${mcpRegistrySync.updatedSince} IS NULL`,
      updatedSince: sql`CASE WHEN ${sourceChanged} THEN NULL ELSE ${mcpRegistrySync.updatedSince} END`,
      sourceUrl: url,
    })
    .where(
      and(
        eq(mcpRegistrySync.id, SYNC_ID),
        sql`(${sourceChanged} OR (NOT ${mcpRegistrySync.open} AND (${mcpRegistrySync.lastPassAt} IS NULL OR ${mcpRegistrySync.lastPassAt} < ${dbSecondsAgo(refreshSeconds)})))`,
      ),
    )
    .returning();
  return row;
}

export async function lockSync(tx: Tx): Promise<SyncRow | undefined> {
  const [row] = await tx.select().from(mcpRegistrySync).where(eq(mcpRegistrySync.id, SYNC_ID)).for("update");
  return row;
}

/** Moves the pass on to the registry's next cursor, or closes it when there is none. */
export async function advanceSync(tx: Tx, next: { cursor: string | undefined; updatedSince: Date | null }): Promise<void> {
  const closing = next.cursor === undefined;
  await tx
    .update(mcpRegistrySync)
    .set({ cursor: next.cursor ?? null, updatedSince: next.updatedSince, ...(closing ? { open: false, lastPassAt: dbNow } : {}) })
    .where(eq(mcpRegistrySync.id, SYNC_ID));
}

export async function upsertServers(tx: Tx, servers: readonly SnapshotServer[], pass: number): Promise<void> {
  if (servers.length === 0) return;
  const rows = servers.map((server) => {
    const urls = server.remotes.map((remote) => remote.url);
    return {
      name: server.name,
      title: server.title ?? null,
      description: server.description,
      version: server.version,
      websiteUrl: server.websiteUrl ?? null,
      status: server.status,
      registryUpdatedAt: server.updatedAt,
      remotes: server.remotes,
      icons: server.icons,
      nameWords: storedWords(server.name),
      titleWords: storedWords(server.title ?? ""),
      descriptionWords: storedWords(server.description),
      urlWords: urls.flatMap(urlWords).map((word) => ` ${word}`).join(""),
      remoteKeys: [...new Set(urls.map(remoteKey))],
      pass,
    };
  });
  // Every column but the key takes the new row's value.
  const { name: _key, ...columns } = getTableColumns(mcpRegistryServers);
  const set = Object.fromEntries(Object.entries(columns).map(([property, column]) => [property, sql.raw(`excluded.${column.name}`)]));
  await tx.insert(mcpRegistryServers).values(rows).onConflictDoUpdate({ target: mcpRegistryServers.name, set });
}

export async function deleteServers(tx: Tx, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  await tx.delete(mcpRegistryServers).where(inArray(mcpRegistryServers.name, [...names]));
}

/** After a full pass: what the registry no longer lists. */
export async function deleteOlderPasses(tx: Tx, pass: number): Promise<number> {
  const gone = await tx.delete(mcpRegistryServers).where(lt(mcpRegistryServers.pass, pass)).returning({ name: mcpRegistryServers.name });
  return gone.length;
}

export interface ServerQuery {
  /** Lowercased query words; each must begin a word of the name, title, description or a remote URL. */
  terms: readonly string[];
  remoteKey: string | undefined;
  after: { rank: number; name: string } | undefined;
  limit: number;
}

/**
 * One page of the snapshot. A term scores where it matches best: the name 8, the title 4, a remote URL 2,
 * the description 1; a server's rank is the sum, and without terms every rank is 0. Ordered by rank,
 * then name by code point, which is also the keyset the cursor continues from.
 */
export async function listServers(db: AppDb, query: ServerQuery): Promise<RegistryServerRow[]> {
  const t = mcpRegistryServers;
  const scores: SQL[] = [];
  const matches: SQL[] = [];
  for (const term of query.terms) {
    const pattern = `% ${term}%`;
    const fields = [t.nameWords, t.titleWords, t.urlWords, t.descriptionWords].map((column) => sql`${column} LIKE ${pattern}`);
    scores.push(sql`CASE WHEN ${fields[0]} THEN 8 WHEN ${fields[1]} THEN 4 WHEN ${fields[2]} THEN 2 WHEN ${fields[3]} THEN 1 ELSE 0 END`);
    matches.push(sql`(${sql.join(fields, sql` OR `)})`);
  }
  const rank = scores.length > 0 ? sql<number>`(${sql.join(scores, sql` + `)})` : sql<number>`0`;
  const filter = and(...matches, query.remoteKey === undefined ? undefined : sql`${t.remoteKeys} @> ARRAY[${query.remoteKey}]::text[]`);
  const ranked = db
    .select({ ...getTableColumns(t), rank: sql<number>`${rank}::int`.as("rank") })
    .from(t)
    .where(filter)
    .as("ranked");
  const name = sql`${ranked.name} COLLATE "C"`;
  const after = query.after && sql`(${ranked.rank} < ${query.after.rank} OR (${ranked.rank} = ${query.after.rank} AND ${name} > ${query.after.name} COLLATE "C"))`;
  return db.select().from(ranked).where(after).orderBy(desc(ranked.rank), asc(name)).limit(query.limit + 1);
}
