/**
 * Benchmark 4: orchestration overhead per model step with a zero-latency provider, for 1, 10, 100 and
 * 500 concurrently active agents, against bare calls to the same provider.
 */
import { performance } from "node:perf_hooks";
import { Agent, request } from "undici";
import type { FakeProvider } from "../packages/server/src/runtime/models/fake-provider/index.js";
import { rawAccess } from "./append.js";
import { benchProject, countStatements, launchAgent, progress, sendInput, sleep, summary, type BenchResult, type BenchServer, type Row } from "./lib.js";

/** [active agents, model steps per agent] */
const SCENARIOS: Array<[number, number]> = [
  [1, 100],
  [10, 20],
  [100, 4],
  [500, 1],
];

async function inLanes<T>(items: T[], lanes: number, work: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(Array.from({ length: lanes }, async () => {
    while (next < items.length) await work(items[next++]!);
  }));
}

export async function orchestration(server: BenchServer, provider: FakeProvider): Promise<BenchResult> {
  const concurrency = server.config.runtime.workerConcurrency;
  const project = await benchProject(server.api, provider.baseUrl);
  const raw = await rawAccess(server, 1);
  const outputs = async () => Number((await raw.query(`SELECT count(*)::int AS n FROM model_outputs`))[0].n);

  // Warm-up: a few steps so connections, prepared paths and JIT are warm.
  {
    const worker = server.startWorker();
    const id = await launchAgent(server.api, project, "warm up");
    for (let i = 0; i < 4; i++) await sendInput(server.api, project, id, `warm ${i}`);
    while ((await outputs()) < 5) await sleep(10);
    await worker.stop();
  }

  const rows: Row[] = [];
  const notes: string[] = [];
  let bareSingle = NaN;
  for (const [agents, steps] of SCENARIOS) {
    // Set up with the worker stopped: every agent gets `steps` queued inputs, each of which opens one turn
    // that takes one model call (the fake provider answers with text, ending the turn).
    const setupStart = performance.now();
    const ids: string[] = [];
    await inLanes(Array.from({ length: agents }, (_, i) => i), 8, async () => void ids.push(await launchAgent(server.api, project, "step 0")));
    await inLanes(ids.flatMap((id) => Array.from({ length: steps - 1 }, (_, s) => [id, s + 1] as const)), 8, ([id, s]) => sendInput(server.api, project, id, `step ${s}`));
    const setupMs = performance.now() - setupStart;
    progress(`orchestration: ${agents} agents set up in ${(setupMs / 1000).toFixed(1)} s`);
    const before = await outputs();
    const target = before + agents * steps;
    const callsBefore = provider.requests.length;

    const counter = countStatements(server);
    let polls = 0;
    const start = performance.now();
    const worker = server.startWorker();
    let done = before;
    const deadline = start + 60_000;
    while (done < target && performance.now() < deadline) {
      await sleep(5);
      done = await outputs();
      polls += 1;
    }
    const wallMs = performance.now() - start;
    await worker.stop();
    const work = counter();
    if (done < target) throw new Error(`${agents} agents: only ${done - before}/${agents * steps} steps in 60 s`);
    const totalSteps = agents * steps;
    const calls = provider.requests.length - callsBefore;

    // Baseline: the request svc sent, replayed straight at the provider with as many lanes as the worker had slots.
    const lanes = Math.min(agents, concurrency);
    const sample = provider.requests.at(-1)!;
    const dispatcher = new Agent({ connections: lanes + 4 });
    const bareCall = async () => {
      const reply = await request(`${provider.url}${sample.path}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer sk-bench" },
        body: JSON.stringify(sample.body),
        dispatcher,
      });
      await reply.body.text();
    };
    for (let i = 0; i < 20; i++) await bareCall();
    const bareLatencies: number[] = [];
    const bareStart = performance.now();
    await inLanes(Array.from({ length: totalSteps }, (_, i) => i), lanes, async () => {
      const t = performance.now();
      await bareCall();
      bareLatencies.push(performance.now() - t);
    });
    const bareWall = performance.now() - bareStart;
    await dispatcher.close();
    const bare = summary(bareLatencies);
    if (agents === 1) bareSingle = bare.mean;

    // Per-step latency as an agent sees it: its steps run one after another, so wall / steps per agent.
    // Per-slot time per step: the time one of the worker's busy slots spends on a step (wall × slots ÷ steps),
    // comparable with a bare call on one of the baseline's lanes.
    const perStep = wallMs / steps;
    const slotTime = (wallMs * lanes) / totalSteps;
    rows.push({ metric: `${agents} agent${agents > 1 ? "s" : ""}: steps/s`, baseline: totalSteps / (bareWall / 1000), svc: totalSteps / (wallMs / 1000), unit: "/s", higherIsBetter: true });
    rows.push({ metric: `${agents} agent${agents > 1 ? "s" : ""}: per-step latency (per busy slot)`, baseline: bare.mean, svc: slotTime, unit: "ms" });
    if (agents > 1) rows.push({ metric: `${agents} agents: time per step seen by one agent`, baseline: (bareWall * lanes) / totalSteps * (agents / lanes), svc: perStep, unit: "ms" });
    notes.push(
      `${agents} agents × ${steps} steps: setup ${(setupMs / 1000).toFixed(1)} s, run ${(wallMs / 1000).toFixed(2)} s, ${calls} provider calls, ` +
        `${((work.statements - polls) / totalSteps).toFixed(1)} SQL statements in ${(work.transactions / totalSteps).toFixed(1)} transactions per step, ` +
        `bare call p50 ${bare.p50.toFixed(2)} ms / p99 ${bare.p99.toFixed(2)} ms with ${lanes} lanes`,
    );
  }
  await raw.close();
  const single = rows[1]!;
  notes.unshift(`orchestration overhead per step at 1 agent ≈ ${(single.svc - bareSingle).toFixed(1)} ms (svc per-step − bare call)`);
  return {
    id: "orchestration",
    title: "Orchestration overhead per model step (zero-latency fake provider)",
    measured:
      "Agents on one project, each with N queued inputs (the worker stopped while they are queued); each input opens a turn that " +
      "takes exactly one model call, answered at once by the fake provider (OpenAI chat completions, streaming, no delay). " +
      `Then the worker starts (SVC_WORKER_CONCURRENCY = ${concurrency}, the default) and the clock runs until every model ` +
      "output is committed (polled with a count query every 5 ms). A step = claim (lock, admission of the input, context " +
      "record) + building the request + the provider call through the guarded fetch and AI SDK + recording the output and " +
      "its event + the next wakeup. Per-step latency (per busy slot) = run time × min(agents, slots) ÷ steps: what one step costs " +
      "a worker slot. Time per step seen by one agent = run time ÷ steps per agent (it includes waiting for a free slot when " +
      "agents outnumber slots; the baseline figure is the same quantity for the bare calls).",
    baseline:
      "The last request svc sent, replayed to the same fake provider with undici (body read to the end), as many calls as the " +
      `scenario had steps, with min(agents, ${concurrency}) lanes: the bare provider call time and the most the provider can serve.`,
    rows,
    notes,
  };
}
