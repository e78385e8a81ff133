import { setTimeout as sleep } from "node:timers/promises";
import { AppError } from "../../../../platform/errors.js";

/**
 * How long one tool call may spend waiting out Slack's rate limits before it gives up (docs/integrations.md,
 * "Rate limits and lost answers"). Slack asks a bot posting in a thread to wait a second or a few; waiting
 * that long inside the call keeps the agent's turn going. A longer Retry-After is handed to the model as
 * `rate_limited` with the delay: holding a worker slot for minutes is worse than the model deciding later.
 */
export const RATE_LIMIT_BUDGET_SECONDS = 10;
/** Retry-After is whole seconds and a timer may fire a hair early: a retry waits this much longer, so it never lands before Slack's window ends. */
const WAIT_MARGIN_MS = 250;

/** Runs a Slack request, retrying it after Slack's Retry-After while the call's budget lasts. */
export type Paced = <T>(request: () => Promise<T>) => Promise<T>;

/**
 * A budget of `budgetSeconds` of waiting for one tool call, shared by all its requests. Each wait counts
 * at least a second, so the loop ends within the budget even if Slack answers Retry-After: 0. The wait ends
 * early, rejecting with an AbortError, when `signal` aborts (the worker is stopping or the agent was canceled).
 */
export function createPacer(signal: AbortSignal, budgetSeconds = RATE_LIMIT_BUDGET_SECONDS): Paced {
  let left = budgetSeconds;
  return async function paced<T>(request: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await request();
      } catch (err) {
        const seconds = retryAfterOf(err);
        if (seconds === undefined || Math.max(1, seconds) > left) throw err;
        left -= Math.max(1, seconds);
        await sleep(seconds * 1000 + WAIT_MARGIN_MS, undefined, { signal });
      }
    }
  };
}

function retryAfterOf(err: unknown): number | undefined {
  if (!(err instanceof AppError) || err.code !== "rate_limited") return undefined;
  return err.details.retryAfterSeconds;
}
