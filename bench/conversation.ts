/**
 * Benchmark 5: what a model step costs as the agent's conversation grows (issue 8: "flat in
 * conversation length"). An agent's timeline is filled to 10, 100, 1,000 and 5,000 events of real
 * conversation (content inputs and the model's replies), then one worker answers queued inputs: the
 * first step of a fresh worker reads the whole conversation once, the steps after it only what is new.
 */
import { performance } from "node:perf_hooks";
import { agentEvents, modelCallContexts, modelOutputs } from "../packages/server/src/db/schema/index.js";
import { dbNow } from "../packages/server/src/db/schema/columns.js";
import { decodeId, newUuid } from "../packages/server/src/platform/ids.js";
import { CONTENT_SCOPE } from "../packages/server/src/modules/inputs/service.js";
import { insertInput, markResolved, RANK_STRIDE } from "../packages/server/src/runtime/store/inputs.js";
import { appendEvent, lockAgent, openTurn } from "../packages/server/src/runtime/store/journal.js";
import type { FakeProvider } from "../packages/server/src/runtime/models/fake-provider/index.js";
import { clearWakeup, markWakeup } from "../packages/server/src/runtime/wakeups.js";
import { eq, sql } from "drizzle-orm";
import { replayLastRequest } from "./bare-call.js";
import { analyzeEmbedded } from "../packages/server/src/platform/db/index.js";
import { timedModelClient, type ModelCall } from "./model-timing.js";
import {
  benchProject,
  changeConfig,
  countStatements,
  launchAgent,
  progress,
  sleep,
  summary,
  type BenchResult,
  type BenchServer,
  type Project,
  type Row,
  type StatementCount,
} from "./lib.js";

const SIZES = [10, 100, 1000, 5000];
const WARM_STEPS = 20;
/** Fresh workers per size; the last one goes on to the warm steps, so its cache is the steady state. */
const COLD_STEPS = 3;
/** Conversation pairs written per transaction while filling a timeline. */
const FILL_BATCH = 100;
/** The benchmark's workers never poll: every claim counted is one a step needed. */
const WORKER = { concurrency: 1, pollMs: 60_000 };

export interface Steps {
  /** Per-step wall time, ms: wakeup committed (or the previous step recorded) → this step's output committed. */
  times: number[];
  /** What the worker ran for all of them (the benchmark's own wakeup subtracted). */
  count: StatementCount;
}

const minus = (a: StatementCount, b: StatementCount): StatementCount => ({
  statements: a.statements - b.statements,
  transactions: a.transactions - b.transactions,
  commits: a.commits - b.commits,
  rows: a.rows - b.rows,
});

/**
 * A new agent whose timeline holds exactly `size` events: the launch config (and a config change, to
 * make the count even), then questions and answers, one turn each, written with svc's journal functions
 * as the claim and the record would (input, event, context, output, event), `FILL_BATCH` pairs per
 * transaction. The agent is left with no wakeup, so no worker touches it before the benchmark does.
 */
