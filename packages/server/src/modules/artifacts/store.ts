import { and, desc, eq, inArray, or, sql } from "drizzle-orm";
import type { PgInsertValue } from "drizzle-orm/pg-core";
import { artifacts } from "../../db/schema/index.js";
import type { AppDb, Tx } from "../../platform/db/index.js";

type Db = AppDb | Tx;
export type ArtifactRow = typeof artifacts.$inferSelect;

export async function insertArtifacts(tx: Db, rows: Array<PgInsertValue<typeof artifacts>>): Promise<void> {
  if (rows.length > 0) await tx.insert(artifacts).values(rows);
}

/** An artifact of one agent; another agent's artifact is not found. */
export async function findArtifact(tx: Db, agentId: string, artifactId: string): Promise<ArtifactRow | undefined> {
  const [row] = await tx
    .select()
    .from(artifacts)
    .where(and(eq(artifacts.agentId, agentId), eq(artifacts.id, artifactId)));
  return row;
}

/**
 * The name an artifact is listed under by the file tools: the last `/`-separated component of its
 * filename, or the empty text for an unnamed artifact (so that `*` finds it, and `*.pdf` does not).
 */
const listedName = sql`coalesce(regexp_replace(${artifacts.filename}, '^.*/', ''), '')`;

/**
 * An agent's artifacts whose listed name is LIKE one of `likes` (escape character `\`), or all of them
 * when `likes` is null; newest first, at most `limit`. The agent index bounds the scan to its artifacts.
 */
export async function listAgentArtifacts(tx: Db, agentId: string, likes: readonly string[] | null, limit: number): Promise<ArtifactRow[]> {
  const named = likes === null ? undefined : or(...likes.map((like) => sql`${listedName} LIKE ${like} ESCAPE '\\'`));
  return tx
    .select()
    .from(artifacts)
    .where(and(eq(artifacts.agentId, agentId), named))
    .orderBy(desc(artifacts.createdAt), desc(artifacts.id))
    .limit(limit);
}

/** The storage keys still referenced among the artifacts `ids`, looked up by primary key. */
export async function storageKeysOf(tx: Db, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await tx.select({ storageKey: artifacts.storageKey }).from(artifacts).where(inArray(artifacts.id, ids));
  return new Set(rows.map((r) => r.storageKey));
}
