import { hostname } from "node:os";
import { eq } from "drizzle-orm";
import { agentRuntimeLocks } from "../db/schema/index.js";
import { dbNow, dbSecondsFromNow } from "../db/schema/columns.js";
import { newUuid } from "../platform/ids.js";
import { claimNext, type Step } from "./claim.js";
import { runModelStep, type StepDeps } from "./model-step.js";
import { runToolStep } from "./tool-step.js";

export interface WorkerOptions {
  /** Steps (model calls or batches of MCP calls) run at once by this process. */
  concurrency: number;
  leaseSeconds: number;
  /** Upper bound on how long an idle slot waits before looking again when no hint arrives. */
  pollMs: number;
}

export interface WorkerLog {
  warn(obj: unknown, msg: string): void;
  error(obj: unknown, msg: string): void;
}

/**
 * The agent loop's worker: `concurrency` slots, each claiming one agent at a time from the wakeup table.
 * A slot that finds nothing sleeps until a wakeup hint wakes it (one idle slot per hint) or `pollMs`.
 * While a model call runs, its runtime lease is renewed every third of the lease; a renewal that finds
 * the lock gone or a cancel requested aborts the call. `stop` aborts in-flight calls (they are recorded as retries) and waits for the slots.
 */
export function startWorker(deps: StepDeps, options: WorkerOptions, log: WorkerLog) {
  const workerId = `${hostname()}:${process.pid}:${newUuid().slice(-12)}`;
  const inFlight = new Map<string, AbortController>();
  let running = true;
  // Idle slots, longest-waiting first. A hint wakes one slot, not all: every woken slot runs a claim query,
  // and a herd of empty claims (each hint × every idle slot) starved the one slot doing the work.
  const idle: Array<() => void> = [];
  const wakeOne = () => idle.shift()?.();
  const wakeAll = () => {
    for (const wake of idle.splice(0)) wake();
  };
  const unsubscribers: Array<Promise<() => void>> = [
    deps.signals.onWakeup(wakeOne),
    deps.signals.onCancel((agentId) => inFlight.get(agentId)?.abort(new Error("canceled"))),
  ];
  deps.signals.onReconnect(wakeAll);

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        const at = idle.indexOf(done);
        if (at >= 0) idle.splice(at, 1);
        resolve();
      }
      idle.push(done);
    });
  }

  async function slot(): Promise<void> {
    while (running) {
      let step: Step | null | undefined;
      try {
        step = await deps.db.tx((tx) => claimNext(tx, deps.signals, { workerId, leaseSeconds: options.leaseSeconds }));
      } catch (err) {
        log.warn({ err }, "claiming work failed; retrying");
        await sleep(options.pollMs);
        continue;
      }
      if (step === undefined) {
        await sleep(options.pollMs);
        continue;
      }
      // Found work, so more may be waiting (a burst of inputs sends many hints but they may have come
      // while every slot was busy): pass the baton to one idle slot.
      wakeOne();
      if (step) await execute(step);
    }
  }

  async function execute(step: Step): Promise<void> {
    const controller = new AbortController();
    inFlight.set(step.agentId, controller);
    const renewal = setInterval(() => void renew(step, controller), (options.leaseSeconds * 1000) / 3);
    try {
      if (step.kind === "model") await runModelStep(deps, step, controller.signal);
      else await runToolStep(deps, step, controller.signal);
    } catch (err) {
      // The lease runs out and maintenance turns the work into a retry; nothing is lost.
      log.error({ err, agentId: step.agentId, step: step.kind }, "recording a step failed");
    } finally {
      clearInterval(renewal);
      inFlight.delete(step.agentId);
    }
  }

  async function renew(step: Step, controller: AbortController): Promise<void> {
    try {
      const [lock] = await deps.db.read
        .update(agentRuntimeLocks)
        .set({ renewedAt: dbNow, leaseExpiresAt: dbSecondsFromNow(options.leaseSeconds) })
        .where(eq(agentRuntimeLocks.id, step.lockId))
        .returning({ cancelRequestedAt: agentRuntimeLocks.cancelRequestedAt });
      if (!lock || lock.cancelRequestedAt) controller.abort(new Error(lock ? "canceled" : "runtime lease lost"));
    } catch (err) {
      log.warn({ err, agentId: step.agentId }, "renewing the runtime lease failed; will retry");
    }
  }

  const slots = Array.from({ length: options.concurrency }, () => slot());
  return {
    workerId,
    async stop(): Promise<void> {
      running = false;
      wakeAll();
      for (const controller of inFlight.values()) controller.abort(new Error("worker shutting down"));
      await Promise.all(slots);
      for (const unsubscribe of unsubscribers) (await unsubscribe)();
    },
  };
}

export type Worker = ReturnType<typeof startWorker>;
