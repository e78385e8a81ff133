/**
 * The scale-out benchmark's kill run: 2 workers × 2 APIs behind HAProxy under load, one API and then one worker
 * killed with SIGKILL mid-run. Afterwards it checks that every input svc accepted (201) was answered (a model
 * output after it in its turn) and that every SSE follower, reconnecting through the balancer with Last-Event-ID,
 * saw each event of its agent's timeline once, in order, up to the last.
 */
import { performance } from "node:perf_hooks";
import type { Dispatcher } from "undici";
import { decodeId } from "../packages/server/src/platform/ids.js";
import { progress, sleep, type BenchResult } from "./lib.js";
import { Connections, follow, Recorder, Steps, type Frame, type Target } from "./load-clients.js";
import { setUp } from "./load.js";
import type { ScaleOptions } from "./scale-out.js";
import { drive, launchSteps, type Busy } from "./scale-load.js";
import { startDeployment, type Deployment } from "./scale-deployment.js";

const SHAPE = { workers: 2, apis: 2 };
/**
 * A killed worker's claims are retried once their lease runs out and maintenance reaps them: 5 s and a 1 s tick
 * rather than 90 s and 15 s, so the run drains in seconds. Everything else at its default.
 */
const ENV = { SVC_RUNTIME_LEASE_SECONDS: "5", SVC_MAINTENANCE_INTERVAL_MS: "1000" };
/** Every agent has a follower, so the run keeps to a number of agents whose every stream can be checked. */
const MAX_AGENTS = 20;
const DRAIN_TIMEOUT_MS = 60_000;
const CATCH_UP_TIMEOUT_MS = 20_000;

/** What one follower saw, across its reconnections. */
class StreamCheck {
  seen = 0;
  frames = 0;
  gaps = 0;
  duplicates = 0;
  reconnects = 0;
  drops = 0;

  see(frame: Frame) {
    this.frames += 1;
    if (frame.id === undefined) return;
    if (frame.id <= this.seen) this.duplicates += 1;
    else if (frame.id > this.seen + 1) this.gaps += 1;
    this.seen = Math.max(this.seen, frame.id);
  }
}

export interface KillRun {
  agents: number;
  seconds: number;
  kills: Array<{ what: string; atSeconds: number }>;
  accepted: number;
  answered: number;
  /** Inputs svc committed although the client got no 201 (the API died before answering): not accepted, still answered. */
  unconfirmed: number;
  drainSeconds: number;
  streams: StreamCheck[];
  /** Followers that had not reached their agent's last event within CATCH_UP_TIMEOUT_MS after the drain. */
  behind: number;
  retriedCalls: number;
  clients: Recorder;
  bookkeeping: Recorder;
}

export async function killRun(server: string, providerUrl: string, options: ScaleOptions): Promise<KillRun> {
  const deployment = await startDeployment(server, SHAPE, ENV);
  const connections = new Connections(deployment.url);
  const stop = new AbortController();
  const stopped = new Promise<void>((resolve) => stop.signal.addEventListener("abort", () => resolve(), { once: true }));
  const bookkeeping = new Recorder();
  let followers: Array<Promise<void>> = [];
  try {
    const { project, ids, target } = await setUp(deployment.url, providerUrl, Math.min(options.agents, MAX_AGENTS));
    const steps = new Steps(ids.length);
    const streams = ids.map(() => new StreamCheck());
    followers = ids.map((id, a) => resume(bookkeeping, connections.open(true), target, `${project.base}/agents/${id}/events/stream`, stopped, streams[a]!, () => steps.stepped(a)));
    await launchSteps(steps, ids.length);
    const busy: Busy = { deployment, connections, target, base: project.base, ids, steps };
    const accepted = new Set<string>();
    const clients = new Recorder();
    progress(`scale-out kill run: ${ids.length} agents, ${options.seconds} s; kill -9 of an API at 1/3, of a worker at 1/2`);
    const began = performance.now();
    const kills: KillRun["kills"] = [];
    const killer = killMidRun(deployment, options.seconds * 1000, (what) => kills.push({ what, atSeconds: (performance.now() - began) / 1000 }));
    await Promise.all([...drive(busy, clients, began + options.seconds * 1000, Math.ceil(options.readers / 2), (a, text) => accepted.add(key(uuidOf(ids[a]!), text))), killer]);
    const drainStart = performance.now();
    const inputs = await drain(deployment, accepted);
    const drainSeconds = (performance.now() - drainStart) / 1000;
    const behind = await catchUp(deployment, ids, streams);
    const [retried] = await deployment.query<{ n: number }>("SELECT count(*)::int AS n FROM model_call_contexts WHERE attempt_number > 1");
    const answered = [...accepted].filter((k) => inputs.get(k)).length;
    const unconfirmed = [...inputs.keys()].filter((k) => !accepted.has(k)).length;
    progress(`scale-out kill run: ${answered}/${accepted.size} accepted inputs answered; drained in ${drainSeconds.toFixed(1)} s`);
    return { agents: ids.length, seconds: options.seconds, kills, accepted: accepted.size, answered, unconfirmed, drainSeconds, streams, behind, retriedCalls: retried?.n ?? 0, clients, bookkeeping };
  } finally {
    stop.abort();
    await Promise.all(followers);
    await connections.close();
    await deployment.close();
  }
}

