/**
 * The clients of the load benchmark: closed-loop readers and input senders, SSE followers that
 * reconnect with Last-Event-ID, step trackers, and a `/healthz` prober. Every request has a client
 * timeout; every wait is bounded by the end of the run.
 */
import { performance } from "node:perf_hooks";
import { Client, request, type Dispatcher } from "undici";
import { sleep } from "./lib.js";

/** A request slower than this counts as a timeout (and is abandoned). */
export const TIMEOUT_MS = 10_000;
/** Inputs a sender keeps queued per agent: enough to keep the agent busy, not a growing backlog. */
const MAX_QUEUED_PER_AGENT = 2;
const PROBE_EVERY_MS = 50;

export type RequestKind = "list agents" | "get agent" | "events page" | "input" | "stream open" | "healthz" | "healthz keep-alive";

/** Latencies and failures per request kind. */
export class Recorder {
  readonly latencies = new Map<RequestKind, number[]>();
  /** When each answered request was sent (performance.now()), in the order of `latencies`. */
  readonly sentAt = new Map<RequestKind, number[]>();
  readonly failures = new Map<RequestKind, Map<string, number>>();

  ok(kind: RequestKind, ms: number, started: number) {
    let list = this.latencies.get(kind);
    let sent = this.sentAt.get(kind);
    if (!list || !sent) {
      this.latencies.set(kind, (list = []));
      this.sentAt.set(kind, (sent = []));
    }
    list.push(ms);
    sent.push(started);
  }

  fail(kind: RequestKind, reason: string) {
    let reasons = this.failures.get(kind);
    if (!reasons) this.failures.set(kind, (reasons = new Map()));
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }

  /**
   * The answers of requests sent in [from, to) (performance.now()) as a recorder of their own. Failures
   * carry no send time: they stay with `keepFailures` only.
   */
  sentBetween(from: number, to: number, keepFailures: boolean): Recorder {
    const part = new Recorder();
    for (const [kind, latencies] of this.latencies) {
      const sent = this.sentAt.get(kind) ?? [];
      latencies.forEach((ms, i) => sent[i]! >= from && sent[i]! < to && part.ok(kind, ms, sent[i]!));
    }
    if (keepFailures) for (const [kind, reasons] of this.failures) part.failures.set(kind, new Map(reasons));
    return part;
  }

  /** Failures of `kind` (all kinds when absent) whose reason starts with `reason` ("timeout" counts every stage). */
  failed(kind?: RequestKind, reason?: string): number {
    let n = 0;
    for (const [k, reasons] of this.failures) {
      if (kind && k !== kind) continue;
      for (const [r, count] of reasons) if (!reason || r.startsWith(reason)) n += count;
    }
    return n;
  }
}

export interface Target {
  url: string;
  headers: Record<string, string>;
}

/**
 * One keep-alive connection per simulated client, as separate clients would have: no shared client-side
 * pool, whose queueing (a request waiting for a connection still being set up) would add to the latencies.
 */
export class Connections {
  private readonly opened: Client[] = [];

  constructor(private readonly url: string) {}

  /** A stream is quiet between events (heartbeats come every 25 s): no body timeout on a streaming connection. */
  open(streaming = false): Client {
    const client = new Client(this.url, { pipelining: 1, keepAliveTimeout: 30_000, headersTimeout: TIMEOUT_MS, bodyTimeout: streaming ? 0 : TIMEOUT_MS });
    this.opened.push(client);
    return client;
  }

  async close(): Promise<void> {
    await Promise.all(this.opened.splice(0).map((client) => client.destroy()));
  }
}

/** One request, timed to the end of its body; failures are recorded by reason. Returns the body on 2xx. */
export async function timed(recorder: Recorder, kind: RequestKind, dispatcher: Dispatcher, target: Target, path: string, body?: unknown): Promise<string | undefined> {
  const started = performance.now();
  const signal = AbortSignal.timeout(TIMEOUT_MS);
  try {
    const response = await request(target.url + path, {
      method: body === undefined ? "GET" : "POST",
      headers: body === undefined ? target.headers : { ...target.headers, "content-type": "application/json" },
      body: body === undefined ? null : JSON.stringify(body),
      dispatcher,
      signal,
    });
    const text = await response.body.text();
    if (response.statusCode >= 300) {
      recorder.fail(kind, `HTTP ${response.statusCode}`);
      return undefined;
    }
    recorder.ok(kind, performance.now() - started, started);
    return text;
  } catch (err) {
    recorder.fail(kind, signal.aborted ? "timeout" : reasonOf(err));
    return undefined;
  }
}

/** undici's own timeouts (a connection not accepted in 10 s, say) are timeouts too, named by stage. */
const UNDICI_TIMEOUTS: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: "timeout (connect)",
  UND_ERR_HEADERS_TIMEOUT: "timeout (headers)",
  UND_ERR_BODY_TIMEOUT: "timeout (body)",
};

function reasonOf(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string") return UNDICI_TIMEOUTS[code] ?? code;
  return err instanceof Error ? err.name : String(err);
}

/** Closed loop: `work` runs again as soon as it returns, until `deadline` (performance.now()). */
export async function loop(deadline: number, work: () => Promise<unknown>): Promise<void> {
  while (performance.now() < deadline) await work();
}

/**
 * `GET /healthz` every PROBE_EVERY_MS whether or not earlier probes were answered, so a stall shows in
 * every probe it delays rather than in one (no coordinated omission). Each tick probes twice: on a new
 * connection, as a kubelet or a load balancer does ("healthz"), and on one kept-alive connection, where a
 * probe waits for the one before it ("healthz keep-alive"). The two differ when a server is slow to
 * take new connections but not to answer on open ones.
 */
