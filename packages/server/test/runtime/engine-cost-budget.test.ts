import { describe, expect, it } from "vitest";
import { decodeId } from "../../src/platform/ids.js";
import { startAgentWorker } from "../../src/runtime/index.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, eventually, events, finalOutputs, launch, modelCalls, send } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";
import { countStatements, notificationsSettled, type StatementCount } from "../support/statements.js";

/*
 * What a model step costs the database with budgets in force (docs/usage-and-budgets.md, "Enforcement"): the
 * check rides inside the claim's turn summary, so a step stays at engine-cost.test.ts's five statements in two
 * transactions. Counted as there: one worker slot, no polling, every statement counted is the step's own.
 */
const server = useTestServer({ SVC_WORKER_CONCURRENCY: "1", SVC_WORKER_POLL_MS: "60000" }, { followReceipts: false });
const provider = useFakeProvider();

const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const USAGE = { inputTokens: 1000, outputTokens: 200, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };

async function costOf(project: AgentProject, configId: string, inputs: number, budget: (agentId: string) => Promise<void>): Promise<StatementCount> {
  const agentId = await launch(server.api, project, configId);
  await budget(agentId);
  for (let i = 0; i < inputs; i++) await send(server.api, project, agentId, `question ${i}`);
  provider.reset();
  provider.script(...Array.from({ length: inputs }, (_, i) => ({ text: `answer ${i}`, usage: USAGE })));
  let committed = 0;
  const stopListening = await server.app.services.signals.onEvents(decodeId("agent", agentId)!, () => void (committed += 1));
  await notificationsSettled(server);
  const stopCounting = countStatements(server);
  const worker = startAgentWorker({ db: server.db, services: server.app.services, config: server.config, log: quiet });
  await eventually(async () => ({ calls: modelCalls(provider).length, committed }), (s) => s.calls === inputs && s.committed >= inputs * 2);
  await worker.stop();
  const count = stopCounting();
  await stopListening();
  const list = await events(server.api, project, agentId);
  expect(finalOutputs(list)).toHaveLength(inputs);
  return count;
}

describe("the cost of a model step with a budget in force", () => {
  it("is still five statements in two transactions", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const configId = await createConfig(server.api, project, yamlConfig(project));
    const agentBudget = (agentId: string) =>
      server.api
        .post(
          `/api/v1/orgs/${project.orgId}/budgets`,
          { name: `cap ${agentId}`, scope: { kind: "agent", id: agentId }, period: "month", limit_tokens: 1_000_000_000, action: "pause", notify_at_percent: [90] },
          { token: project.token },
        )
        .then((reply) => expect(reply.status, reply.text).toBe(201));
    const one = await costOf(project, configId, 1, agentBudget);
    const ten = await costOf(project, configId, 10, agentBudget);
    expect({ statements: ten.statements - one.statements, transactions: ten.transactions - one.transactions }).toEqual({ statements: 9 * 5, transactions: 9 * 2 });
  });
});
