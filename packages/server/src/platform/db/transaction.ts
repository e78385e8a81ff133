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

/**
 * The value of one of several statements sent together with `Promise.allSettled` (a transaction's
 * connection runs them in the order sent, without waiting on svc between them), or its error. The
 * caller judges the answers in its own order, so the error it reports is the one its checks put first.
 */
export function settledValue<T>(result: PromiseSettledResult<T>): T {
  if (result.status === "rejected") throw result.reason;
  return result.value;
}
