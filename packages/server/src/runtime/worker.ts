import { hostname } from "node:os";
import { newUuid } from "../platform/ids.js";
import type { Metrics } from "../platform/metrics.js";
import { claimNext, type ClaimOptions, type Step } from "./claim.js";
import { prepareModelCall } from "./caches.js";
import { runModelStep, type StepDeps } from "./model-step.js";
import { traceStep, type ClaimTime } from "./step-trace.js";
import { renewLease } from "./store/lease.js";
import { runToolStep } from "./tool-step.js";
import { budgetCrossingLogged, modelStepFinished, stepStarted, toolStepFinished, type WorkerLog } from "./step-log.js";

export type { WorkerLog } from "./step-log.js";

export interface WorkerOptions {
  /** Steps (model calls or batches of MCP calls) run at once by this process. */
  concurrency: number;
  leaseSeconds: number;
  /** Upper bound on how long idle slots wait before one looks again when no hint arrives. */
  pollMs: number;
  metrics?: Pick<Metrics, "steps" | "stepDuration" | "claimDuration">;
}

/**
 * The agent loop's worker: `concurrency` slots, each claiming one agent at a time from the wakeup table.
 * Idle slots wait in a queue; a wakeup hint, or the worker's one poll timer, wakes the longest-waiting
 * one, and a slot that claimed work wakes one more only when the claim saw another agent ready. A slot
 * claims again after a step only when hinted, so an agent that went quiet costs no empty claim. While a
 * step runs, its runtime lease is renewed every third of the lease; a renewal that finds the lock gone
 * or a cancel requested aborts the step. `stop` aborts in-flight steps (recorded as retries) and waits.
 */
export function startWorker(deps: StepDeps, options: WorkerOptions, log: WorkerLog) {
  const workerId = `${hostname()}:${process.pid}:${newUuid().slice(-12)}`;
  const claimOptions: ClaimOptions = { workerId, leaseSeconds: options.leaseSeconds, prepareModelCall: prepareModelCall(deps.caches) };
  const inFlight = new Map<string, AbortController>();
  let running = true;
  // Idle slots, longest-waiting first. A hint wakes one slot, not all: every woken slot runs a claim query.
  // A hint that finds every slot busy is owed: the next slot to finish claims again instead of waiting.
  const idle: Array<() => void> = [];
  let owed = 0;
  const wakeOne = () => {
    const wake = idle.shift();
    if (wake) wake();
    else owed = Math.min(owed + 1, options.concurrency);
  };
  const wakeAll = () => {
    for (const wake of idle.splice(0)) wake();
  };
  const poll = setInterval(() => idle.shift()?.(), options.pollMs);
  const unsubscribers: Array<Promise<() => void>> = [
    deps.signals.onWakeup(wakeOne),
    deps.signals.onCancel((agentId) => inFlight.get(agentId)?.abort(new Error("canceled"))),
    deps.signals.onModelAccessChanged(() => deps.caches.endpoints.invalidate()),
  ];
  deps.signals.onReconnect(() => {
    deps.caches.endpoints.invalidate();
    wakeAll();
  });

  const waitForWork = () =>
    new Promise<void>((resolve) => {
      if (!running || owed > 0) {
        owed = Math.max(0, owed - 1);
        resolve();
      } else {
        idle.push(resolve);
      }
    });

  async function slot(): Promise<void> {
    while (running) {
      let claim: Awaited<ReturnType<typeof claimNext>>;
      const claimed: ClaimTime = { start: performance.now(), end: 0 };
      try {
        const timer = options.metrics?.claimDuration.startTimer();
        claim = await deps.db.tx((tx) => claimNext(tx, deps.signals, claimOptions, { machines: deps.machines, artifacts: deps.artifacts, kinds: deps.kinds, delegates: deps.delegates, memory: deps.memory }));
        timer?.();
        claimed.end = performance.now();
      } catch (err) {
        log.warn({ err }, "claiming work failed; retrying");
        await waitForWork();
        continue;
      }
      if (!claim) {
        await waitForWork();
        continue;
      }
      // Hints that came while every slot was busy are gone: the claim tells whether more work waits.
      if (claim.moreReady) wakeOne();
      for (const crossing of claim.crossings) budgetCrossingLogged(log, crossing);
      if (claim.step) await execute(claim.step, claimed);
      // A step that left more work for its agent says so with a wakeup hint, like any other producer.
      await waitForWork();
    }
  }

  async function execute(step: Step, claimed: ClaimTime): Promise<void> {
    const controller = new AbortController();
    inFlight.set(step.agentId, controller);
    const renewal = setInterval(() => void renew(step, controller), (options.leaseSeconds * 1000) / 3);
    const timer = options.metrics?.stepDuration.startTimer({ kind: step.kind });
    let outcome = "done";
    const started = performance.now();
    stepStarted(log, step);
    try {
      await traceStep(step, claimed, async () => {
        if (step.kind === "model") modelStepFinished(log, step, await runModelStep(deps, step, controller.signal), performance.now() - started);
        else {
          await runToolStep(deps, step, controller.signal);
          toolStepFinished(log, step, performance.now() - started);
        }
      });
    } catch (err) {
      outcome = "error";
      // The lease runs out and maintenance turns the work into a retry; nothing is lost. The cached
      // conversation may be ahead of what was recorded, so it is read anew next time.
      deps.caches.conversations.forget(step.agentId);
      log.error({ err, agentId: step.agentId, step: step.kind }, "recording a step failed");
    } finally {
      timer?.();
      options.metrics?.steps.inc({ kind: step.kind, outcome });
      clearInterval(renewal);
      inFlight.delete(step.agentId);
    }
  }

  async function renew(step: Step, controller: AbortController): Promise<void> {
    try {
      const lease = await renewLease(deps.db, step.lockId, options.leaseSeconds);
      if (lease !== "held") controller.abort(new Error(lease === "canceled" ? "canceled" : "runtime lease lost"));
    } catch (err) {
      log.warn({ err, agentId: step.agentId }, "renewing the runtime lease failed; will retry");
    }
  }

  const slots = Array.from({ length: options.concurrency }, () => slot());
  return {
    workerId,
    async stop(): Promise<void> {
      running = false;
      clearInterval(poll);
      wakeAll();
      for (const controller of inFlight.values()) controller.abort(new Error("worker shutting down"));
      await Promise.all(slots);
      for (const unsubscribe of unsubscribers) (await unsubscribe)();
    },
  };
}

export type Worker = ReturnType<typeof startWorker>;
