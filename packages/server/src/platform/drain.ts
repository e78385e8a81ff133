/**
 * A background drain of a durable queue (webhook deliveries, inbound receipts): `kick` runs `runDue` now, or
 * once more after the run under way, and again while a run handled a full batch; `wakeIn` kicks when a held
 * item is next due (a hint only: the queue's own poll finds it anyway), one timer for the soonest, never past
 * `maxSleepMs`; `stop` ends the timer and waits for the run under way.
 */
export interface Drain {
  kick(): void;
  wakeIn(ms: number): void;
  stop(): Promise<void>;
}

export function createDrain(options: { runDue: () => Promise<number>; batch: number; maxSleepMs?: number; onError?: (err: unknown) => void }): Drain {
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  let wake: { timer: NodeJS.Timeout; at: number } | undefined;

  const drain: Drain = {
    kick() {
      if (stopped) return;
      if (running) {
        again = true;
        return;
      }
      running = (async () => {
        let handled = 0;
        do {
          again = false;
          handled = await options.runDue().catch((err: unknown) => {
            options.onError?.(err);
            return 0;
          });
        } while ((again || handled === options.batch) && !stopped);
      })().finally(() => {
        running = undefined;
      });
    },
    wakeIn(ms) {
      const delay = Math.min(Math.max(ms, 0), options.maxSleepMs ?? Number.POSITIVE_INFINITY);
      const at = Date.now() + delay;
      if (stopped || (wake && wake.at <= at)) return;
      if (wake) clearTimeout(wake.timer);
      const timer = setTimeout(() => {
        wake = undefined;
        drain.kick();
      }, delay);
      timer.unref();
      wake = { timer, at };
    },
    async stop() {
      stopped = true;
      if (wake) clearTimeout(wake.timer);
      await running;
    },
  };
  return drain;
}
