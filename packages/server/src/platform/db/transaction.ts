import type { AppDb, Tx } from "./types.js";

/**
 * One transaction with post-commit hooks. Hooks publish hints (notifications) and must never run for a
 * rolled-back transaction, so they are collected here and run only after `transaction` resolved.
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
      // A failed hint is healed by polling; it must not turn a committed change into an error.
      process.emitWarning(`after-commit hook failed: ${String(err)}`);
    }
  }
  return result;
}