async function fillConversation(server: BenchServer, project: Project, size: number, replayScope: string): Promise<string> {
  const publicId = await launchAgent(server.api, project);
  if (size % 2 === 0) await changeConfig(server.api, project, publicId, "You are a benchmark agent in a long conversation.");
  const agentId = decodeId("agent", publicId)!;
  for (let written = 0; ; ) {
    const added = await server.db.tx(async (tx) => {
      const agent = (await lockAgent(tx, agentId))!;
      const pairs = Math.min(FILL_BATCH, Math.floor((size - (agent.nextEventSequence - 1)) / 2));
      for (let i = 0; i < pairs; i++) {
        const n = written + i;
        const turn = await openTurn(tx, agentId);
        const input = await insertInput(tx, {
          orgId: agent.orgId, agentId, inputKind: "content", deliveryMode: "queued", state: "resolved", idempotencyScope: CONTENT_SCOPE,
          requestDigest: "bench-fill", contentBlocks: [{ type: "text", text: `question ${n}` }],
        });
        const asked = await appendEvent(tx, agent, {
          turnId: turn.id, kind: "agent_input", agentInputId: input.id, opening: true, semantic: true, marks: "prompt", idempotencyKey: `agent_input:${input.id}`,
        });
        await markResolved(tx, input.id, asked.id);
        const contextId = newUuid();
        const outputId = newUuid();
        await tx.insert(modelCallContexts).values({
          id: contextId, agentId, turnId: turn.id, attemptNumber: 1, agentConfigId: agent.currentConfigId, inputEventSequence: asked.sequence, state: "succeeded", completedAt: dbNow,
        });
        await tx.insert(modelOutputs).values({
          id: outputId, agentId, modelCallContextId: contextId, stopReason: "end_turn", contentBlocks: [{ type: "text", text: `echo: question ${n}` }], providerReplay: [null], replayScope,
        });
        await appendEvent(tx, agent, { turnId: turn.id, kind: "model_output", modelOutputId: outputId, semantic: true });
      }
      if (pairs === 0) await clearWakeup(tx, agentId);
      return pairs;
    });
    if (added === 0) break;
    written += added;
  }
  const [{ n }] = (await server.db.read.select({ n: sql<number>`count(*)::int` }).from(agentEvents).where(eq(agentEvents.agentId, agentId))) as [{ n: number }];
  if (Number(n) !== size) throw new Error(`filled ${n} events, wanted ${size}`);
  return agentId;
}

/** Queues `count` content inputs on the agent without waking it: the benchmark's wakeup starts the clock. */
export async function queueQuietly(server: BenchServer, agentId: string, count: number): Promise<void> {
  await server.db.tx(async (tx) => {
    const agent = (await lockAgent(tx, agentId))!;
    // Nothing waits when this runs (every input so far was answered), so ranks start at 0.
    for (let i = 0; i < count; i++) {
      await insertInput(tx, {
        orgId: agent.orgId, agentId, inputKind: "content", deliveryMode: "queued", idempotencyScope: CONTENT_SCOPE,
        requestDigest: "bench", contentBlocks: [{ type: "text", text: `next question ${i}` }], inputRank: i * RANK_STRIDE,
      });
    }
  });
}

const wake = (server: BenchServer, agentId: string) => server.db.tx((tx) => markWakeup(tx, agentId, "queued_input"));

/** What the benchmark's own wakeup costs the counter, measured once with no worker running. */
export async function wakeupCost(server: BenchServer, agentId: string): Promise<StatementCount> {
  const counter = countStatements(server);
  await wake(server, agentId);
  const cost = counter();
  await server.db.tx((tx) => clearWakeup(tx, agentId));
  return cost;
}

/**
 * Queues `count` inputs, wakes the agent and times each step by its commits: every step notifies the
 * agent's followers twice (the claim admits the input, the record writes the output), so the even
 * notifications are the steps' ends.
 */
export async function runSteps(server: BenchServer, agentId: string, count: number, wakeup: StatementCount): Promise<Steps> {
  await queueQuietly(server, agentId, count);
  const ends: number[] = [];
  let notified = 0;
  let finish = () => {};
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const stopListening = await server.app.services.signals.onEvents(agentId, () => {
    notified += 1;
    if (notified % 2 === 0) ends.push(performance.now());
    if (notified === count * 2) finish();
  });
  const counter = countStatements(server);
  await wake(server, agentId);
  const start = performance.now();
  const timeout = sleep(120_000).then(() => "timeout" as const);
  const outcome = await Promise.race([finished.then(() => "done" as const), timeout]);
  const total = counter();
  stopListening();
  if (outcome === "timeout") throw new Error(`conversation: only ${ends.length}/${count} steps in 120 s`);
  const times = ends.map((end, i) => end - (i === 0 ? start : ends[i - 1]!));
  return { times, count: minus(total, wakeup) };
}

/** The agent's model outputs so far (read after a run, outside any count). */
async function outputsOf(server: BenchServer, agentId: string): Promise<number> {
  const [row] = await server.db.read.select({ n: sql<number>`count(*)::int` }).from(modelOutputs).where(eq(modelOutputs.agentId, agentId));
  return Number(row!.n);
}

interface SizeResult {
  size: number;
  cold: number[];
  coldCount: StatementCount;
  warm: Steps;
  /** The warm steps' calls of the worker's model client (AI SDK + guarded fetch). */
  warmCalls: ModelCall[];
  bare: number[];
}

