/**
 * Benchmark 6 (issue 9): a fixed-time load on a real `svc serve` process — closed-loop clients mixing
 * reads, queued inputs that the engine answers with model steps, and SSE followers — while a prober
 * times `/healthz`; then the same number of clients against a bare Fastify process, as the baseline.
 */
import { readFileSync } from "node:fs";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import type { Dispatcher } from "undici";
import { ApiClient } from "../packages/server/test/support/client.js";
import { inLanes } from "./bare-call.js";
import { benchProject, fmt, launchAgent, progress, sleep, summary, type BenchResult, type DbKind, type Row } from "./lib.js";
import { Connections, follow, loop, Recorder, Steps, timed, TIMEOUT_MS, type RequestKind, type Target } from "./load-clients.js";
import { ProberProcess } from "./prober.js";
import { buildServer, startBareFastify, startProviderProcess, startSvc, type Child } from "./processes.js";

export interface LoadOptions {
  clients: number;
  seconds: number;
  agents: number;
}

/** What the memory benchmark adds to a load run: a pause before the idle reading, and a watch after the load. */
export interface SettleOptions {
  /** Time left to svc after it answers, before its idle RSS is read. */
  idleWaitMs: number;
  /** After the load's clients disconnect, RSS is read every second for up to this long, until it is within `within` of idle. */
  settleSeconds: number;
  within: number;
}

export const LOAD_DEFAULTS: LoadOptions = { clients: 200, seconds: 30, agents: 20 };
const READ_KINDS: RequestKind[] = ["list agents", "get agent", "events page"];
const SAMPLE_RSS_MS = 500;

/** How the clients split: a fifth follow streams, a tenth send inputs, the rest read. */
export function mixOf(clients: number) {
  const streams = Math.round(clients * 0.2);
  const senders = Math.max(1, Math.round(clients * 0.1));
  return { streams, senders, readers: Math.max(0, clients - streams - senders) };
}

interface Window {
  began: number;
  elapsedMs: number;
  rssPeakMb: number;
  /** The load generator's own event-loop delay, p99: when high, the client side inflates the latencies. */
  generatorLagP99Ms: number;
  /** The most connections seen waiting in the server's accept queue. */
  acceptQueuePeak: number;
}

/** Runs the clients `start` makes until the deadline, sampling `child`'s memory meanwhile. */
async function window(seconds: number, child: Child, start: (deadline: number) => Array<Promise<unknown>>): Promise<Window> {
  const began = performance.now();
  let rssPeakMb = child.rssMb();
  let acceptQueuePeak = 0;
  const sampler = setInterval(() => {
    rssPeakMb = Math.max(rssPeakMb, child.rssMb());
    acceptQueuePeak = Math.max(acceptQueuePeak, child.acceptQueue());
  }, SAMPLE_RSS_MS);
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  try {
    await Promise.all(start(began + seconds * 1000));
  } finally {
    clearInterval(sampler);
    lag.disable();
  }
  return { began, elapsedMs: performance.now() - began, rssPeakMb: Math.max(rssPeakMb, child.rssMb()), generatorLagP99Ms: lag.percentile(99) / 1e6, acceptQueuePeak };
}

/** The prober's answers: under the load, and while the clients opened their connections just before it. */
interface Probed {
  prober: Recorder;
  connecting: Recorder;
  /** How long the clients took to open their connections (each with one `GET /healthz`). */
  connectMs: number;
}

/**
 * Opens every client's connection before the load, with one untimed `GET /healthz` each, all at once: the
 * load is measured on clients already connected, and this burst, like the one after a restart, is
 * reported on its own. Resolves with when it began and ended (performance.now()).
 */
async function connectAll(clients: Dispatcher[], target: Target): Promise<{ began: number; ended: number }> {
  const began = performance.now();
  const warmUp = new Recorder();
  await Promise.all(clients.map((client) => timed(warmUp, "healthz", client, { url: target.url, headers: {} }, "/healthz")));
  if (warmUp.failed() > 0) throw new Error(`${warmUp.failed()} of ${clients.length} clients could not connect`);
  return { began, ended: performance.now() };
}

