import type { SQL } from "drizzle-orm";
import type { AppDb, Tx } from "./types.js";

/**
 * Raw statements for what the query builder cannot say (upserts with CASE, row comparisons). The
 * drivers shape results differently (node-postgres `rowCount`, PGlite `affectedRows`); this evens it out.
 */
export async function rawRows<T>(db: AppDb | Tx, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown as { rows: T[] };
  return result.rows;
}

export async function rawCount(db: AppDb | Tx, query: SQL): Promise<number> {
  const result = (await db.execute(query)) as unknown as { rowCount?: number | null; affectedRows?: number };
  return result.rowCount ?? result.affectedRows ?? 0;
}
