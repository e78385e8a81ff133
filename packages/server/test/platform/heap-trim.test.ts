import { getHeapStatistics } from "node:v8";
import { describe, expect, it } from "vitest";
import { fullCollection, shouldTrim, startHeapTrim } from "../../src/platform/heap-trim.js";

/* Giving back the heap a burst of work left (SVC_HEAP_TRIM_INTERVAL_MS, docs/configuration.md). */

const MB = 2 ** 20;
const quietLog = { debug: () => {} };

/** About `mb` MB of arrays on V8's heap, reachable only from what is returned. */
const garbage = (mb: number) => Array.from({ length: mb }, () => new Array<number>(MB / 8).fill(1.5));

describe("the heap trim", () => {
  it("collects only when the process was quiet and the heap grew by more than 32 MB since it last collected", () => {
    const baselineBytes = 100 * MB;
    expect(shouldTrim({ eventLoopUse: 0.01, heapBytes: baselineBytes + 33 * MB, baselineBytes })).toBe(true);
    expect(shouldTrim({ eventLoopUse: 0.01, heapBytes: baselineBytes + 31 * MB, baselineBytes })).toBe(false);
    expect(shouldTrim({ eventLoopUse: 0.2, heapBytes: baselineBytes + 200 * MB, baselineBytes })).toBe(false);
    expect(shouldTrim({ eventLoopUse: 0.01, heapBytes: baselineBytes - 50 * MB, baselineBytes })).toBe(false);
  });

  it("has V8's full collection, which frees what nothing references", () => {
    const gc = fullCollection();
    expect(gc).toBeTypeOf("function");
    let held: unknown[] | undefined = garbage(64);
    const before = getHeapStatistics().used_heap_size;
    expect(held.length).toBe(64);
    held = undefined;
    gc!();
    expect(before - getHeapStatistics().used_heap_size).toBeGreaterThan(48 * MB);
  });

  it("gives the heap back once the event loop is quiet, and stops", async () => {
    const trims: Array<{ before: number; after: number }> = [];
    const trim = startHeapTrim(50, quietLog, (before, after) => trims.push({ before, after }));
    try {
      let held: unknown[] | undefined = garbage(96);
      expect(held.length).toBe(96);
      held = undefined;
      for (let waited = 0; trims.length === 0 && waited < 200; waited++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(trims).toHaveLength(1);
      expect(trims[0]!.before - trims[0]!.after).toBeGreaterThan(32 * MB);
    } finally {
      await trim.stop();
    }
  });

  it("is off at an interval of 0", async () => {
    const trims: number[] = [];
    const trim = startHeapTrim(0, quietLog, () => trims.push(1));
    void garbage(64);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await trim.stop();
    expect(trims).toEqual([]);
  });
});
