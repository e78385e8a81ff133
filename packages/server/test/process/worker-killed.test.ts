import { afterAll, describe, expect, it } from "vitest";
import { encodeId, decodeId } from "../../src/platform/ids.js";
import { startFakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, eventually, events, finalOutputs, launch, modelCalls, providerRequests, send, untilEvents } from "../support/agent-loop.js";
import { ApiClient } from "../support/client.js";
import { exited } from "../support/process.js";
import { startSplitDeployment } from "../support/split-deployment.js";

/*
 * A worker process killed between the claim and the record of a model step: its claim transaction
 * committed (the runtime lock and a started model call context exist) and the model call is in flight,
 * but nothing of the reply is recorded. PostgreSQL only, like split-roles.test.ts: the roles run as
 * separate processes, and the embedded database belongs to one.
 */

const adminUrl = process.env["DATABASE_URL"];
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

interface Attempt {
  id: string;
  attempt_number: number;
  state: string;
}

describe.skipIf(!adminUrl)("a worker killed between the claim and the record", () => {
  it("maintenance reaps its lease and the next worker retries the step once, as attempt 2, with a dense timeline", { timeout: 120_000 }, async () => {
    const provider = await startFakeProvider();
    cleanups.push(() => provider.close());
    const deployment = await startSplitDeployment(adminUrl!, { SVC_WORKER_CONCURRENCY: "1" });
    cleanups.push(() => deployment.close());
    const [api, maintenance, victim] = await Promise.all([deployment.start("api"), deployment.start("maintenance"), deployment.start("worker")]);

    const client = new ApiClient(deployment.url, deployment.url);
    const project = await agentProject(client, provider.baseUrl);
    // The first call never answers: the worker is killed while it waits, before it can record anything.
    provider.script({ hang: true }, { text: "finished by the second worker" });
    const agentId = await launch(client, project, await createConfig(client, project, yamlConfig(project)));
    const inputId = await send(client, project, agentId, "do the thing");
    await providerRequests(provider, 1);

    // The request goes out only after the claim committed, so the victim's lock is there.
    const attempts = () =>
      deployment.query<Attempt>("SELECT id, attempt_number, state FROM model_call_contexts WHERE agent_id = $1 ORDER BY attempt_number", [
        decodeId("agent", agentId),
      ]);
    const locks = () => deployment.query<{ worker_id: string }>("SELECT worker_id FROM agent_runtime_locks");
    expect((await locks()).map((lock) => Number(lock.worker_id.split(":")[1]))).toEqual([victim.pid]);
    expect(await attempts()).toEqual([expect.objectContaining({ attempt_number: 1, state: "started" })]);
    victim.kill("SIGKILL");
    await exited(victim);

    // No worker runs now: only maintenance can free the lease, once it has expired.
    await eventually(locks, (rows) => rows.length === 0);
    expect(await attempts()).toEqual([expect.objectContaining({ attempt_number: 1, state: "failed" })]);
    expect((await events(client, project, agentId)).filter((e) => e.event_kind === "model_output")).toEqual([]);

    const successor = await deployment.start("worker");
    const list = await untilEvents(client, project, agentId, (l) => finalOutputs(l).length === 1);

    expect(modelCalls(provider)).toHaveLength(2);
    // The retry sent the same step again, not a later one.
    expect(modelCalls(provider)[1]!.body).toEqual(modelCalls(provider)[0]!.body);
    // The launch's config event, the input admitted once, one output: densely numbered.
    expect(list.map((e) => [e.sequence, e.event_kind])).toEqual([
      [1, "agent_input"],
      [2, "agent_input"],
      [3, "model_output"],
    ]);
    const inputs = list.filter((e) => e.event_kind === "agent_input" && e.agent_input_id === inputId);
    expect(inputs).toHaveLength(1);
    const outputs = list.filter((e) => e.event_kind === "model_output");
    expect(outputs).toHaveLength(1);
    expect(outputs[0].content_blocks).toEqual([{ type: "text", text: "finished by the second worker" }]);
    const [first, second, ...more] = await attempts();
    expect([first, second, more]).toEqual([
      expect.objectContaining({ attempt_number: 1, state: "failed" }),
      expect.objectContaining({ attempt_number: 2, state: "succeeded" }),
      [],
    ]);
    // The recorded output is attempt 2's.
    expect(outputs[0].model_call_context_id).toBe(encodeId("modelCallContext", second!.id));
    expect(await backlog(client, project, agentId)).toEqual([]);

    for (const child of [api, successor, maintenance]) child.kill("SIGTERM");
    expect(await Promise.all([api, successor, maintenance].map(exited))).toEqual([0, 0, 0]);
  });
});

/** The agent's inputs still waiting to be admitted. */
async function backlog(api: ApiClient, project: AgentProject, agentId: string): Promise<unknown[]> {
  const reply = await api.get(`${project.base}/agents/${agentId}/inputs/backlog`, { token: project.token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.data;
}