/** Probes sent while the clients connected, and those sent during the load window (failures count there). */
function split(probes: Recorder, connected: { began: number; ended: number }, run: Window): Probed {
  return {
    connecting: probes.sentBetween(connected.began, connected.ended, false),
    prober: probes.sentBetween(run.began, run.began + run.elapsedMs, true),
    connectMs: connected.ended - connected.began,
  };
}

interface BareRun extends Window, Probed {
  clients: Recorder;
  rssBeforeMb: number;
  rssAfterMb: number;
}

/** The baseline: every client repeats `GET /healthz` on a Fastify process with that one route. */
async function bareRun(options: LoadOptions): Promise<BareRun> {
  const server = await startBareFastify();
  const clients = new Recorder();
  const connections = new Connections(server.url);
  try {
    const target: Target = { url: server.url, headers: {} };
    const rssBeforeMb = server.rssMb();
    const own = Array.from({ length: options.clients }, () => connections.open());
    const probing = await ProberProcess.start(server.url);
    const connected = await connectAll(own, target);
    const run = await window(options.seconds, server, (deadline) => own.map((client) => loop(deadline, () => timed(clients, "healthz", client, target, "/healthz"))));
    return { ...run, clients, ...split(await probing.stop(), connected, run), rssBeforeMb, rssAfterMb: server.rssMb() };
  } finally {
    await connections.close();
    await server.stop();
  }
}

interface SvcRun extends Window, Probed {
  clients: Recorder;
  /** Failures of the benchmark's own step-counting streams. */
  bookkeeping: Recorder;
  rssIdleMb: number;
  rssBeforeMb: number;
  rssAfterMb: number;
  /** With SettleOptions: the last reading after the load, and how long after the clients left it was taken. */
  settled?: { rssMb: number; afterMs: number; mapped: ResidentByKind; heap: V8Heap | undefined };
  /** With SettleOptions: svc's own process at idle, by kind of mapping. */
  mappedIdle?: ResidentByKind;
  /** V8's own account of its heap at idle (svc's /metrics). */
  heapIdle?: V8Heap | undefined;
  steps: number;
  backlog: number;
  streams: StreamCounters;
  /** How svc ended if it exited during the load, with the last lines it wrote. */
  crash?: { how: string; output: string };
}

interface StreamCounters {
  frames: number;
  reconnects: number;
  /** A frame whose id is not the one after the previous id (ids are dense sequences). */
  gaps: number;
  /** Streams the server ended. */
  drops: number;
}

