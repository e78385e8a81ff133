import type { HandleInternals } from "./prepared.js";
import type { AppDb, CommitsBehind, Tx } from "./types.js";

/** What a connection answers to a statement sent after its transaction's last one (`Tx.commitWith`). */
export function statementAfterLast(): Error {
  return new Error("a statement after the transaction's last one (Tx.commitWith)");
}

/**
 * One transaction with post-commit hooks. Hooks act on this process only (dropping cached entries a
 * change made stale) and must never run for a rolled-back transaction, so they are collected here and
 * run once `transaction` resolved. Hints to other processes are NOTIFYs inside the transaction instead.
 */
export async function runTransaction<T>(db: AppDb, work: (tx: Tx) => Promise<T>): Promise<T> {
  const hooks: Array<() => void> = [];
  const result = await db.transaction(async (drizzleTx) => {
    const connection = (drizzleTx as unknown as HandleInternals).session.client as Partial<CommitsBehind>;
    const tx = Object.assign(drizzleTx, {
      afterCommit: (hook: () => void) => void hooks.push(hook),
      // A driver that cannot (an in-thread PGlite, for benchmark baselines) commits after `last` as usual.
      commitWith: <R>(last: () => Promise<R>) => (connection.commitBehindNextStatement?.(), last()),
    });
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
