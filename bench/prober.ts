/**
 * The `/healthz` prober of the load benchmark, run in a process of its own as a kubelet or a load
 * balancer is: in the load generator's process, its busy event loop (p99 delay 26–61 ms on a 2-core
 * machine) added to every probe. `ProberProcess.start` forks this file and it probes until `stop`; then it
 * sends its recorder back over IPC and exits.
 */
import { fork, type ChildProcess } from "node:child_process";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { probe, Recorder, TIMEOUT_MS } from "./load-clients.js";

const START_TIMEOUT_MS = 30_000;

interface Order {
  url: string;
}

/** A recorder as it crosses the IPC channel: send times as epoch milliseconds, so either process can place them. */
interface Recorded {
  latencies: Array<[string, number[]]>;
  sentAtEpoch: Array<[string, number[]]>;
  failures: Array<[string, Array<[string, number]>]>;
}

/** A prober process: it probes from `start` until `stop`, which returns what it measured. */
export class ProberProcess {
  private constructor(private readonly child: ChildProcess) {}

  static async start(url: string): Promise<ProberProcess> {
    const child = fork(fileURLToPath(import.meta.url), [], {
      execArgv: ["--conditions=@svc/source", "--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const probing = new Promise<void>((resolve, reject) => {
      child.once("message", () => resolve());
      child.once("exit", (code) => reject(new Error(`the prober exited (${code}) before it was probing`)));
    });
    child.send({ url } satisfies Order);
    await withBound(probing, START_TIMEOUT_MS, () => child.kill());
    return new ProberProcess(child);
  }

  /** Stops probing, waits for the probes in flight, and returns every probe (send times in this process's clock). */
  async stop(): Promise<Recorder> {
    const answer = new Promise<Recorded>((resolve, reject) => {
      this.child.once("message", (message) => resolve(message as Recorded));
      this.child.once("exit", (code) => reject(new Error(`the prober exited (${code}) before reporting`)));
    });
    this.child.send("stop");
    const recorder = new Recorder();
    merge(recorder, await withBound(answer, TIMEOUT_MS + START_TIMEOUT_MS, () => this.child.kill()));
    return recorder;
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
    const recorder = new Recorder();
    let running = true;
    process.once("message", () => (running = false));
    const probing = probe(recorder, (message as Order).url, () => running);
    process.send!("probing");
    void probing.then(() => process.send!(record(recorder), () => process.disconnect()));
  });
}
