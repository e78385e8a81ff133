import type { AppDb, Tx } from "./types.js";

/**
 * One transaction with post-commit hooks. Hooks act on this process only (dropping cached entries a
 * change made stale) and must never run for a rolled-back transaction, so they are collected here and
 * run once `transaction` resolved. Hints to other processes are NOTIFYs inside the transaction instead.
 */
export async function runTransaction<T>(db: AppDb, work: (tx: Tx) => Promise<T>): Promise<T> {
  const hooks: Array<() => void> = [];
  const result = await db.transaction(async (drizzleTx) => {
    const tx = Object.assign(drizzleTx, { afterCommit: (hook: () => void) => void hooks.push(hook) });
    return work(tx);
  });
  for (const hook of hooks) {
    try {
      hook();
    } catch (err) {
      process.emitWarning(`after-commit hook failed: ${String(err)}`);
    }
  }
  return result;
}