export async function svcRun(kind: DbKind, providerUrl: string, options: LoadOptions, settle?: SettleOptions): Promise<SvcRun> {
  const svc = await startSvc(kind);
  progress(`load: svc serve (${kind}) ready, pid ${svc.pid}`);
  const connections = new Connections(svc.url);
  const stopTracking = new AbortController();
  try {
    if (settle) await sleep(settle.idleWaitMs);
    const rssIdleMb = svc.rssMb();
    const mappedIdle = settle ? residentByKind(svc.pid) : undefined;
    const heapIdle = settle ? await heapOf(svc.url) : undefined;
    const { project, ids, target } = await setUp(svc.url, providerUrl, options.agents);

    // One stream per agent counts its model steps; wait (bounded) for the launch messages' steps first.
    const steps = new Steps(ids.length);
    const bookkeeping = new Recorder();
    const stopped = new Promise<void>((resolve) => stopTracking.signal.addEventListener("abort", () => resolve(), { once: true }));
    const trackers = ids.map((id, agent) => track(bookkeeping, connections.open(true), target, `${project.base}/agents/${id}/events/stream`, stopped, () => steps.stepped(agent)));
    const settleBy = performance.now() + 60_000;
    while (steps.total() < ids.length && performance.now() < settleBy) await sleep(50);
    if (steps.total() < ids.length) throw new Error(`only ${steps.total()}/${ids.length} launch steps within 60 s:\n${svc.output()}`);
    steps.settle();
    const rssBeforeMb = svc.rssMb();
    progress(`load: ${ids.length} agents ready; ${options.clients} clients for ${options.seconds} s`);

    const mix = mixOf(options.clients);
    const clients = new Recorder();
    const streams: StreamCounters = { frames: 0, reconnects: 0, gaps: 0, drops: 0 };
    const readers = Array.from({ length: mix.readers }, () => connections.open());
    const senders = Array.from({ length: mix.senders }, () => connections.open());
    const followers = Array.from({ length: mix.streams }, () => connections.open(true));
    const probing = await ProberProcess.start(svc.url);
    const connected = await connectAll([...readers, ...senders, ...followers], target);
    const stepsBefore = steps.total();
    const run = await window(options.seconds, svc, (deadline) => [
      ...readers.map((own) => loop(deadline, () => read(clients, own, target, project.base, ids))),
      ...senders.map((own, s) => sendInputs(clients, own, target, project.base, ids, steps, owned(s, mix.senders, ids.length), deadline)),
      ...followers.map((own, c) => watch(clients, own, target, `${project.base}/agents/${ids[c % ids.length]}/events/stream`, deadline, streams)),
    ]);
    const probed = split(await probing.stop(), connected, run);
    const stepsDone = steps.total() - stepsBefore;
    const rssAfterMb = svc.rssMb();
    const how = svc.ended();
    const crash = how ? { how, output: svc.output().split("\n").slice(-12).join("\n") } : undefined;
    if (crash) progress(`load: svc serve exited during the load (${crash.how}):\n${crash.output}`);
    stopTracking.abort();
    await Promise.all(trackers);
    const settled = settle && !crash ? await settleAfter(svc, connections, rssIdleMb, settle) : undefined;
    return { ...run, clients, ...probed, bookkeeping, rssIdleMb, rssBeforeMb, rssAfterMb, settled, mappedIdle, heapIdle, steps: stepsDone, backlog: steps.backlog(), streams, ...(crash ? { crash } : {}) };
  } finally {
    stopTracking.abort();
    await connections.close();
    await svc.stop();
  }
}

/** Disconnects every client, then reads svc's RSS every second until it is within `within` of idle, for `settleSeconds` at most. */
async function settleAfter(svc: Child, connections: Connections, idleMb: number, settle: SettleOptions): Promise<NonNullable<SvcRun["settled"]>> {
  await connections.close();
  const began = performance.now();
  let rssMb = svc.rssMb();
  while (rssMb > idleMb * (1 + settle.within) && performance.now() - began < settle.settleSeconds * 1000) {
    await sleep(1000);
    rssMb = svc.rssMb();
  }
  return { rssMb, afterMs: performance.now() - began, mapped: residentByKind(svc.pid), heap: await heapOf(svc.url) };
}

/** V8's heap as svc's /metrics reports it (prom-client's Node.js metrics), in MB. */
export interface V8Heap {
  /** Committed to the JavaScript heap, and of that in use. */
  total: number;
  used: number;
  /** Committed per heap space (new, old, code, large objects, …). */
  spaces: Record<string, number>;
  /** Buffers and ArrayBuffers held by JavaScript objects, outside the heap. */
  external: number;
}

async function heapOf(url: string): Promise<V8Heap | undefined> {
  const text = await fetch(`${url}/metrics`).then((r) => (r.ok ? r.text() : undefined), () => undefined);
  if (text === undefined) return undefined;
  const mb = (name: string) => {
    const line = text.split("\n").find((l) => l.startsWith(`${name} `));
    return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) / 2 ** 20 : Number.NaN;
  };
  const spaces: Record<string, number> = {};
  for (const match of text.matchAll(/^svc_nodejs_heap_space_size_total_bytes\{space="([a-z_]+)"\} (\d+)/gm)) spaces[match[1]!] = Number(match[2]) / 2 ** 20;
  return { total: mb("svc_nodejs_heap_size_total_bytes"), used: mb("svc_nodejs_heap_size_used_bytes"), spaces, external: mb("svc_nodejs_external_memory_bytes") };
}