export async function probe(recorder: Recorder, url: string, running: () => boolean): Promise<void> {
  const kept = new Connections(url);
  const keptAlive = kept.open();
  const inFlight: Array<Promise<unknown>> = [];
  try {
    for (let next = performance.now(); running(); next += PROBE_EVERY_MS) {
      await sleep(next - performance.now());
      const fresh = new Client(url, { headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS });
      inFlight.push(timed(recorder, "healthz", fresh, { url, headers: {} }, "/healthz").finally(() => fresh.destroy()));
      inFlight.push(timed(recorder, "healthz keep-alive", keptAlive, { url, headers: {} }, "/healthz"));
    }
    await Promise.all(inFlight);
  } finally {
    await kept.close();
  }
}

/* ---------- SSE ---------- */

export interface Frame {
  id?: number;
  event: string;
}

/**
 * Follows one event stream until `until` resolves or the server ends it. Resolves with the last id seen
 * (the cursor to resume from) and how it ended: "failed" to open (recorded as a "stream open" failure),
 * "dropped" by the server after opening, or "left" when `until` came. Opening is timed as "stream open"
 * (request to the `: ok` comment).
 */
export async function follow(
  recorder: Recorder,
  dispatcher: Dispatcher,
  target: Target,
  path: string,
  lastId: number,
  onFrame: (frame: Frame) => void,
  until: Promise<void>,
): Promise<{ lastId: number; end: "failed" | "dropped" | "left" }> {
  const started = performance.now();
  const abort = new AbortController();
  let timedOut = false;
  const opening = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, TIMEOUT_MS);
  let response: Dispatcher.ResponseData;
  try {
    const headers = { ...target.headers, accept: "text/event-stream", ...(lastId > 0 ? { "last-event-id": String(lastId) } : {}) };
    response = await request(target.url + path, { headers, dispatcher, signal: abort.signal });
  } catch (err) {
    clearTimeout(opening);
    recorder.fail("stream open", timedOut ? "timeout" : reasonOf(err));
    return { lastId, end: "failed" };
  }
  if (response.statusCode !== 200) {
    clearTimeout(opening);
    recorder.fail("stream open", `HTTP ${response.statusCode}`);
    await response.body.text().catch(() => "");
    return { lastId, end: "failed" };
  }
  let buffer = "";
  let opened = false;
  const ended = new Promise<boolean>((resolve) => {
    response.body.setEncoding("utf8");
    response.body.on("data", (chunk: string) => {
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf("\n\n")) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (!opened && block.startsWith(": ok")) {
          opened = true;
          clearTimeout(opening);
          recorder.ok("stream open", performance.now() - started, started);
        }
        const frame = parseFrame(block);
        if (!frame) continue;
        if (frame.id !== undefined) lastId = frame.id;
        onFrame(frame);
      }
    });
    response.body.on("end", () => resolve(true));
    response.body.on("error", () => resolve(!abort.signal.aborted));
  });
  const dropped = await Promise.race([ended, until.then(() => false)]);
  clearTimeout(opening);
  abort.abort();
  if (opened) return { lastId, end: dropped ? "dropped" : "left" };
  // Not opened when `until` came first is the follower giving up (the run ended), not a failure.
  if (!dropped && !timedOut) return { lastId, end: "left" };
  recorder.fail("stream open", timedOut ? "timeout" : "ended before : ok");
  return { lastId, end: "failed" };
}

function parseFrame(block: string): Frame | undefined {
  let event: string | undefined;
  let id: number | undefined;
  for (const line of block.split("\n")) {
    if (line.startsWith("event: ")) event = line.slice(7);
    else if (line.startsWith("id: ")) id = Number(line.slice(4));
  }
  if (event === undefined) return undefined;
  return id === undefined ? { event } : { event, id };
}

/* ---------- model steps ---------- */

/**
 * Counts each agent's model steps (its `model_output` events, seen on a stream of its own) and holds
 * input senders back while an agent already has MAX_QUEUED_PER_AGENT inputs waiting, so the engine
 * always has work and the backlog stays bounded.
 */
export class Steps {
  readonly done: number[];
  private readonly sent: number[];
  private readonly waiters: Array<Array<() => void>>;

  constructor(agents: number) {
    this.done = Array.from({ length: agents }, () => 0);
    this.sent = Array.from({ length: agents }, () => 0);
    this.waiters = Array.from({ length: agents }, () => []);
  }

  total(): number {
    return this.done.reduce((sum, n) => sum + n, 0);
  }

  stepped(agent: number) {
    this.done[agent]! += 1;
    for (const wake of this.waiters[agent]!.splice(0)) wake();
  }

  /** Reserves a queue slot on `agent`, waiting at most `ms` for one; false when none freed up. */
  async reserve(agent: number, ms: number): Promise<boolean> {
    const deadline = performance.now() + ms;
    while (this.sent[agent]! - this.done[agent]! >= MAX_QUEUED_PER_AGENT) {
      const left = deadline - performance.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters[agent]!.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    this.sent[agent]! += 1;
    return true;
  }

  /** Gives a reserved slot back (the input was refused, so no step will come of it). */
  release(agent: number) {
    this.sent[agent]! -= 1;
  }

  /** Counts the steps already done as sent, so that reservations start from an empty queue. */
  settle() {
    for (let i = 0; i < this.sent.length; i++) this.sent[i] = this.done[i]!;
  }

  backlog(): number {
    return this.sent.reduce((sum, n, i) => sum + Math.max(0, n - this.done[i]!), 0);
  }
}