async function measureSize(server: BenchServer, provider: FakeProvider, project: Project, size: number, replayScope: string): Promise<SizeResult> {
  const fillStart = performance.now();
  const agentId = await fillConversation(server, project, size, replayScope);
  progress(`conversation: ${size} events filled in ${((performance.now() - fillStart) / 1000).toFixed(1)} s`);
  // A conversation grows over hours, long after the embedded database's maintenance last ran ANALYZE (every
  // 10 minutes); filled in seconds, its planner statistics would still describe empty tables.
  await analyzeEmbedded(server.db);
  const wakeup = await wakeupCost(server, agentId);
  provider.reset();
  const cold: number[] = [];
  let coldCount: StatementCount = { statements: 0, transactions: 0, commits: 0, rows: 0 };
  let worker: { stop(): Promise<void> } | undefined;
  const timed = timedModelClient(server.config);
  for (let i = 0; i < COLD_STEPS; i++) {
    await worker?.stop();
    worker = server.startWorker({ ...WORKER, models: timed.client });
    // A fresh worker claims once at start and finds nothing; let that pass before counting.
    await sleep(300);
    const step = await runSteps(server, agentId, 1, wakeup);
    cold.push(step.times[0]!);
    coldCount = step.count;
  }
  const outputsBefore = await outputsOf(server, agentId);
  const callsBefore = timed.calls.length;
  const warm = await runSteps(server, agentId, WARM_STEPS, wakeup);
  await worker!.stop();
  if ((await outputsOf(server, agentId)) !== outputsBefore + WARM_STEPS) throw new Error("conversation: a warm step recorded no output");
  // The bare call with the last request the worker sent: the whole conversation, as long as svc's was.
  const bare = await replayLastRequest(provider, 30);
  provider.reset();
  return { size, cold, coldCount, warm, warmCalls: timed.calls.slice(callsBefore), bare: bare.latencies };
}

/** The replay scope svc records for the bench model, from a real step, so filled outputs replay like real ones. */
async function realStep(server: BenchServer, project: Project): Promise<string> {
  const worker = server.startWorker(WORKER);
  const publicId = await launchAgent(server.api, project, "warm up");
  const agentId = decodeId("agent", publicId)!;
  while ((await outputsOf(server, agentId)) < 1) await sleep(10);
  await worker.stop();
  const [row] = await server.db.read.select({ scope: modelOutputs.replayScope }).from(modelOutputs).where(eq(modelOutputs.agentId, agentId));
  return row!.scope!;
}

const perStep = (c: StatementCount, steps: number) =>
  `${(c.statements / steps).toFixed(1)} / ${(c.transactions / steps).toFixed(1)} / ${(c.rows / steps).toFixed(1)}`;