/** A process's resident memory in MB by what holds it (Linux /proc/<pid>/smaps). */
export interface ResidentByKind {
  /** PGlite's PostgreSQL heaps: WebAssembly memories. */
  webAssembly: number;
  /** Other anonymous memory: V8's heaps and code, glibc's arenas, buffers. */
  anonymous: number;
  /** Mapped files: the node binary, libraries. */
  files: number;
}

interface Mapping {
  start: bigint;
  end: bigint;
  perms: string;
  file: boolean;
  sizeKb: number;
  rssKb: number;
}

/** V8 follows each WebAssembly memory's accessible pages with a reservation of several GiB that it never touches. */
const WEBASSEMBLY_GUARD_KB = 4 * 1024 * 1024;

function residentByKind(pid: number): ResidentByKind {
  const mappings: Mapping[] = [];
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (header) {
      const [, start, end, perms, inode, path] = header;
      mappings.push({ start: BigInt(`0x${start}`), end: BigInt(`0x${end}`), perms: perms!, file: inode !== "0" && path!.startsWith("/"), sizeKb: 0, rssKb: 0 });
      continue;
    }
    const current = mappings.at(-1);
    const field = /^(Size|Rss):\s+(\d+) kB/.exec(line);
    if (current && field) current[field[1] === "Size" ? "sizeKb" : "rssKb"] = Number(field[2]);
  }
  const totals: ResidentByKind = { webAssembly: 0, anonymous: 0, files: 0 };
  mappings.forEach((mapping, index) => {
    const next = mappings[index + 1];
    const guarded = next !== undefined && !next.file && next.start === mapping.end && next.perms.startsWith("---") && next.sizeKb >= WEBASSEMBLY_GUARD_KB;
    const kind: keyof ResidentByKind = mapping.file ? "files" : guarded ? "webAssembly" : "anonymous";
    totals[kind] += mapping.rssKb / 1024;
  });
  return totals;
}

/** Through the API, as a user would: a project on the fake provider, an org API key for the clients, and the agents. */
export async function setUp(url: string, providerUrl: string, agents: number) {
  const api = new ApiClient(url, url);
  const project = await benchProject(api, providerUrl);
  const key = await api.orgKey(project.session, project.orgId, "admin", "load");
  const ids: string[] = [];
  await inLanes(Array.from({ length: agents }), 4, async () => void ids.push(await launchAgent(api, project, "hello")));
  const target: Target = { url, headers: { authorization: `Bearer ${key.token}` } };
  return { project, ids, target };
}

/** One read, chosen at random: a page of agents, one agent, or an agent's newest 50 events (a console opening it). */
function read(recorder: Recorder, dispatcher: Dispatcher, target: Target, base: string, ids: string[]) {
  const id = ids[Math.floor(Math.random() * ids.length)]!;
  const pick = Math.random();
  if (pick < 0.2) return timed(recorder, "list agents", dispatcher, target, `${base}/agents?limit=20`);
  if (pick < 0.6) return timed(recorder, "get agent", dispatcher, target, `${base}/agents/${id}`);
  return timed(recorder, "events page", dispatcher, target, `${base}/agents/${id}/events?before_sequence=0&limit=50`);
}

/** The agents sender `s` of `senders` feeds: every senders-th one, or one shared agent when senders outnumber agents. */
export function owned(s: number, senders: number, agents: number): number[] {
  const mine = Array.from({ length: agents }, (_, a) => a).filter((a) => a % senders === s);
  return mine.length > 0 ? mine : [s % agents];
}

/**
 * Queued inputs to the sender's agents in turn, each agent kept at most a couple of inputs ahead of its steps.
 * `accepted` hears of each input svc took (201), by its text, which is unique per agent while senders do not share agents.
 */
