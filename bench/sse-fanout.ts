/**
 * Benchmark 1: commit → SSE frame latency with many subscribers on one agent, against a bare Fastify
 * server that writes the same frames to the same number of SSE connections.
 */
import { performance } from "node:perf_hooks";
import Fastify from "fastify";
import { Agent, request } from "undici";
import { benchProject, changeConfig, launchAgent, progress, summary, type BenchResult, type BenchServer } from "./lib.js";

const SUBSCRIBERS = 1000;
const WARMUP = 3;

class Subscribers {
  /** received[sequence] = receipt times (performance.now()) across subscribers */
  readonly received = new Map<number, number[]>();
  readonly frames = new Map<number, string>();
  private waiters = new Map<number, () => void>();
  private closers: Array<() => void> = [];
  readonly dispatcher = new Agent({ connections: SUBSCRIBERS + 100, pipelining: 1, bodyTimeout: 0, headersTimeout: 0, keepAliveTimeout: 60_000 });

  constructor(private readonly count: number) {}

  async open(url: string, headers: Record<string, string>): Promise<void> {
    const opened: Promise<void>[] = [];
    for (let i = 0; i < this.count; i++) opened.push(this.openOne(url, headers, i === 0));
    await Promise.all(opened);
  }

  private async openOne(url: string, headers: Record<string, string>, keepFrames: boolean): Promise<void> {
    const abort = new AbortController();
    const response = await request(url, { headers: { accept: "text/event-stream", ...headers }, dispatcher: this.dispatcher, signal: abort.signal });
    if (response.statusCode !== 200) throw new Error(`stream refused: ${response.statusCode} ${await response.body.text()}`);
    this.closers.push(() => abort.abort());
    let buffer = "";
    let ready!: () => void;
    const gotOk = new Promise<void>((r) => (ready = r));
    response.body.setEncoding("utf8");
    response.body.on("data", (chunk: string) => {
      const now = performance.now();
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf("\n\n")) !== -1) {
        const frame = buffer.slice(0, end + 2);
        buffer = buffer.slice(end + 2);
        if (frame.startsWith(": ok")) ready();
        if (!frame.startsWith("id: ")) continue;
        const sequence = Number(frame.slice(4, frame.indexOf("\n")));
        let list = this.received.get(sequence);
        if (!list) this.received.set(sequence, (list = []));
        list.push(now);
        if (keepFrames) this.frames.set(sequence, frame);
        if (list.length === this.count) this.waiters.get(sequence)?.();
      }
    });
    response.body.on("error", () => {});
    await gotOk;
  }

  /** Resolves when every subscriber has the frame with `sequence`. */
  all(sequence: number, timeoutMs = 30_000): Promise<void> {
    if ((this.received.get(sequence)?.length ?? 0) === this.count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${this.received.get(sequence)?.length ?? 0}/${this.count} subscribers got ${sequence}`)), timeoutMs);
      this.waiters.set(sequence, () => {
        clearTimeout(timer);
        this.waiters.delete(sequence);
        resolve();
      });
    });
  }

  async close() {
    for (const close of this.closers) close();
    await this.dispatcher.destroy().catch(() => {});
  }
}

export async function sseFanout(server: BenchServer, providerUrl: string, appends: number): Promise<BenchResult> {
  const project = await benchProject(server.api, providerUrl);
  const agentId = await launchAgent(server.api, project); // event 1: the launch config
  progress("sse: agent launched; opening streams");
  const subs = new Subscribers(SUBSCRIBERS);
  const openStart = performance.now();
  await subs.open(`${server.url}${project.base}/agents/${agentId}/events/stream?after_sequence=1`, { authorization: `Bearer ${project.token}` });
  const openMs = performance.now() - openStart;

  // Baseline: a bare Fastify server holding as many SSE connections, broadcasting the very frames svc sent.
  const bare = Fastify({ logger: false });
  const open = new Set<import("node:http").ServerResponse>();
  bare.get("/stream", (req, reply) => {
    reply.hijack();
    reply.raw.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    reply.raw.write(": ok\n\n");
    open.add(reply.raw);
    reply.raw.on("close", () => open.delete(reply.raw));
  });
  const bareUrl = await bare.listen({ host: "127.0.0.1", port: 0 });
  const baseSubs = new Subscribers(SUBSCRIBERS);
  await baseSubs.open(`${bareUrl}/stream`, {});

  progress(`sse: ${SUBSCRIBERS} streams open on each server; svc and baseline rounds alternate`);
  const svcLatencies: number[] = [];
  const svcLast: number[] = [];
  const baseLatencies: number[] = [];
  const baseLast: number[] = [];
  let sequence = 1;
  const runStart = performance.now();
  // Rounds alternate, one svc append then one broadcast of the same frame, so both see the same state of
  // the machine (a quieter or busier minute would otherwise favour whichever ran in it).
  for (let i = 0; i < WARMUP + appends; i++) {
    sequence += 1;
    const arrived = subs.all(sequence);
    await changeConfig(server.api, project, agentId, `instruction ${i}`);
    const committedAt = server.lastCommitAt;
    await arrived;
    const frame = subs.frames.get(sequence)!;
    const broadcast = baseSubs.all(sequence);
    const sentAt = performance.now();
    for (const res of open) res.write(frame);
    await broadcast;
    if (i < WARMUP) continue;
    const times = subs.received.get(sequence)!;
    for (const t of times) svcLatencies.push(t - committedAt);
    svcLast.push(Math.max(...times) - committedAt);
    const baseTimes = baseSubs.received.get(sequence)!;
    for (const t of baseTimes) baseLatencies.push(t - sentAt);
    baseLast.push(Math.max(...baseTimes) - sentAt);
  }
  const runMs = performance.now() - runStart;
  await subs.close();
  await baseSubs.close();
  for (const res of open) res.destroy();
  await bare.close();

  const svc = summary(svcLatencies);
  const base = summary(baseLatencies);
  const svcAll = summary(svcLast);
  const baseAll = summary(baseLast);
  return {
    id: "sse-fanout",
    title: `Commit → SSE frame latency, ${SUBSCRIBERS} subscribers on one agent`,
    measured:
      `${SUBSCRIBERS} \`GET …/events/stream\` connections (undici Agent, one connection each) on one agent; ${appends} events appended one at a time ` +
      "through the API (`POST …/agents/{id}/config`, which commits one `agent_input` event), after " +
      `${WARMUP} warm-up events. Latency = frame receipt at a subscriber − resolution of the appending \`db.tx\` (the commit). ` +
      "Each event waits until all subscribers have it, so this is latency at idle, not under a write storm.",
    baseline:
      "A bare Fastify server holding the same number of SSE connections writes the very same frames (copied from the svc stream) " +
      "to every connection; latency = frame receipt − start of the broadcast loop. Same process, same client code; both " +
      "servers' connections stay open throughout, and svc and baseline rounds alternate.",
    rows: [
      { metric: "per-subscriber latency p50", baseline: base.p50, svc: svc.p50, unit: "ms" },
      { metric: "per-subscriber latency p99", baseline: base.p99, svc: svc.p99, unit: "ms" },
      { metric: "last subscriber (all delivered) p50", baseline: baseAll.p50, svc: svcAll.p50, unit: "ms" },
      { metric: "last subscriber (all delivered) p99", baseline: baseAll.p99, svc: svcAll.p99, unit: "ms" },
    ],
    notes: [`opening ${SUBSCRIBERS} svc streams took ${openMs.toFixed(0)} ms; the ${appends} rounds (an svc append, then a broadcast) took ${(runMs / 1000).toFixed(1)} s`],
  };
}
