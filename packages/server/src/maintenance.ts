import type { FastifyBaseLogger } from "fastify";

export interface MaintenanceTask {
  name: string;
  /** Does one bounded batch of work and returns how many items it handled. */
  run(): Promise<number>;
}

/**
 * A task's failure that is the world's, not svc's (a registry an offline machine cannot reach): the log
 * gets one warning with the reason, not an error's stack.
 */
export class TaskUnavailable extends Error {
  override name = "TaskUnavailable";
}

/**
 * Periodic housekeeping (expired sessions, rate-limit windows, device flows…). Each tick runs every task
 * once; a failing task is logged and retried next tick. `stop` waits for the tick in flight.
 */
export function startMaintenance(tasks: MaintenanceTask[], log: FastifyBaseLogger, intervalMs = 60_000) {
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;
  let stopped = false;

  async function tick(): Promise<void> {
    for (const task of tasks) {
      if (stopped) return;
      try {
        const handled = await task.run();
        if (handled > 0) log.debug({ task: task.name, handled }, "maintenance task ran");
      } catch (err) {
        if (err instanceof TaskUnavailable) log.warn({ task: task.name, reason: err.message }, `maintenance task ${task.name} could not run: ${err.message}`);
        else log.warn({ err, task: task.name }, "maintenance task failed; retrying next tick");
      }
    }
  }

  function schedule(delay: number) {
    if (stopped) return;
    timer = setTimeout(() => {
      inFlight = tick().finally(() => {
        inFlight = undefined;
        schedule(intervalMs);
      });
    }, delay);
    timer.unref();
  }

  schedule(0);
  return {
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearTimeout(timer);
      await inFlight;
    },
  };
}