export async function sendInputs(
  recorder: Recorder,
  dispatcher: Dispatcher,
  target: Target,
  base: string,
  ids: string[],
  steps: Steps,
  agents: number[],
  deadline: number,
  accepted?: (agent: number, text: string) => void,
) {
  for (let n = 0; performance.now() < deadline; n++) {
    const agent = agents[n % agents.length]!;
    if (!(await steps.reserve(agent, Math.min(TIMEOUT_MS, deadline - performance.now())))) continue;
    const text = `load input ${n}`;
    const body = { content_blocks: [{ type: "text", text }], delivery_mode: "queued" };
    if ((await timed(recorder, "input", dispatcher, target, `${base}/agents/${ids[agent]}/inputs`, body)) === undefined) steps.release(agent);
    else accepted?.(agent, text);
  }
}

/**
 * An SSE follower: reads the timeline from the start, then stays 5–15 s per connection and resumes with
 * Last-Event-ID, as a client behind a proxy that cuts idle connections would; checks ids stay dense.
 */
async function watch(recorder: Recorder, dispatcher: Dispatcher, target: Target, path: string, deadline: number, counters: StreamCounters) {
  let lastId = 0;
  // The last second is too short to open and read a stream: the follower stops rather than reconnect.
  for (let connection = 0; performance.now() < deadline - 1_000; connection++) {
    if (connection > 0) counters.reconnects += 1;
    let expected = lastId + 1;
    const stay = sleep(Math.min(5_000 + Math.random() * 10_000, deadline - performance.now())).then(() => {});
    const result = await follow(recorder, dispatcher, target, path, lastId, (frame) => {
      counters.frames += 1;
      if (frame.id === undefined) return;
      if (frame.id !== expected) counters.gaps += 1;
      expected = frame.id + 1;
    }, stay);
    lastId = result.lastId;
    if (result.end === "dropped") counters.drops += 1;
    if (result.end !== "left") await sleep(100);
  }
}

/** The benchmark's own stream on one agent: calls `stepped` per `model_output` event until `stopped`. */
export async function track(recorder: Recorder, dispatcher: Dispatcher, target: Target, path: string, stopped: Promise<void>, stepped: () => void) {
  let lastId = 0;
  let done = false;
  void stopped.then(() => (done = true));
  while (!done) {
    const result = await follow(recorder, dispatcher, target, path, lastId, (frame) => frame.event === "model_output" && stepped(), stopped);
    lastId = result.lastId;
    if (result.end !== "left" && !done) await Promise.race([sleep(100), stopped]);
  }
}

/* ---------- the result ---------- */

export async function loadTest(kind: DbKind, options: LoadOptions): Promise<BenchResult> {
  buildServer();
  const provider = await startProviderProcess();
  try {
    progress(`load: bare Fastify baseline, ${options.clients} clients for ${options.seconds} s`);
    const bare = await bareRun(options);
    const svc = await svcRun(kind, provider.url, options);
    return loadResult(options, bare, svc);
  } finally {
    await provider.stop();
  }
}

/**
 * Latencies of `kinds`, each timed-out request counted as TIMEOUT_MS: a lower bound for it, so a
 * percentile is never better than the truth when requests time out.
 */
const all = (recorder: Recorder, kinds: RequestKind[]) =>
  kinds.flatMap((k) => [...(recorder.latencies.get(k) ?? []), ...Array.from({ length: recorder.failed(k, "timeout") }, () => TIMEOUT_MS)]);
const answered = (recorder: Recorder, kinds: RequestKind[]) => kinds.reduce((n, k) => n + (recorder.latencies.get(k)?.length ?? 0), 0);

