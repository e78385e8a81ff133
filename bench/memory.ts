/**
 * The memory benchmark (issue 34): `svc serve` as `npm start` runs it on a new database, its resident memory
 * at idle, after the load benchmark's run and while it comes back afterwards, beside the targets. RSS
 * does not depend on how busy the machine is, unlike the load benchmark's times; the machine's load average
 * is printed beside each figure all the same, since a busy machine runs the load's clients more slowly.
 */
import { loadavg } from "node:os";
import { progress, type BenchResult, type DbKind, type Row } from "./lib.js";
import { svcRun, type LoadOptions, type ResidentByKind, type SettleOptions, type V8Heap } from "./load.js";
import { buildServer, startProviderProcess } from "./processes.js";

/** The bounds: idle and after the load (embedded), and how far memory must come back within how long (both kinds). */
export const MEMORY_TARGETS = { idleMb: 400, afterLoadMb: 600, within: 0.2, settleSeconds: 60 };
const SETTLE: SettleOptions = { idleWaitMs: 5_000, settleSeconds: MEMORY_TARGETS.settleSeconds, within: MEMORY_TARGETS.within };

const load = () => loadavg().map((n) => n.toFixed(1)).join(" ");

export async function memoryTest(kind: DbKind, options: LoadOptions): Promise<BenchResult> {
  buildServer();
  const provider = await startProviderProcess();
  try {
    const loadBefore = load();
    const run = await svcRun(kind, provider.url, options, SETTLE);
    const loadAfter = load();
    const settled = run.settled;
    const backMb = run.rssIdleMb * (1 + MEMORY_TARGETS.within);
    const verdict = (ok: boolean) => (ok ? "met" : "not met");
    const embedded = kind === "pglite";
    const lines = [
      [`idle (${SETTLE.idleWaitMs / 1000} s after /healthz answered, no agent)`, run.rssIdleMb, embedded ? `≤ ${MEMORY_TARGETS.idleMb} MB: ${verdict(run.rssIdleMb <= MEMORY_TARGETS.idleMb)}` : "–"],
      [`after setup (${options.agents} agents, each one step)`, run.rssBeforeMb, "–"],
      [`peak during the load (sampled every 0.5 s)`, run.rssPeakMb, "–"],
      [`right after the load`, run.rssAfterMb, embedded ? `≤ ${MEMORY_TARGETS.afterLoadMb} MB: ${verdict(run.rssAfterMb <= MEMORY_TARGETS.afterLoadMb)}` : "–"],
      [
        settled ? `after the clients left, ${(settled.afterMs / 1000).toFixed(0)} s later` : "after the clients left: not read (svc exited)",
        settled?.rssMb ?? Number.NaN,
        `≤ ${backMb.toFixed(0)} MB (idle + ${MEMORY_TARGETS.within * 100} %) within ${MEMORY_TARGETS.settleSeconds} s: ${verdict(settled !== undefined && settled.rssMb <= backMb)}`,
      ],
    ] as const;
    for (const [what, mb, target] of lines) progress(`memory (${kind}): ${what}: ${mb.toFixed(0)} MB   target ${target}`);
    const rows: Row[] = [];
    return {
      id: "memory",
      title: `Memory: svc serve's resident set at idle, after ${options.clients} clients for ${options.seconds} s, and ${MEMORY_TARGETS.settleSeconds} s later`,
      measured:
        `\`svc serve\` started as \`npm start\` starts it (built, glibc's MALLOC_ARENA_MAX=2 and MALLOC_MMAP_THRESHOLD_=131072, SVC_LOG_LEVEL=warn, ` +
        `every other setting at its default) on a new database, with the fake provider (its own process). RSS is VmRSS (/proc) of svc's process ` +
        `and any it started: ${SETTLE.idleWaitMs / 1000} s after it first answered, after the load benchmark's setup and run (the same clients, ` +
        `see "Load"), and then every second after those clients disconnected until it is within ${MEMORY_TARGETS.within * 100} % of idle, ` +
        `for ${MEMORY_TARGETS.settleSeconds} s at most.`,
      baseline: "The issue's targets: 400 MB idle and 600 MB after the load for the embedded mode; back within 20 % of idle within 60 s on both.",
      rows,
      table: {
        columns: ["reading", "RSS", "target"],
        rows: lines.map(([what, mb, target]) => [what, Number.isFinite(mb) ? `${mb.toFixed(0)} MB` : "–", target]),
      },
      facts: {
        rssIdleMb: run.rssIdleMb,
        rssBeforeMb: run.rssBeforeMb,
        rssPeakMb: run.rssPeakMb,
        rssAfterMb: run.rssAfterMb,
        rssSettledMb: settled?.rssMb ?? Number.NaN,
        settleSeconds: settled ? settled.afterMs / 1000 : Number.NaN,
        clients: options.clients,
      },
      notes: [
        `machine load average (1, 5, 15 min) before the run: ${loadBefore}; after it: ${loadAfter}`,
        `${run.steps} model steps during the load; ${run.clients.failed()} failed requests`,
        ...heldBy(run.mappedIdle, settled?.mapped),
        ...heapHeld(run.heapIdle, settled?.heap),
      ],
    };
  } finally {
    await provider.stop();
  }
}


/** What held svc's own process's resident memory at idle and at the last reading after the load (/proc/<pid>/smaps). */
function heldBy(idle: ResidentByKind | undefined, settled: ResidentByKind | undefined): string[] {
  if (!idle || !settled) return [];
  const part = (name: string, key: keyof ResidentByKind) => `${name} ${idle[key].toFixed(0)} → ${settled[key].toFixed(0)} MB`;
  return [
    `svc's process by mapping, idle → last reading after the load: ${part("WebAssembly memories (PGlite's PostgreSQL)", "webAssembly")}, ` +
      `${part("other anonymous memory (V8 heaps and code, glibc arenas, buffers)", "anonymous")}, ${part("mapped files", "files")}`,
  ];
}

/** What V8 says of its heap at idle and at the last reading after the load: committed, in use, by space, and outside it. */
function heapHeld(idle: V8Heap | undefined, settled: V8Heap | undefined): string[] {
  if (!idle || !settled) return [];
  const mb = (value: number) => value.toFixed(0);
  const spaces = Object.keys(settled.spaces)
    .filter((space) => (settled.spaces[space] ?? 0) >= 1 || (idle.spaces[space] ?? 0) >= 1)
    .map((space) => `${space} ${mb(idle.spaces[space] ?? 0)} → ${mb(settled.spaces[space] ?? 0)}`)
    .join(", ");
  return [
    `V8's heap (svc's /metrics), idle → last reading after the load: committed ${mb(idle.total)} → ${mb(settled.total)} MB, in use ` +
      `${mb(idle.used)} → ${mb(settled.used)} MB; committed by space (MB): ${spaces}; Buffers and ArrayBuffers outside the heap ${mb(idle.external)} → ${mb(settled.external)} MB`,
  ];
}
