import { describe, expect, it } from "vitest";
import { decodeId } from "../../src/platform/ids.js";
import { startAgentWorker } from "../../src/runtime/index.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, eventually, events, finalOutputs, launch, modelCalls, send } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";
import { countStatements, notificationsSettled, type StatementCount } from "../support/statements.js";

/*
 * What a model step costs the database, counted exactly (issue 8: a plain step in at most 6 statements
 * in at most 2 transactions, notifications included, and flat in conversation length). The worker runs
 * with one slot and no polling, so every statement counted is the step's own.
 */
// No integration receipts processor either: it would claim receipts (none here) after a lost LISTEN connection.
const server = useTestServer({ SVC_WORKER_CONCURRENCY: "1", SVC_WORKER_POLL_MS: "60000" }, { followReceipts: false });
const provider = useFakeProvider();

const quiet = { info: () => {}, warn: () => {}, error: () => {} };

/** Queues `inputs` on a new agent with no worker running, then counts everything one worker does to answer them. */
async function costOf(project: AgentProject, configId: string, inputs: number): Promise<StatementCount> {
  const agentId = await launch(server.api, project, configId);
  for (let i = 0; i < inputs; i++) await send(server.api, project, agentId, `question ${i}`);
  provider.reset();
  provider.script(...Array.from({ length: inputs }, (_, i) => ({ text: `answer ${i}` })));
  let committed = 0;
  const stopListening = await server.app.services.signals.onEvents(decodeId("agent", agentId)!, () => void (committed += 1));
  await notificationsSettled(server);
  const stopCounting = countStatements(server);
  const worker = startAgentWorker({ db: server.db, services: server.app.services, config: server.config, log: quiet });
  // The last step's record notifies on commit. The worker is stopped inside the count, so whatever it does
  // after its last step (and to stop) is in both counts alike, however late it runs on a loaded machine.
  await eventually(async () => ({ calls: modelCalls(provider).length, committed }), (s) => s.calls === inputs && s.committed >= inputs * 2);
  await worker.stop();
  const count = stopCounting();
  await stopListening();
  const list = await events(server.api, project, agentId);
  expect(finalOutputs(list).map((e) => e.content_blocks[0].text)).toEqual(Array.from({ length: inputs }, (_, i) => `answer ${i}`));
  expect(list.map((e) => e.sequence)).toEqual(Array.from({ length: 1 + inputs * 2 }, (_, i) => i + 1));
  return count;
}

describe("the cost of a model step", () => {
  it("is five statements in two transactions, the same at the tenth step as at the second", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const configId = await createConfig(server.api, project, yamlConfig(project));
    // Each agent starts with a fresh worker, so both pay the same cold first step (definition, endpoint
    // and conversation reads); the difference is what the later steps cost.
    const one = await costOf(project, configId, 1);
    const ten = await costOf(project, configId, 10);
    expect({ statements: ten.statements - one.statements, transactions: ten.transactions - one.transactions }).toEqual({ statements: 9 * 5, transactions: 9 * 2 });
  });

  it("reads a rotated provider credential at the next step: database triggers clear the worker's endpoint cache", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const worker = startAgentWorker({ db: server.db, services: server.app.services, config: server.config, log: quiet });
    try {
      provider.script({ text: "first" }, { text: "second" });
      const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)), "one");
      await eventually(() => events(server.api, project, agentId), (list) => finalOutputs(list).length === 1);
      const secrets = await server.api.get(`/api/v1/orgs/${project.orgId}/secrets`, { token: project.token });
      const secretId = secrets.body.data[0].id as string;
      let announced = 0;
      const stop = await server.app.services.signals.onModelAccessChanged(() => void (announced += 1));
      const rotated = await server.api.post(`/api/v1/orgs/${project.orgId}/secrets/${secretId}/versions`, { material: { kind: "generic", value: "sk-rotated" } }, { token: project.token });
      expect(rotated.status, rotated.text).toBe(200);
      // The trigger's NOTIFY reaches every listener of this process (the worker's cache among them) on commit.
      await eventually(async () => announced, (n) => n > 0);
      await stop();
      await send(server.api, project, agentId, "two");
      await eventually(() => events(server.api, project, agentId), (list) => finalOutputs(list).length === 2);
      const [first, second] = modelCalls(provider);
      expect(first!.headers["authorization"]).toBe("Bearer sk-test-key");
      expect(second!.headers["authorization"]).toBe("Bearer sk-rotated");
    } finally {
      await worker.stop();
    }
  });
});