/** An input by its agent (the database's id) and text, unique per agent while senders do not share agents. */
const key = (agentUuid: string, text: string) => `${agentUuid} ${text}`;
const uuidOf = (publicId: string) => decodeId("agent", publicId) ?? publicId;

/** kill -9 of the first API at a third of the run, of the first worker at half of it. */
async function killMidRun(deployment: Deployment, runMs: number, killed: (what: string) => void): Promise<void> {
  await sleep(runMs / 3);
  await deployment.apis[0]!.kill9();
  killed("svc api 1");
  await sleep(runMs / 6);
  await deployment.workers[0]!.kill9();
  killed("svc worker 1");
}

/**
 * An SSE follower through the balancer: whenever its stream ends (its API died, the balancer cut it), it opens
 * it again with Last-Event-ID, until `stopped`. Counts model steps for the senders' pacing.
 */
async function resume(recorder: Recorder, dispatcher: Dispatcher, target: Target, path: string, stopped: Promise<void>, check: StreamCheck, stepped: () => void) {
  let done = false;
  void stopped.then(() => (done = true));
  while (!done) {
    const result = await follow(recorder, dispatcher, target, path, check.seen, (frame) => {
      check.see(frame);
      if (frame.event === "model_output") stepped();
    }, stopped);
    if (result.end === "dropped") check.drops += 1;
    if (done) break;
    check.reconnects += 1;
    await Promise.race([sleep(100), stopped]);
  }
}

/**
 * The content inputs the senders sent (launch messages left out), by key: whether each was answered, i.e.
 * admitted into a turn that then recorded a model output. Waits (bounded) until every accepted one is.
 */
async function drain(deployment: Deployment, accepted: Set<string>): Promise<Map<string, boolean>> {
  const deadline = performance.now() + DRAIN_TIMEOUT_MS;
  for (;;) {
    const inputs = await answeredInputs(deployment);
    const waiting = [...accepted].filter((k) => !inputs.get(k)).length;
    if (waiting === 0 || performance.now() > deadline) return inputs;
    await sleep(500);
  }
}

async function answeredInputs(deployment: Deployment): Promise<Map<string, boolean>> {
  const rows = await deployment.query<{ agent: string; text: string; answered: boolean }>(
    `SELECT i.agent_id::text AS agent, i.content_blocks->0->>'text' AS text,
            (i.state = 'resolved' AND EXISTS (SELECT 1 FROM agent_events o
               WHERE o.turn_id = e.turn_id AND o.event_kind = 'model_output' AND o.sequence > e.sequence)) AS answered
       FROM agent_inputs i LEFT JOIN agent_events e ON e.id = i.admitted_event_id
      WHERE i.input_kind = 'content' AND i.content_blocks->0->>'text' LIKE 'load input %'`,
  );
  return new Map(rows.map((row) => [key(row.agent, row.text), row.answered === true]));
}

