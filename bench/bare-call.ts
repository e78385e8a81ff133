/**
 * The provider-side baseline of benchmarks 4 and 5: a request svc sent, replayed to the same fake
 * provider with undici (body read to the end), so the baseline pays the same provider-side cost
 * (parsing the same body, streaming the same reply) without svc.
 */
import { performance } from "node:perf_hooks";
import { Agent, request } from "undici";
import type { FakeProvider } from "../packages/server/src/runtime/models/fake-provider/index.js";

export interface BareCalls {
  /** Latency of every measured call, in ms. */
  latencies: number[];
  /** Wall time of all measured calls, in ms. */
  wallMs: number;
}

/** Runs `items` through `work` on `lanes` concurrent lanes. */
export async function inLanes<T>(items: T[], lanes: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/** Replays the provider's last recorded request `calls` times on `lanes` lanes, after 20 warm-up calls. */
export async function replayLastRequest(provider: FakeProvider, calls: number, lanes = 1): Promise<BareCalls> {
  const sample = provider.requests.at(-1);
  if (!sample) throw new Error("the provider has not been called yet: nothing to replay");
  // Serialized once: the bare call should not pay for building the body any more than sending it.
  const body = JSON.stringify(sample.body);
  const dispatcher = new Agent({ connections: lanes + 4 });
  const call = async () => {
    const reply = await request(`${provider.url}${sample.path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-bench" },
      body,
      dispatcher,
    });
    await reply.body.text();
  };
  try {
    for (let i = 0; i < 20; i++) await call();
    const latencies: number[] = [];
    const start = performance.now();
    await inLanes(Array.from({ length: calls }, (_, i) => i), lanes, async () => {
      const t = performance.now();
      await call();
      latencies.push(performance.now() - t);
    });
    return { latencies, wallMs: performance.now() - start };
  } finally {
    await dispatcher.close();
  }
}