function loadResult(options: LoadOptions, bare: BareRun, svc: SvcRun): BenchResult {
  const mix = mixOf(options.clients);
  const svcRequests = summary(all(svc.clients, [...READ_KINDS, "input"]));
  const bareRequests = summary(all(bare.clients, ["healthz"]));
  const svcHealth = summary(all(svc.prober, ["healthz"]));
  const bareHealth = summary(all(bare.prober, ["healthz"]));
  const svcKept = summary(all(svc.prober, ["healthz keep-alive"]));
  const bareKept = summary(all(bare.prober, ["healthz keep-alive"]));
  const svcConnecting = summary(all(svc.connecting, ["healthz"]));
  const bareConnecting = summary(all(bare.connecting, ["healthz"]));
  const seconds = (w: Window) => w.elapsedMs / 1000;
  const svcRps = answered(svc.clients, [...READ_KINDS, "input"]) / seconds(svc);
  const bareRps = answered(bare.clients, ["healthz"]) / seconds(bare);
  const timeouts = svc.clients.failed(undefined, "timeout") + svc.prober.failed(undefined, "timeout") + svc.bookkeeping.failed(undefined, "timeout");
  const errors = svc.clients.failed() + svc.prober.failed() + svc.streams.drops + svc.streams.gaps;
  const rows: Row[] = [
    { metric: "requests/s (reads and inputs; baseline: GET /healthz)", baseline: bareRps, svc: svcRps, unit: "/s", higherIsBetter: true },
    { metric: "request latency p50", baseline: bareRequests.p50, svc: svcRequests.p50, unit: "ms" },
    { metric: "request latency p99", baseline: bareRequests.p99, svc: svcRequests.p99, unit: "ms" },
    { metric: "/healthz under load p50 (prober, every 50 ms, new connection each)", baseline: bareHealth.p50, svc: svcHealth.p50, unit: "ms" },
    { metric: "/healthz under load p99", baseline: bareHealth.p99, svc: svcHealth.p99, unit: "ms" },
    { metric: "/healthz under load max", baseline: bareHealth.max, svc: svcHealth.max, unit: "ms" },
    { metric: "/healthz under load p99, one kept-alive connection", baseline: bareKept.p99, svc: svcKept.p99, unit: "ms" },
    { metric: `/healthz p99 (new connection) while the ${options.clients} clients connect, before the load`, baseline: bareConnecting.p99, svc: svcConnecting.p99, unit: "ms" },
    { metric: `time for the ${options.clients} clients to connect (one GET /healthz each, all at once)`, baseline: bare.connectMs, svc: svc.connectMs, unit: "ms" },
    { metric: "RSS before load", baseline: bare.rssBeforeMb, svc: svc.rssBeforeMb, unit: "MB" },
    { metric: "RSS peak during load (sampled every 0.5 s)", baseline: bare.rssPeakMb, svc: svc.rssPeakMb, unit: "MB" },
    { metric: "RSS after load", baseline: bare.rssAfterMb, svc: svc.rssAfterMb, unit: "MB" },
  ];
  return {
    id: "load",
    title: `Load: ${options.clients} clients for ${options.seconds} s on \`svc serve\``,
    measured: measured(options, mix),
    baseline:
      `A bare Fastify process with svc's \`/healthz\` route only (same path and response schema, no hooks, no logger), started ` +
      `with plain \`node\`; all ${options.clients} clients repeat \`GET /healthz\` for the same time while the same prober times ` +
      "it: the most one Node process serves on this machine, and its event loop's latency when saturated.",
    rows,
    table: kindTable(svc, bare),
    facts: {
      clients: options.clients, agents: options.agents, seconds: options.seconds,
      rps: svcRps, bareRps, p50: svcRequests.p50, p99: svcRequests.p99,
      healthzP50: svcHealth.p50, healthzP99: svcHealth.p99, healthzMax: svcHealth.max, bareHealthzP99: bareHealth.p99,
      healthzKeepAliveP50: svcKept.p50, healthzKeepAliveP99: svcKept.p99,
      healthzConnectingP99: svcConnecting.p99, bareHealthzConnectingP99: bareConnecting.p99, connectMs: svc.connectMs,
      stepsPerSecond: svc.steps / seconds(svc), steps: svc.steps, backlog: svc.backlog,
      rssIdleMb: svc.rssIdleMb, rssBeforeMb: svc.rssBeforeMb, rssPeakMb: svc.rssPeakMb, rssAfterMb: svc.rssAfterMb, bareRssMb: bare.rssPeakMb,
      crashed: svc.crash ? 1 : 0, acceptQueuePeak: svc.acceptQueuePeak, bareAcceptQueuePeak: bare.acceptQueuePeak, timeouts, errors, streamFrames: svc.streams.frames, reconnects: svc.streams.reconnects, gaps: svc.streams.gaps, drops: svc.streams.drops,
    },
    notes: [...notes(svc, bare), closedLoopBound(mix.readers + mix.senders, svcRps, svcRequests.mean, svcRequests.p99)],
  };
}