export async function conversationLength(server: BenchServer, provider: FakeProvider, sizes = SIZES): Promise<BenchResult> {
  const project = await benchProject(server.api, provider.baseUrl);
  const replayScope = await realStep(server, project);
  const measured: SizeResult[] = [];
  for (const size of sizes) measured.push(await measureSize(server, provider, project, size, replayScope));

  const rows: Row[] = [];
  const table: string[][] = [];
  for (const m of measured) {
    const warm = summary(m.warm.times);
    const cold = summary(m.cold);
    const bare = summary(m.bare);
    rows.push({ metric: `${m.size} events: step, warm worker (p50 of ${WARM_STEPS})`, baseline: bare.p50, svc: warm.p50, unit: "ms" });
    rows.push({ metric: `${m.size} events: step, warm worker (p99)`, baseline: bare.p99, svc: warm.p99, unit: "ms" });
    rows.push({ metric: `${m.size} events: first step, fresh worker (p50 of ${COLD_STEPS})`, baseline: bare.p50, svc: cold.p50, unit: "ms" });
    const client = summary(m.warmCalls.map((c) => c.end - c.start));
    table.push([
      String(m.size),
      `${(warm.p50 - bare.p50).toFixed(2)} ms`,
      `${client.p50.toFixed(2)} ms`,
      `${(warm.p50 - client.p50).toFixed(2)} ms`,
      `${(client.p50 - bare.p50).toFixed(2)} ms`,
      perStep(m.warm.count, WARM_STEPS),
      `${(cold.p50 - bare.p50).toFixed(2)} ms`,
      perStep(m.coldCount, 1),
    ]);
  }
  const first = measured[0]!;
  const last = measured.at(-1)!;
  const overhead = (m: SizeResult) => summary(m.warm.times).p50 - summary(m.bare).p50;
  const clientP50 = (m: SizeResult) => summary(m.warmCalls.map((c) => c.end - c.start)).p50;
  const outside = (m: SizeResult) => summary(m.warm.times).p50 - clientP50(m);
  const ownShare = (m: SizeResult) => clientP50(m) - summary(m.bare).p50;
  return {
    id: "conversation",
    title: "Model step cost against conversation length (zero-latency fake provider)",
    measured:
      `One agent per size whose timeline already holds ${sizes.map((s) => s.toLocaleString("en-US")).join(", ")} events: the launch config, then ` +
      "questions and the model's answers (one turn each), written with svc's journal functions in batches of " +
      `${FILL_BATCH} pairs, as the claim and the record write them, then (PGlite) analyzed, as its maintenance task would have long before a ` +
      "conversation grew this long. One worker with one slot (idle polling off) answers queued " +
      `inputs from the fake provider (OpenAI chat completions, streaming, no delay). First step: ${COLD_STEPS} times, a fresh worker ` +
      "answers one input, so its conversation cache is empty and it reads the whole conversation once. Warm steps: the last of " +
      `those workers, whose cache now holds the conversation, answers ${WARM_STEPS} more queued inputs (the steady state). ` +
      "A step's time runs from the commit of the agent's wakeup (or of the previous step's output) to the commit of its output, " +
      "seen by a follower of the agent's events. Statements, transactions and rows returned to svc are counted for everything " +
      "the worker ran (the benchmark's wakeup subtracted); BEGIN/COMMIT count as transactions, not statements. The worker's " +
      "model client (the AI SDK's provider package over the guarded fetch) is wrapped to time each call: it converts and " +
      "serializes the whole conversation on every call (the request body is the conversation), so its time shows how much of " +
      "a step's growth is the request itself.",
    baseline:
      "The last request the worker sent at that size (the whole conversation, so the provider parses as much as it did for svc), " +
      "replayed 30 times to the same fake provider with undici, one at a time (body read to the end): the bare provider call.",
    rows,
    facts: {
      maxWarmStatementsPerStep: Math.max(...measured.map((m) => m.warm.count.statements / WARM_STEPS)),
      maxWarmTransactionsPerStep: Math.max(...measured.map((m) => m.warm.count.transactions / WARM_STEPS)),
    },
    table: {
      columns: [
        "events before",
        "warm step overhead p50",
        "warm: model client p50",
        "warm: step outside the model call (step − client)",
        "warm: the client's own share (client − bare call)",
        "warm: statements / transactions / rows per step",
        "first step overhead p50",
        "first step: statements / transactions / rows",
      ],
      rows: table,
    },
    notes: [
      `warm step overhead (p50 step − p50 bare call): ${overhead(first).toFixed(2)} ms at ${first.size} events, ${overhead(last).toFixed(2)} ms at ${last.size} events; ` +
        `rows read per warm step ${(first.warm.count.rows / WARM_STEPS).toFixed(1)} → ${(last.warm.count.rows / WARM_STEPS).toFixed(1)}`,
      `svc's own work per warm step, outside the model call (p50 step − p50 client call): ${outside(first).toFixed(2)} ms at ${first.size} events, ` +
        `${outside(last).toFixed(2)} ms at ${last.size} events; the model client's share beyond the bare call (the AI SDK provider package ` +
        `converting the prompt and serializing the request body, both of which grow with the conversation): ${ownShare(first).toFixed(2)} ms → ` +
        `${ownShare(last).toFixed(2)} ms, which is at most what a thinner client writing the body itself would save`,
      "the first step of a fresh worker reads the conversation once (its rows grow with the timeline); a context checkpoint or a worker taking the agent over does the same once",
    ],
  };
}
