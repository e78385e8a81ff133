import { performance, type EventLoopUtilization } from "node:perf_hooks";
import { getHeapStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/*
 * Gives V8's heap back once a burst of work is over (docs/performance.md, "Memory"). V8 collects its old space
 * when JavaScript allocates; a process that goes quiet after a load keeps every page the load used, garbage
 * and all. Measured in bench/ on PostgreSQL: 60 s after 200 clients left, the heap held 326 MB (189 MB "in
 * use", against 98 MB at idle), and one full collection brought it to 112 MB. So every interval, when the
 * event loop was nearly idle over the whole interval and the heap has grown by more than TRIM_GROWTH_MB since
 * svc last collected, svc runs one full collection. A busy process is never paused for it, and a heap that
 * stays large because what it holds is alive is collected once, not at every interval.
 */

/** Growth of the committed heap, since the last collection svc ran, that is worth a full collection. */
const TRIM_GROWTH_MB = 32;
/** The share of an interval the event loop may have been busy for the process to count as quiet. */
const QUIET_EVENT_LOOP_USE = 0.05;

export interface HeapTrimState {
  /** The event loop's busy share over the last interval (0 to 1). */
  eventLoopUse: number;
  /** Bytes committed to the JavaScript heap now, and right after the last collection svc ran (or at start). */
  heapBytes: number;
  baselineBytes: number;
}

export function shouldTrim(state: HeapTrimState): boolean {
  return state.eventLoopUse <= QUIET_EVENT_LOOP_USE && state.heapBytes - state.baselineBytes > TRIM_GROWTH_MB * 2 ** 20;
}

/**
 * V8's full collection as a function. Node offers it only with --expose-gc; the flag can be set once the
 * process runs, and a new context then has `gc` (as Jest does for its leak detection). Undefined if refused.
 */
export function fullCollection(): (() => void) | undefined {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing) return existing;
  try {
    setFlagsFromString("--expose-gc");
    const gc: unknown = runInNewContext("gc");
    return typeof gc === "function" ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  }
}

export interface HeapTrim {
  stop(): Promise<void>;
}

export interface HeapTrimLog {
  debug(fields: object, message: string): void;
}

/** Checks every `intervalMs` (0: never) and collects when `shouldTrim` says so; `onTrim` hears the heap before and after. */
export function startHeapTrim(intervalMs: number, log: HeapTrimLog, onTrim?: (before: number, after: number) => void): HeapTrim {
  const gc = intervalMs > 0 ? fullCollection() : undefined;
  if (!gc) return { stop: async () => {} };
  let baselineBytes = getHeapStatistics().total_heap_size;
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const eventLoopUse = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    const heapBytes = getHeapStatistics().total_heap_size;
    if (!shouldTrim({ eventLoopUse, heapBytes, baselineBytes })) return;
    gc();
    baselineBytes = getHeapStatistics().total_heap_size;
    log.debug({ beforeMb: Math.round(heapBytes / 2 ** 20), afterMb: Math.round(baselineBytes / 2 ** 20) }, "heap collected after a quiet interval");
    onTrim?.(heapBytes, baselineBytes);
  }, intervalMs);
  timer.unref();
  return {
    stop: async () => clearInterval(timer),
  };
}
