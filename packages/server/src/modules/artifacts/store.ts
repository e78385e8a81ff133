import { and, eq, inArray } from "drizzle-orm";
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

/** The storage keys still referenced among the artifacts `ids`, looked up by primary key. */
export async function storageKeysOf(tx: Db, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await tx.select({ storageKey: artifacts.storageKey }).from(artifacts).where(inArray(artifacts.id, ids));
  return new Set(rows.map((r) => r.storageKey));
}
