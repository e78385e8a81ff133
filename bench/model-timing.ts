/**
 * The worker's own model client (the AI SDK over the guarded fetch, as `startAgentWorker` builds it),
 * wrapped to time every call, so a step's time can be split into the model client and the rest.
 */
import { performance } from "node:perf_hooks";
import type { Config } from "../packages/server/src/config.js";
import { createGuardedFetch } from "../packages/server/src/platform/net/guarded-fetch.js";
import { createModelClient } from "../packages/server/src/runtime/models/ai-sdk-client.js";
import type { ModelClient } from "../packages/server/src/runtime/models/types.js";

export interface ModelCall {
  start: number;
  end: number;
}

export interface TimedModelClient {
  client: ModelClient;
  /** Every finished call, in the order they finished. */
  calls: ModelCall[];
}

export function timedModelClient(config: Config): TimedModelClient {
  const inner = createModelClient({ fetch: createGuardedFetch(config) });
  const calls: ModelCall[] = [];
  const client: ModelClient = {
    async stream(request, onDelta) {
      const start = performance.now();
      try {
        return await inner.stream(request, onDelta);
      } finally {
        calls.push({ start, end: performance.now() });
      }
    },
  };
  return { client, calls };
}

/**
 * Per-step time of one agent's back-to-back steps: the time between the starts of consecutive model
 * calls is one whole step (record the previous reply, claim, build the request, call the model).
 */
export function stepIntervals(calls: ModelCall[]): number[] {
  const starts = calls.map((c) => c.start).sort((a, b) => a - b);
  return starts.slice(1).map((start, i) => start - starts[i]!);
}
