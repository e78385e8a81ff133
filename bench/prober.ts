/**
 * The `/healthz` prober of the load benchmark, run in a process of its own as a kubelet or a load
 * balancer is: in the load generator's process, its busy event loop (p99 delay 26–61 ms on a 2-core
 * machine) added to every probe. `ProberProcess.start` forks this file before the load; `run` tells it
 * until when to probe, and it sends its recorder back over IPC and exits.
 */
import { fork, type ChildProcess } from "node:child_process";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { probe, Recorder, TIMEOUT_MS } from "./load-clients.js";

const START_TIMEOUT_MS = 30_000;

interface Order {
  url: string;
  deadlineEpoch: number;
}

/** A recorder as it crosses the IPC channel: send times as epoch milliseconds, so either process can place them. */
interface Recorded {
  latencies: Array<[string, number[]]>;
  sentAtEpoch: Array<[string, number[]]>;
  failures: Array<[string, Array<[string, number]>]>;
}

/** A prober process, started before the load so that its start-up does not fall inside the window. */
export class ProberProcess {
  private constructor(
    private readonly child: ChildProcess,
    private readonly url: string,
  ) {}

  static async start(url: string): Promise<ProberProcess> {
    const child = fork(fileURLToPath(import.meta.url), [], {
      execArgv: ["--conditions=@svc/source", "--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const ready = new Promise<void>((resolve, reject) => {
      child.once("message", () => resolve());
      child.once("exit", (code) => reject(new Error(`the prober exited (${code}) before it was ready`)));
    });
    await withBound(ready, START_TIMEOUT_MS, () => child.kill());
    return new ProberProcess(child, url);
  }

  /** Probes until `deadline` (this process's performance.now()) and adds what was measured to `recorder`. */
  async run(recorder: Recorder, deadline: number): Promise<void> {
    const answer = new Promise<Recorded>((resolve, reject) => {
      this.child.once("message", (message) => resolve(message as Recorded));
      this.child.once("exit", (code) => reject(new Error(`the prober exited (${code}) before reporting`)));
    });
    this.child.send({ url: this.url, deadlineEpoch: performance.timeOrigin + deadline } satisfies Order);
    merge(recorder, await withBound(answer, deadline - performance.now() + TIMEOUT_MS + START_TIMEOUT_MS, () => this.child.kill()));
  }
}

function merge(recorder: Recorder, recorded: Recorded): void {
  const sent = new Map(recorded.sentAtEpoch);
  for (const [kind, latencies] of recorded.latencies) {
    const at = sent.get(kind) ?? [];
    latencies.forEach((ms, i) => recorder.ok(kind as Parameters<Recorder["ok"]>[0], ms, at[i]! - performance.timeOrigin));
  }
  for (const [kind, reasons] of recorded.failures) {
    for (const [reason, count] of reasons) for (let i = 0; i < count; i++) recorder.fail(kind as Parameters<Recorder["fail"]>[0], reason);
  }
}

async function withBound<T>(promise: Promise<T>, ms: number, onTimeout: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new Error(`the prober did not report within ${Math.round(ms)} ms`));
    }, ms);
  });
  try {
    return await Promise.race([promise, bound]);
  } finally {
    clearTimeout(timer);
  }
}

function record(recorder: Recorder): Recorded {
  return {
    latencies: [...recorder.latencies],
    sentAtEpoch: [...recorder.sentAt].map(([kind, at]) => [kind, at.map((t) => t + performance.timeOrigin)]),
    failures: [...recorder.failures].map(([kind, reasons]) => [kind, [...reasons]]),
  };
}

if (process.send && process.argv[1] === fileURLToPath(import.meta.url)) {
  process.once("message", (message) => {
    const order = message as Order;
    const recorder = new Recorder();
    void probe(recorder, order.url, order.deadlineEpoch - performance.timeOrigin).then(() => process.send!(record(recorder), () => process.disconnect()));
  });
  process.send("ready");
}