function measured(options: LoadOptions, mix: ReturnType<typeof mixOf>): string {
  return (
    `\`svc serve\` in a process of its own (built, \`node packages/server/dist/main.js serve\`, SVC_LOG_LEVEL=warn, every other setting ` +
    `at its default) on a new database, with a project, an org API key and ${options.agents} agents on the fake provider (\`svc fake-provider\`, ` +
    `its own process, answering at once). Then ${options.clients} clients for ${options.seconds} s, each on its own keep-alive connection ` +
    `(undici) with the org key: ${mix.readers} readers in a closed loop (no pause) over a page of agents (20%), one agent (40%) and an ` +
    `agent's newest 50 events (40%); ${mix.senders} senders of queued inputs, each input answered by one model step, keeping every agent at ` +
    `most 2 inputs ahead of its steps; ${mix.streams} SSE followers of the agents' timelines, which read from the start, then reconnect every ` +
    `5–15 s with Last-Event-ID and check the ids stay dense. A prober in a Node process of its own, as a kubelet is, sends ` +
    "`GET /healthz` every 50 ms, each on a new connection and whether or not earlier probes were answered, as a kubelet or a " +
    "load balancer probes, and once more on one kept-alive connection. The clients open their connections just before the " +
    "load, all at once (one `GET /healthz` each), as after a restart; probes sent meanwhile are reported on their own, since " +
    `they wait behind ${options.clients} new connections in the kernel's accept queue, which Node takes one per event-loop turn ` +
    "(libuv 1.45 and later). Every " +
    `request has a ${TIMEOUT_MS / 1000} s client timeout; percentiles count a timed-out request as ${TIMEOUT_MS / 1000} s. Steps are counted from \`model_output\` events on one more stream per agent. ` +
    "RSS is VmRSS of the svc process and any processes it started (/proc), before the load (after setup), sampled during it, and " +
    "after it. The load generator is one Node process on the same machine, sharing its CPUs with svc and the provider."
  );
}

function kindTable(svc: SvcRun, bare: BareRun): BenchResult["table"] {
  const line = (label: string, recorder: Recorder, kind: RequestKind, seconds: number) => {
    const s = summary(all(recorder, [kind]));
    const n = answered(recorder, [kind]) + recorder.failed(kind);
    return [label, String(n), (answered(recorder, [kind]) / seconds).toFixed(0), fmtMs(s.p50), fmtMs(s.p99), fmtMs(s.max), String(recorder.failed(kind))];
  };
  const svcSeconds = svc.elapsedMs / 1000;
  const bareSeconds = bare.elapsedMs / 1000;
  return {
    columns: ["requests", "sent", "answered/s", "p50 ms", "p99 ms", "max ms", "errors"],
    rows: [
      ...[...READ_KINDS, "input" as const, "stream open" as const].map((k) => line(`svc: ${k}`, svc.clients, k, svcSeconds)),
      line("svc: /healthz (prober, new connections)", svc.prober, "healthz", svcSeconds),
      line("svc: /healthz (prober, kept-alive connection)", svc.prober, "healthz keep-alive", svcSeconds),
      line("bare Fastify: /healthz (clients)", bare.clients, "healthz", bareSeconds),
      line("bare Fastify: /healthz (prober, new connections)", bare.prober, "healthz", bareSeconds),
      line("bare Fastify: /healthz (prober, kept-alive connection)", bare.prober, "healthz keep-alive", bareSeconds),
    ],
  };
}

