/**
 * Benchmark 4: orchestration overhead per model step with a zero-latency provider, for 1, 10, 100 and
 * 500 concurrently active agents, against bare calls to the same provider.
 */
import { performance } from "node:perf_hooks";
import type { FakeProvider } from "../packages/server/src/runtime/models/fake-provider/index.js";
import { rawAccess, type Raw } from "./append.js";
import { inLanes, replayLastRequest } from "./bare-call.js";
import { benchProject, countStatements, launchAgent, progress, sendInput, sleep, summary, type BenchResult, type BenchServer, type Row } from "./lib.js";
import { stepIntervals, timedModelClient, type ModelCall } from "./model-timing.js";
import { CpuGroup, machineSeconds } from "./cpu.js";

/** [active agents, model steps per agent] */
const SCENARIOS: Array<[number, number]> = [
  [1, 100],
  [10, 20],
  [100, 4],
  [500, 1],
];

const WARM_UP_STEPS = 100;

/** The row the step-overhead target (issue 8) is read from: svc's median step beside the bare call's median. */
export const STEP_MEDIAN = "1 agent: step time, median";

/**
 * Where one agent's step time goes (issue 8: "if the SDK is then the largest share, measure its share
 * and say what a thinner path would save"): medians of the step, of the time inside the model client
 * and of the bare call, from the 1-agent scenario, where steps run back to back.
 */
function modelClientShare(calls: ModelCall[], bareMedian: number) {
  const step = summary(stepIntervals(calls)).p50;
  const client = summary(calls.map((c) => c.end - c.start)).p50;
  return { step, client, overhead: step - bareMedian, own: step - client, thinnerSaves: client - bareMedian };
}

/** The row the step's floor is read from (issue 34: "beside the same run's bare call and a bare four-statement transaction"). */
const STEP_FLOOR = "1 agent: step time, median, beside its floor (bare call + 2 bare write transactions)";

/**
 * The database's floor for one commit: a bare four-statement transaction that writes, as a step's claim
 * and record do (BEGIN, an INSERT of an event-sized row, an UPDATE of a counter, COMMIT), over a raw
 * connection to the same database, one after another. On PostgreSQL its COMMIT waits for the WAL flush.
 */
async function bareWriteTransactions(raw: Raw, count: number): Promise<number[]> {
  await raw.query(`CREATE TABLE IF NOT EXISTS bench_floor_events (id bigserial PRIMARY KEY, agent_id uuid NOT NULL, body jsonb NOT NULL)`);
  await raw.query(`CREATE TABLE IF NOT EXISTS bench_floor_counters (id int PRIMARY KEY, n bigint NOT NULL)`);
  await raw.query(`INSERT INTO bench_floor_counters VALUES (1, 0) ON CONFLICT DO NOTHING`);
  const agent = "00000000-0000-4000-8000-000000000001";
  const one = () =>
    raw.tx(0, async (q) => {
      await q(`INSERT INTO bench_floor_events (agent_id, body) VALUES ($1, $2)`, [agent, JSON.stringify({ type: "text", text: "a reply of a few words" })]);
      await q(`UPDATE bench_floor_counters SET n = n + 1 WHERE id = 1`, []);
    });
  for (let i = 0; i < 20; i++) await one();
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await one();
    latencies.push(performance.now() - t);
  }
  return latencies;
}

/**
 * CPU time a scenario used, to say what bounds its steps per second: this process (svc's worker, its HTTP
 * server, the fake provider and the benchmark; on PGlite the database's thread too), the PostgreSQL
 * backends of the benchmark's database (/proc, sampled at the start and the end), and the whole machine's
 * busy share. Stops at the returned function.
 */
async function cpuWindow(server: BenchServer, raw: Raw) {
  const backends = async () =>
    server.kind === "postgres" ? (await raw.query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)).map((r) => Number(r.pid)) : [];
  const database = new CpuGroup();
  database.sample(await backends(), true);
  const machineBefore = machineSeconds();
  const processBefore = process.cpuUsage();
  return async () => {
    const used = process.cpuUsage(processBefore);
    database.sample(await backends());
    const machineAfter = machineSeconds();
    const machineBusy = machineBefore && machineAfter ? (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total) : NaN;
    return { processMs: (used.user + used.system) / 1000, databaseMs: server.kind === "postgres" ? database.seconds() * 1000 : NaN, machineBusy };
  };
}

