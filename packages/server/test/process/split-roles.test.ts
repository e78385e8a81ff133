import { afterAll, describe, expect, it } from "vitest";
import { startFakeProvider, type FakeReply } from "../../src/runtime/models/fake-provider/index.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, finalOutputs, launch, modelCalls, providerRequests, send, sequences, untilEvents } from "../support/agent-loop.js";
import { ApiClient } from "../support/client.js";
import { exited } from "../support/process.js";
import { startSplitDeployment } from "../support/split-deployment.js";
import { SseStream, type SseFrame } from "../support/sse.js";

/*
 * svc scaled out: `svc api`, two `svc worker` processes and one `svc maintenance`, each its own OS
 * process on one PostgreSQL database. Only PostgreSQL can be shared; the embedded database belongs to
 * one process (serve.test.ts checks that these roles refuse it).
 */

const adminUrl = process.env["DATABASE_URL"];
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const AGENTS = 8;
const STEPS = 4;

describe.skipIf(!adminUrl)("a split deployment on PostgreSQL", () => {
  it("svc api, two svc workers and svc maintenance run agents together; no model step runs twice", { timeout: 180_000 }, async () => {
    const provider = await startFakeProvider();
    cleanups.push(() => provider.close());
    const deployment = await startSplitDeployment(adminUrl!, { SVC_WORKER_CONCURRENCY: "3" });
    cleanups.push(() => deployment.close());
    const { url } = deployment;
    const [api, maintenance, ...workers] = await Promise.all([
      deployment.start("api"),
      deployment.start("maintenance"),
      deployment.start("worker"),
      deployment.start("worker"),
    ]);

    const client = new ApiClient(url, url);
    const project = await agentProject(client, provider.baseUrl);
    const configId = await createConfig(client, project, yamlConfig(project));

    // Every reply is distinct and takes a moment, so the workers' slots overlap and a step run twice
    // would show up as a reply used twice (or one left over).
    const replies: FakeReply[] = Array.from({ length: AGENTS * STEPS }, (_, i) => ({ text: `reply ${i}`, delayMs: 40 }));
    provider.script(...replies);

    const holders = new Set<string>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        for (const row of await deployment.query<{ worker_id: string }>("SELECT worker_id FROM agent_runtime_locks")) holders.add(row.worker_id);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();

    const ids: string[] = [];
    for (let a = 0; a < AGENTS; a++) ids.push(await launch(client, project, configId, `agent ${a} step 0`));
    const watched = await followFromStart(url, project, ids[0]!);
    for (let s = 1; s < STEPS; s++) for (const [a, id] of ids.entries()) await send(client, project, id, `agent ${a} step ${s}`);

    const timelines = await Promise.all(ids.map((id) => untilEvents(client, project, id, (list) => finalOutputs(list).length === STEPS)));
    sampling = false;
    await sampler;

    expect(modelCalls(provider)).toHaveLength(AGENTS * STEPS);
    const texts = timelines.flatMap((list) => finalOutputs(list).map((e) => e.content_blocks[0].text as string));
    expect(texts.sort()).toEqual(replies.map((r) => r.text!).sort());
    // Each timeline: the launch's config event, then one input and one output per step, densely numbered.
    for (const list of timelines) expect(list.map((e) => e.sequence)).toEqual(sequences(1 + STEPS * 2));
    const retried = await deployment.query("SELECT id FROM model_call_contexts WHERE attempt_number > 1 OR state <> 'succeeded'");
    expect(retried).toEqual([]);
    // Both workers held runtime locks: the work was shared, not done by one while the other idled.
    const pids = [...holders].map((holder) => Number(holder.split(":")[1]));
    expect(new Set(pids)).toEqual(new Set(workers.map((w) => w.pid)));

    // The stream on the API process saw what the workers appended, in order, once each, with previews.
    const frames = await framesThrough(watched, 1 + STEPS * 2);
    const saved = frames.filter((f) => f.event !== "model_output_delta");
    expect(saved.map((f) => Number(f.id))).toEqual(sequences(1 + STEPS * 2));
    const outputContexts = saved.filter((f) => f.event === "model_output").map((f) => f.json.model_call_context_id);
    const deltaContexts = new Set(frames.filter((f) => f.event === "model_output_delta").map((f) => f.json.model_call_context_id));
    // Previews are live only: the launch's call may have streamed before the stream opened, the later
    // ones (their inputs were sent after it opened) must have been previewed, all under their output's id.
    expect(outputContexts).toHaveLength(STEPS);
    for (const context of deltaContexts) expect(outputContexts).toContain(context);
    for (const context of outputContexts.slice(1)) expect(deltaContexts).toContain(context);

    // A worker killed mid-call: maintenance (its own process) reaps the lease and the other worker retries.
    provider.script({ hang: true }, { text: "finished by the other worker" });
    const before = modelCalls(provider).length;
    await send(client, project, ids[1]!, "one more");
    await providerRequests(provider, before + 1);
    // The call's claim committed before the request went out, so its lock is there: the only one now.
    const [lock] = await deployment.query<{ worker_id: string }>("SELECT worker_id FROM agent_runtime_locks");
    const victimPid = Number(lock!.worker_id.split(":")[1]);
    const victim = workers.find((w) => w.pid === victimPid)!;
    const survivor = workers.find((w) => w !== victim)!;
    victim.kill("SIGKILL");
    await exited(victim);

    const list = await untilEvents(client, project, ids[1]!, (l) => finalOutputs(l).length === STEPS + 1);
    expect(finalOutputs(list).at(-1).content_blocks).toEqual([{ type: "text", text: "finished by the other worker" }]);
    expect(list.map((e) => e.sequence)).toEqual(sequences(1 + (STEPS + 1) * 2));
    expect(modelCalls(provider)).toHaveLength(before + 2);
    const attempts = await deployment.query<{ attempt_number: number; state: string }>(
      // Only the agent that got one more input has a turn that far.
      "SELECT c.attempt_number, c.state FROM model_call_contexts c JOIN agent_turns t ON t.id = c.turn_id " +
        "WHERE t.turn_sequence = (SELECT max(turn_sequence) FROM agent_turns) ORDER BY c.attempt_number",
    );
    expect(attempts).toEqual([
      { attempt_number: 1, state: "failed" },
      { attempt_number: 2, state: "succeeded" },
    ]);

    for (const child of [api, survivor, maintenance]) child.kill("SIGTERM");
    expect(await Promise.all([api, survivor, maintenance].map(exited))).toEqual([0, 0, 0]);
  });
});

/** An SSE stream of the agent's timeline from its first event, with model output previews. */
async function followFromStart(url: string, project: AgentProject, agentId: string): Promise<SseStream> {
  const stream = await SseStream.open(`${url}${project.base}/agents/${agentId}/events/stream?after_sequence=0&stream_deltas=true`, { token: project.token });
  expect(stream.status).toBe(200);
  return stream;
}

/** Frames until the saved event with sequence `last` (bounded by the stream's own wait per frame). */
async function framesThrough(stream: SseStream, last: number): Promise<SseFrame[]> {
  const frames: SseFrame[] = [];
  while (frames.at(-1)?.id !== String(last)) {
    const item = await stream.next(30_000);
    if (item.kind === "frame") frames.push(item);
  }
  return frames;
}
