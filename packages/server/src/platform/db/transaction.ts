import type { AppDb, Tx } from "./types.js";

/** One transaction: a thrown error rolls it back. Hints (NOTIFY) sent inside it are delivered only on commit. */
export async function runTransaction<T>(db: AppDb, work: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction(work);
}
