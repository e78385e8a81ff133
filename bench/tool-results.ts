/**
 * Benchmark 7: answering custom tool calls through the API (`POST …/tool-calls/{id}/result`) against raw
 * transactions writing the same rows.
 */
import { randomUUID } from "node:crypto";
import { encodeId } from "../packages/server/src/platform/ids.js";
import { rawAccess, timed } from "./append.js";
import { benchProject, launchAgent, progress, sleep, type BenchResult, type BenchServer } from "./lib.js";

const WARM = 20;

/** A config whose one tool the client answers; the fake provider calls it when a message asks it to. */
const CUSTOM_TOOL = "tools:\n  lookup:\n    type: custom\n    description: Looks a thing up.\n    input_schema: { type: object }\n";

export async function toolResults(server: BenchServer, providerUrl: string, count: number): Promise<BenchResult> {
  const project = await benchProject(server.api, providerUrl, CUSTOM_TOOL);
  const raw = await rawAccess(server, 1);
  // Every agent's model step asks for one call; the worker stops once all of them wait for their result.
  const agents = await Promise.all(Array.from({ length: WARM + count }, () => launchAgent(server.api, project, "call tool lookup {}")));
  const worker = server.startWorker();
  const readyCount = async () => Number((await raw.query(`SELECT count(*)::int AS n FROM tool_calls WHERE state = 'ready'`))[0].n);
  for (let waited = 0; (await readyCount()) < agents.length; waited += 50) {
    if (waited > 60_000) throw new Error(`tool results: only ${await readyCount()}/${agents.length} calls ready in 60 s`);
    await sleep(50);
  }
  await worker.stop();
  const calls: Array<{ agent_id: string; id: string }> = await raw.query(`SELECT agent_id, id FROM tool_calls WHERE state = 'ready'`);
  const paths = calls.map((c) => `${project.base}/agents/${encodeId("agent", c.agent_id)}/tool-calls/${encodeId("toolCall", c.id)}/result`);
  const answer = async (path: string) => {
    const reply = await server.timed.send("POST", path, project.token, { outcome: "succeeded", content_blocks: [{ type: "text", text: "42" }] });
    if (reply.status !== 200) throw new Error(`tool result: ${reply.status} ${reply.text.slice(0, 500)}`);
  };
  for (const path of paths.slice(0, WARM)) await answer(path);
  const api = await timed(count, 1, (_l, i) => answer(paths[WARM + i]!));
  progress(`tool results: ${count} API results done; raw baseline`);

  // Baseline: per result, one transaction that locks a counter row, inserts the result row (jsonb content),
  // completes the call row, inserts the event at the next sequence and advances the counter.
  await raw.query(`CREATE TABLE bench_calls (id uuid PRIMARY KEY, state text NOT NULL, completed_at timestamptz)`);
  await raw.query(`CREATE TABLE bench_results (call_id uuid PRIMARY KEY REFERENCES bench_calls(id), content_blocks jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`);
  await raw.query(`CREATE TABLE bench_counter (id uuid PRIMARY KEY, next_sequence bigint NOT NULL)`);
  await raw.query(`CREATE TABLE bench_result_events (id uuid PRIMARY KEY, sequence bigint NOT NULL UNIQUE, call_id uuid NOT NULL REFERENCES bench_calls(id))`);
  const counter = randomUUID();
  await raw.query(`INSERT INTO bench_counter VALUES ($1, 1)`, [counter]);
  const rawCalls = Array.from({ length: WARM + count }, () => randomUUID());
  for (const id of rawCalls) await raw.query(`INSERT INTO bench_calls (id, state) VALUES ($1, 'ready')`, [id]);
  const rawAnswer = (call: string) =>
    raw.tx(0, async (q) => {
      const [row] = await q(`SELECT next_sequence FROM bench_counter WHERE id = $1 FOR UPDATE`, [counter]);
      await q(`INSERT INTO bench_results (call_id, content_blocks) VALUES ($1, $2)`, [call, JSON.stringify([{ type: "text", text: "42" }])]);
      await q(`UPDATE bench_calls SET state = 'completed', completed_at = now() WHERE id = $1`, [call]);
      await q(`INSERT INTO bench_result_events (id, sequence, call_id) VALUES ($1, $2, $3)`, [randomUUID(), row.next_sequence, call]);
      await q(`UPDATE bench_counter SET next_sequence = next_sequence + 1 WHERE id = $1`, [counter]);
    });
  for (const call of rawCalls.slice(0, WARM)) await rawAnswer(call);
  const baseline = await timed(count, 1, (_l, i) => rawAnswer(rawCalls[WARM + i]!));
  await raw.query(`DROP TABLE bench_result_events, bench_counter, bench_results, bench_calls`);
  await raw.close();

  return {
    id: "tool-results",
    title: "Answering custom tool calls through the API",
    measured:
      "`POST …/agents/{id}/tool-calls/{id}/result` with one text block, one client, each on a different agent's ready call " +
      `(${count} results after ${WARM} warm-up ones; the worker made the calls ready and was stopped before timing). Each request ` +
      "includes HTTP + auth + access check, reading the call, then one transaction that locks the agent, reads the call again and " +
      "writes the result, the call's state, the `tool_result` event with its turn's bookkeeping, the agent's wakeup and the NOTIFYs.",
    baseline:
      "Raw transactions on the same database, one after another: lock a counter row FOR UPDATE, insert a result row (jsonb), " +
      "complete the call row, insert an event row at the next sequence, advance the counter. No HTTP.",
    rows: [
      { metric: "results/s", baseline: baseline.perSecond, svc: api.perSecond, unit: "/s", higherIsBetter: true },
      { metric: "latency p50", baseline: baseline.p50, svc: api.p50, unit: "ms" },
      { metric: "latency p99", baseline: baseline.p99, svc: api.p99, unit: "ms" },
    ],
  };
}