/** Waits (bounded) until every follower has seen its agent's last event; returns how many had not. */
async function catchUp(deployment: Deployment, ids: string[], streams: StreamCheck[]): Promise<number> {
  const rows = await deployment.query<{ agent: string; last: number }>("SELECT agent_id::text AS agent, max(sequence)::int AS last FROM agent_events GROUP BY agent_id");
  const last = new Map(rows.map((row) => [row.agent, row.last]));
  const finals = ids.map((id) => last.get(uuidOf(id)) ?? 0);
  const deadline = performance.now() + CATCH_UP_TIMEOUT_MS;
  const behind = () => streams.filter((s, a) => s.seen < finals[a]!).length;
  while (behind() > 0 && performance.now() < deadline) await sleep(100);
  return behind();
}

/* ---------- the result ---------- */

export function killResult(run: KillRun): BenchResult {
  const sum = (field: "frames" | "gaps" | "duplicates" | "reconnects" | "drops") => run.streams.reduce((n, s) => n + s[field], 0);
  const failures = [...run.clients.failures, ...run.bookkeeping.failures].flatMap(([kind, reasons]) => [...reasons].map(([reason, n]) => `${kind}: ${n} × ${reason}`));
  const lost = run.accepted - run.answered;
  const facts = {
    agents: run.agents, seconds: run.seconds, accepted: run.accepted, answered: run.answered, lost, unconfirmed: run.unconfirmed,
    drainSeconds: run.drainSeconds, frames: sum("frames"), gaps: sum("gaps"), duplicates: sum("duplicates"), reconnects: sum("reconnects"),
    drops: sum("drops"), behind: run.behind, retriedCalls: run.retriedCalls, failedRequests: run.clients.failed(),
  };
  return {
    id: "scale-out-kill",
    title: "Scale-out: kill -9 of one API and one worker under load (2 workers × 2 APIs)",
    measured:
      `The 2 × 2 shape as above, with ${run.agents} agents, each followed by an SSE client through HAProxy that reconnects with ` +
      `Last-Event-ID whenever its stream ends, and the same senders and readers for ${run.seconds} s. ${run.kills.map((k) => `\`${k.what}\` killed with SIGKILL at ${k.atSeconds.toFixed(1)} s`).join("; ")}. ` +
      `Settings as above except SVC_RUNTIME_LEASE_SECONDS=5 and SVC_MAINTENANCE_INTERVAL_MS=1000, so the killed worker's claims are reaped and ` +
      "retried within seconds. After the load: every input answered 201 must have been admitted into a turn that then recorded a " +
      "model output (waited for, up to 60 s), and every follower must have seen each event of its agent's timeline exactly once, in order, up to the last.",
    baseline: "None: the checks are counts that must be zero (lost inputs, gaps, duplicates, followers behind).",
    rows: [],
    table: {
      columns: ["check", "count"],
      rows: [
        ["inputs accepted (201)", String(run.accepted)],
        ["of which answered", String(run.answered)],
        ["**accepted inputs lost** (not answered within 60 s)", String(lost)],
        ["inputs committed without a 201 reaching the client (answered anyway)", String(run.unconfirmed)],
        ["drain after the load, s", run.drainSeconds.toFixed(1)],
        ["SSE frames seen", String(facts.frames)],
        ["stream reconnects (Last-Event-ID) / ended by the far side", `${facts.reconnects} / ${facts.drops}`],
        ["**sequence gaps / duplicate events** in followers", `${facts.gaps} / ${facts.duplicates}`],
        ["**followers not at their agent's last event** 20 s after the drain", String(run.behind)],
        ["model calls retried (attempt > 1; the killed worker's)", String(run.retriedCalls)],
        ["requests that failed (the killed API's, in flight)", String(run.clients.failed())],
      ],
    },
    facts,
    notes: [failures.length ? `failures: ${failures.join("; ")}` : "no request failed"],
  };
}
