import type { Database, Tx } from "../../platform/db/index.js";
import { newUuid } from "../../platform/ids.js";
import { localDate, nextOccurrence, schedule } from "./cron.js";
import { renderTemplate, TemplateError } from "./template.js";
import * as store from "./store.js";

/**
 * The one durable scheduler (DESIGN.md rule 3): every process that runs it polls the same table, and a
 * due firing is claimed by exactly one of them. A firing is two transactions:
 *
 * 1. the claim: due rows (`next_fire_at` at or before now) are taken `FOR UPDATE SKIP LOCKED` and given
 *    this run's claim token and a lease on the database clock (`claimed_until`);
 * 2. the firing: the row is locked again by its token, the target's effect (a queued input, a launch)
 *    is written, and the trigger advances (`last_fired_at`, `next_fire_at`), all in one transaction.
 *
 * A process that dies between the two, or inside the second, leaves no effect: the second transaction
 * never committed, and once the lease expires another process claims the row and fires it. A firing
 * that committed advanced the row, so it is never claimed again for that slot. Missed slots coalesce:
 * the claim fires the oldest missed slot (`next_fire_at` was left there) and the advance computes the
 * next one after now.
 *
 * What a firing does is its target's `FiringHandler`; the claim and the advance know nothing of it.
 */

export interface Firing {
  trigger: store.TriggerRow;
  /** The scheduled instant being fired (the trigger's `next_fire_at` when claimed). */
  slot: Date;
  /** The rendered message template. */
  message: string;
}

/** What a firing's target does, inside the firing's transaction. Throws FiringFailure when it cannot. */
export interface FiringHandler {
  fire(tx: Tx, firing: Firing): Promise<void>;
}

/**
 * What follows a firing that did not happen: `retry` tries the same slot again after a backoff (it may
 * pass); `skip` gives the slot up and waits for the next one (reference docs: integrations/overview, "a
 * disconnected integration skips an occurrence with a visible failure"); `disable` stops the trigger
 * (retrying cannot help).
 */
export type AfterFailure = "retry" | "skip" | "disable";

export class FiringFailure extends Error {
  constructor(
    message: string,
    readonly then: AfterFailure,
  ) {
    super(message);
  }
}

export interface SchedulerOptions {
  db: Database;
  handlers: Record<string, FiringHandler>;
  leaseSeconds: number;
  /** Triggers claimed by one run at most; the next run takes the rest. */
  batchSize?: number;
  log?: { warn(obj: object, msg: string): void };
}

/** Retry backoff after the n-th failed attempt at one slot: 1, 2, 4… minutes, at most an hour. */
export function retryDelaySeconds(failedAttempts: number): number {
  return Math.min(60 * 2 ** Math.max(0, failedAttempts - 1), 3600);
}

export function createScheduler(options: SchedulerOptions) {
  const { db, handlers, leaseSeconds } = options;
  const batchSize = options.batchSize ?? 50;

  /**
   * The scheduler's one entry point: fires every trigger due at `now` (default: the database clock) and
   * returns how many fired. Tests pass `now` to fire across a daylight-saving change without waiting.
   */
  async function runDue(now?: Date): Promise<number> {
    const at = now ?? (await store.databaseNow(db.read));
    const token = newUuid();
    const claimed = await store.claimDue(db, at, token, leaseSeconds, batchSize);
    let fired = 0;
    for (const trigger of claimed) {
      if (await fireClaimed(trigger, token, at)) fired++;
    }
    return fired;
  }

  async function fireClaimed(claimed: store.TriggerRow, token: string, at: Date): Promise<boolean> {
    try {
      return await db.tx(async (tx) => {
        const trigger = await store.lockClaimed(tx, claimed.id, token);
        // Edited, disabled or deleted since the claim: the edit decided what happens next.
        if (!trigger || !trigger.enabled || !trigger.nextFireAt) return false;
        const slot = trigger.nextFireAt;
        const handler = handlers[trigger.targetKind];
        if (!handler) throw new FiringFailure(`this svc cannot fire targets of type ${trigger.targetKind}`, "disable");
        await handler.fire(tx, { trigger, slot, message: render(trigger, slot) });
        const after = at > slot ? at : slot;
        await store.advance(tx, trigger.id, slot, nextOccurrence(schedule(trigger.cron, trigger.timezone), after));
        return true;
      });
    } catch (err) {
      const failure = err instanceof FiringFailure ? err : new FiringFailure("the firing failed on an internal error; it will be retried", "retry");
      if (!(err instanceof FiringFailure)) options.log?.warn({ err, cronTriggerId: claimed.id }, "cron trigger firing failed");
      if (failure.then === "skip") {
        const slot = claimed.nextFireAt ?? at;
        await store.recordSkip(db, claimed.id, token, failure.message, nextOccurrence(schedule(claimed.cron, claimed.timezone), at > slot ? at : slot));
      } else {
        await store.recordFailure(db, claimed.id, token, failure.message, failure.then === "retry" ? retryDelaySeconds(claimed.failedAttempts + 1) : null);
      }
      return false;
    }
  }

  return { runDue };
}

export type Scheduler = ReturnType<typeof createScheduler>;

/** `template` (the trigger's message template by default) with the variables for this slot (docs/schedules.md lists them). */
export function render(trigger: store.TriggerRow, slot: Date, template = trigger.messageTemplate): string {
  try {
    const message = renderTemplate(template, {
      name: trigger.name,
      fired_at: slot.toISOString(),
      last_fired_at: trigger.lastFiredAt?.toISOString() ?? "",
      local_date: localDate(slot, trigger.timezone),
    });
    if (message.trim() === "") throw new TemplateError("the rendered message is empty");
    return message;
  } catch (err) {
    if (err instanceof TemplateError) throw new FiringFailure(`the message template could not be rendered: ${err.message}`, "disable");
    throw err;
  }
}

/**
 * Runs the scheduler every `intervalMs` until stopped; `stop` waits for the run in flight. A failing run
 * is logged and tried again at the next tick (the maintenance loop's shape).
 */
export function startScheduler(scheduler: Scheduler, log: { warn(obj: object, msg: string): void }, intervalMs: number) {
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;
  let stopped = false;

  function next(delay: number) {
    if (stopped) return;
    timer = setTimeout(() => {
      inFlight = scheduler
        .runDue()
        .then(
          () => undefined,
          (err: unknown) => log.warn({ err }, "scheduler run failed; retrying next tick"),
        )
        .finally(() => {
          inFlight = undefined;
          next(intervalMs);
        });
    }, delay);
    timer.unref();
  }

  next(0);
  return {
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearTimeout(timer);
      await inFlight;
    },
  };
}