const fmtMs = (ms: number) => (Number.isFinite(ms) ? ms.toFixed(1) : "–");

function notes(svc: SvcRun, bare: BareRun): string[] {
  const seconds = svc.elapsedMs / 1000;
  const crash = svc.crash ? [`**svc serve exited during the load (${svc.crash.how})**; its last output: \`${svc.crash.output.replace(/\s+/g, " ").slice(-600)}\``] : [];
  const out = [
    ...crash,
    `${svc.steps} model steps in ${seconds.toFixed(1)} s (${(svc.steps / seconds).toFixed(1)} steps/s); ${svc.backlog} inputs still queued at the end`,
    `SSE: ${svc.streams.frames} frames, ${svc.streams.reconnects} reconnects with Last-Event-ID, ${svc.streams.gaps} id gaps, ${svc.streams.drops} streams ended by the server`,
    `svc RSS: ${svc.rssIdleMb.toFixed(0)} MB idle after start, ${svc.rssBeforeMb.toFixed(0)} MB after setup, ${svc.rssPeakMb.toFixed(0)} MB peak, ${svc.rssAfterMb.toFixed(0)} MB after the load`,
  ];
  out.push(`/healthz p99 (new connections, answered probes) by ${SLICE_S} s of the run: ${slices(svc.prober, svc.began, svc.elapsedMs).map((ms) => `${fmt(ms)} ms`).join(", ")}`);
  out.push(
    `connections waiting in the accept queue (sampled every 0.5 s), peak: ${svc.acceptQueuePeak} on svc, ${bare.acceptQueuePeak} on the bare Fastify process`,
  );
  out.push(`the load generator's event-loop delay p99: ${fmt(svc.generatorLagP99Ms)} ms (svc run), ${fmt(bare.generatorLagP99Ms)} ms (baseline run)`);
  const failures = [...describe("svc", svc.clients), ...describe("prober", svc.prober), ...describe("step-counting streams", svc.bookkeeping), ...describe("bare", bare.clients)];
  out.push(failures.length ? `errors: ${failures.join("; ")}` : "errors: none (no timeouts, resets or non-2xx answers)");
  return out;
}

/**
 * What bounds the request latency of a closed loop: each of `clients` sends its next request when the last is
 * answered, so (Little's law) their mean latency is clients ÷ requests per second whatever svc does with a
 * request, and the p99 is above the mean. A latency target is then a throughput target.
 */
function closedLoopBound(clients: number, rps: number, meanMs: number, p99Ms: number): string {
  const needed = (ms: number) => Math.ceil(clients / (ms / 1000));
  return (
    `latency bound of the closed loop: ${clients} clients (readers and senders) at ${rps.toFixed(0)} requests/s wait ${((clients / rps) * 1000).toFixed(0)} ms ` +
    `per request on average by Little's law (measured mean ${meanMs.toFixed(0)} ms, p99 ${p99Ms.toFixed(0)} ms, ${(p99Ms / meanMs).toFixed(2)}× the mean); ` +
    `a p99 of 500 ms at that spread needs about ${needed(500 / (p99Ms / meanMs))} requests/s`
  );
}

const SLICE_S = 5;

/** The prober's p99 per SLICE_S seconds, by send time: a stall at the start and a steady state look different. */
function slices(prober: Recorder, began: number, elapsedMs: number): number[] {
  const latencies = prober.latencies.get("healthz") ?? [];
  const sent = prober.sentAt.get("healthz") ?? [];
  return Array.from({ length: Math.ceil(elapsedMs / 1000 / SLICE_S) }, (_, i) => {
    const from = began + i * SLICE_S * 1000;
    return summary(latencies.filter((_, j) => sent[j]! >= from && sent[j]! < from + SLICE_S * 1000)).p99;
  }).filter((p99) => Number.isFinite(p99));
}

function describe(who: string, recorder: Recorder): string[] {
  return [...recorder.failures].flatMap(([kind, reasons]) => [...reasons].map(([reason, n]) => `${who} ${kind}: ${n} × ${reason}`));
}