/** `agents` picks some of the scenarios (a quick check); the published run has all four. */
export async function orchestration(server: BenchServer, provider: FakeProvider, agents?: number[]): Promise<BenchResult> {
  const scenarios = SCENARIOS.filter(([n]) => !agents || agents.includes(n));
  const concurrency = server.config.runtime.workerConcurrency;
  const project = await benchProject(server.api, provider.baseUrl);
  const raw = await rawAccess(server, 1);
  const outputs = async () => Number((await raw.query(`SELECT count(*)::int AS n FROM model_outputs`))[0].n);

  // Warm-up: as many steps as the 1-agent scenario, so connections, prepared statements and the JIT are as
  // warm as in a server that has been running (after 5 steps the median step was still 10-20% slower).
  {
    const worker = server.startWorker();
    const id = await launchAgent(server.api, project, "warm up");
    for (let i = 1; i < WARM_UP_STEPS; i++) await sendInput(server.api, project, id, `warm ${i}`);
    while ((await outputs()) < WARM_UP_STEPS) await sleep(10);
    await worker.stop();
  }

  const rows: Row[] = [];
  const notes: string[] = [];
  const cpuRows: string[][] = [];
  let bareSingle = NaN;
  let share: ReturnType<typeof modelClientShare> | undefined;
  for (const [agents, steps] of scenarios) {
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
    const cpu = await cpuWindow(server, raw);
    let polls = 0;
    const timed = timedModelClient(server.config);
    const start = performance.now();
    const worker = server.startWorker({ models: timed.client });
    let done = before;
    const deadline = start + 60_000;
    // Until the last model call arrives, watch the in-process provider (no SQL, so the measuring adds no
    // load to the database or the event loop); then poll for the last outputs to commit.
    while (provider.requests.length - callsBefore < agents * steps && performance.now() < deadline) await sleep(5);
    while (done < target && performance.now() < deadline) {
      await sleep(1);
      done = await outputs();
      polls += 1;
    }
    const wallMs = performance.now() - start;
    const used = await cpu();
    await worker.stop();
    const work = counter();
    if (done < target) throw new Error(`${agents} agents: only ${done - before}/${agents * steps} steps in 60 s`);
    const totalSteps = agents * steps;
    const calls = provider.requests.length - callsBefore;
    const perStepCpu = used.processMs / totalSteps;
    cpuRows.push([
      `${agents}`,
      (totalSteps / (wallMs / 1000)).toFixed(0),
      perStepCpu.toFixed(2),
      Number.isNaN(used.databaseMs) ? "in the process" : (used.databaseMs / totalSteps).toFixed(2),
      Number.isNaN(used.machineBusy) ? "not measured" : `${(100 * used.machineBusy).toFixed(0)}%`,
      (1000 / perStepCpu).toFixed(0),
    ]);

    // Baseline: the request svc sent, replayed straight at the provider with as many lanes as the worker had slots.
    const lanes = Math.min(agents, concurrency);
    const { latencies: bareLatencies, wallMs: bareWall } = await replayLastRequest(provider, totalSteps, lanes);
    const bare = summary(bareLatencies);
    if (agents === 1) {
      bareSingle = bare.mean;
      share = modelClientShare(timed.calls, bare.p50);
    }

    // Per-step latency as an agent sees it: its steps run one after another, so wall / steps per agent.
    // Per-slot time per step: the time one of the worker's busy slots spends on a step (wall × slots ÷ steps),
    // comparable with a bare call on one of the baseline's lanes.
    const perStep = wallMs / steps;
    const slotTime = (wallMs * lanes) / totalSteps;
    rows.push({ metric: `${agents} agent${agents > 1 ? "s" : ""}: steps/s`, baseline: totalSteps / (bareWall / 1000), svc: totalSteps / (wallMs / 1000), unit: "/s", higherIsBetter: true });
    rows.push({ metric: `${agents} agent${agents > 1 ? "s" : ""}: per-step latency (per busy slot)`, baseline: bare.mean, svc: slotTime, unit: "ms" });
    if (agents > 1) rows.push({ metric: `${agents} agents: time per step seen by one agent`, baseline: (bareWall * lanes) / totalSteps * (agents / lanes), svc: perStep, unit: "ms" });
    if (agents === 1 && share) {
      const floorTx = summary(await bareWriteTransactions(raw, 200)).p50;
      rows.push(
        { metric: STEP_MEDIAN, baseline: bare.p50, svc: share.step, unit: "ms" },
        { metric: STEP_FLOOR, baseline: bare.p50 + 2 * floorTx, svc: share.step, unit: "ms" },
        { metric: "1 agent: time inside the model client (AI SDK + guarded fetch), median", baseline: bare.p50, svc: share.client, unit: "ms" },
        { metric: "bare four-statement write transaction (BEGIN, INSERT, UPDATE, COMMIT), median", baseline: floorTx, svc: floorTx, unit: "ms" },
      );
      notes.push(
        `the floor of a step: the bare call (${bare.p50.toFixed(2)} ms) and two commits, each at least a bare four-statement write transaction ` +
          `(${floorTx.toFixed(2)} ms at p50, its COMMIT waiting for the write-ahead log's flush on PostgreSQL): ${(bare.p50 + 2 * floorTx).toFixed(2)} ms; ` +
          `svc's step is ${(share.step - bare.p50 - 2 * floorTx).toFixed(2)} ms above it`,
      );
    }
    notes.push(
      `${agents} agents × ${steps} steps: setup ${(setupMs / 1000).toFixed(1)} s, run ${(wallMs / 1000).toFixed(2)} s, ${calls} provider calls, ` +
        `${((work.statements - polls) / totalSteps).toFixed(1)} SQL statements in ${(work.transactions / totalSteps).toFixed(1)} transactions ` +
        `returning ${((work.rows - polls) / totalSteps).toFixed(1)} rows per step, ` +
        `bare call p50 ${bare.p50.toFixed(2)} ms / p99 ${bare.p99.toFixed(2)} ms with ${lanes} lanes`,
    );
  }
  await raw.close();
  const single = rows.find((r) => r.metric === "1 agent: per-step latency (per busy slot)");
  if (single) notes.unshift(`orchestration overhead per step at 1 agent ≈ ${(single.svc - bareSingle).toFixed(1)} ms (svc per-step mean − bare call mean)`);
  if (share) {
    notes.splice(
      1,
      0,
      `1 agent, medians: step overhead ${share.overhead.toFixed(2)} ms (step ${share.step.toFixed(2)} ms − bare call); inside the model client ` +
        `${share.client.toFixed(2)} ms (${((100 * share.client) / share.step).toFixed(0)}% of the step), svc's own SQL and logic ${share.own.toFixed(2)} ms; ` +
        `a thinner client path (the bare undici call of the baseline) would save about ${share.thinnerSaves.toFixed(2)} ms per step`,
    );
  }
  return {
    id: "orchestration",
    table: {
      columns: ["agents", "steps/s", "CPU ms per step, this process", "CPU ms per step, PostgreSQL", "machine busy", "steps/s one core allows at this process's CPU per step"],
      rows: cpuRows,
    },
    title: "Orchestration overhead per model step (zero-latency fake provider)",
    measured:
      "Agents on one project, each with N queued inputs (the worker stopped while they are queued); each input opens a turn that " +
      "takes exactly one model call, answered at once by the fake provider (OpenAI chat completions, streaming, no delay). " +
      `Then the worker starts (SVC_WORKER_CONCURRENCY = ${concurrency}, the default) and the clock runs until every model ` +
      "output is committed (the provider's request count is watched until the last call arrives, then a count query polls every millisecond for the last commits). A step = claim (lock, admission of the input, context " +
      "record) + building the request + the provider call through the guarded fetch and AI SDK + recording the output and " +
      "its event + the next wakeup. Per-step latency (per busy slot) = run time × min(agents, slots) ÷ steps: what one step costs " +
      "a worker slot. Time per step seen by one agent = run time ÷ steps per agent (it includes waiting for a free slot when " +
      "agents outnumber slots; the baseline figure is the same quantity for the bare calls). At 1 agent the steps run back to " +
      "back, so the time between the starts of consecutive model calls is one whole step: its median is the step time; the " +
      "worker's model client (the AI SDK over the guarded fetch, built as `svc serve` builds it) is wrapped to time each call, " +
      "which splits the step into the model client and svc's own SQL and logic. SQL statements, transactions and rows " +
      "returned per step count everything the worker ran (the benchmark's count queries subtracted). The table below the " +
      "rows says what bounds steps per second: CPU time per step of this one Node process (svc's worker and HTTP server, the " +
      "fake provider, the benchmark; on PGlite the database's thread too) and of the benchmark database's PostgreSQL " +
      "backends (/proc), and the machine's busy share of its CPUs; a JavaScript thread runs on one core, so 1000 ÷ the " +
      "process's CPU ms per step is the most steps per second it can make.",
    baseline:
      "The last request svc sent, replayed to the same fake provider with undici (body read to the end), as many calls as the " +
      `scenario had steps, with min(agents, ${concurrency}) lanes: the bare provider call time and the most the provider can serve. ` +
      "Median rows compare with the bare call's median; this bare call is the thinnest client path there is.",
    rows,
    notes,
  };
}
