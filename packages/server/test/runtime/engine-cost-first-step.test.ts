import { describe, expect, it } from "vitest";
import { decodeId } from "../../src/platform/ids.js";
import { startAgentWorker } from "../../src/runtime/index.js";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, eventually, events, finalOutputs, launch, modelCalls, requestText, send } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";
import { countStatements, notificationsSettled, type StatementCount } from "../support/statements.js";

/*
 * What a fresh agent's first model step costs the database (issue 34: at most 2 commits per step, the first
 * step of a fresh agent included), counted exactly as in engine-cost.test.ts: one worker slot, no polling,
 * the worker started and stopped inside the count, so every statement counted is the steps' own. The claim
 * reads what the worker has not cached (the definition, the endpoint) in its own transaction, and a fresh
 * agent's conversation is its admitted inputs alone (docs/performance.md, "What a step costs the database").
 */
const server = useTestServer({ SVC_WORKER_CONCURRENCY: "1", SVC_WORKER_POLL_MS: "60000" }, { followReceipts: false });
const provider = useFakeProvider();

const quiet = { info: () => {}, warn: () => {}, error: () => {} };

/** Queues one question on each of `agents` new agents of one config, then counts everything a new worker does to answer them. */
async function firstStepsCost(agents: number): Promise<StatementCount> {
  const project = await agentProject(server.api, provider.baseUrl);
  const configId = await createConfig(server.api, project, yamlConfig(project));
  const agentIds: string[] = [];
  for (let i = 0; i < agents; i++) {
    const agentId = await launch(server.api, project, configId);
    await send(server.api, project, agentId, `question ${i}`);
    agentIds.push(agentId);
  }
  provider.reset();
  provider.script(...agentIds.map((_, i) => ({ text: `answer ${i}` })));
  // Each first step commits two events (the admitted input and the output), each notifying its followers.
  let committed = 0;
  const stops = await Promise.all(agentIds.map((id) => server.app.services.signals.onEvents(decodeId("agent", id)!, () => void (committed += 1))));
  await notificationsSettled(server);
  const stopCounting = countStatements(server);
  const worker = startAgentWorker({ db: server.db, services: server.app.services, config: server.config, log: quiet });
  await eventually(async () => ({ calls: modelCalls(provider).length, committed }), (s) => s.calls === agents && s.committed >= agents * 2);
  await worker.stop();
  const count = stopCounting();
  for (const stop of stops) await stop();
  for (const agentId of agentIds) expect(finalOutputs(await events(server.api, project, agentId))).toHaveLength(1);
  // The conversation each call was shown, though none was read: its own agent's question, and no other.
  const questions = agentIds.map((_, i) => `question ${i}`);
  const shown = modelCalls(provider).map((_, call) => questions.filter((question) => requestText(provider, call).includes(question)));
  expect(shown.sort()).toEqual(questions.map((question) => [question]));
  return count;
}

const commitsOf = ({ statements, transactions, commits }: StatementCount) => ({ statements, transactions, commits });

describe("the cost of a fresh agent's first model step", () => {
  it("on a cold worker is two commits: the claim, which also reads the definition and the endpoint, and the record", async () => {
    // The claim's 3 statements and the definition (1) and endpoint (grant, provider, secret, version: 4), then the record's 2.
    expect(commitsOf(await firstStepsCost(1))).toEqual({ statements: 10, transactions: 2, commits: 2 });
  });

  it("on a worker that already stepped another agent of the same config is a warm step: five statements in two commits", async () => {
    const one = await firstStepsCost(1);
    const two = await firstStepsCost(2);
    expect({ statements: two.statements - one.statements, transactions: two.transactions - one.transactions, commits: two.commits - one.commits }).toEqual({
      statements: 5,
      transactions: 2,
      commits: 2,
    });
  });
});

/**
 * A new agent whose first input (`blocks`) a worker answered and then stopped, as before a restart; the
 * provider answers with `replies`, the first of them that answer.
 */
async function answeredByEarlierWorker(blocks: unknown[], ...replies: Array<{ text: string }>) {
  const project = await agentProject(server.api, provider.baseUrl);
  const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)));
  provider.reset();
  provider.script(...replies);
  const input = await server.api.post(`${project.base}/agents/${agentId}/inputs`, { content_blocks: blocks, delivery_mode: "queued" }, { token: project.token });
  expect(input.status, input.text).toBe(201);
  const earlier = startAgentWorker({ db: server.db, services: server.app.services, config: server.config, log: quiet });
  await eventually(async () => finalOutputs(await events(server.api, project, agentId)).length, (n) => n === 1);
  await earlier.stop();
  return { project, agentId };
}

describe("the cost of an agent's first model step on a new worker (after a restart)", () => {
  it("is two commits: the claim reads the agent's conversation as well as its definition and endpoint", async () => {
    const { project, agentId } = await answeredByEarlierWorker([{ type: "text", text: "first question" }], { text: "first answer" }, { text: "second answer" });
    await send(server.api, project, agentId, "second question");
    // The step commits two events (the admitted input and the output); counted without a request to svc.
    let committed = 0;
    const stop = await server.app.services.signals.onEvents(decodeId("agent", agentId)!, () => void (committed += 1));
    await notificationsSettled(server);
    const stopCounting = countStatements(server);
    const restarted = startAgentWorker({ db: server.db, services: server.app.services, config: server.config, log: quiet });
    await eventually(async () => ({ calls: modelCalls(provider).length, committed }), (s) => s.calls === 2 && s.committed >= 2);
    await restarted.stop();
    const count = stopCounting();
    await stop();
    expect(finalOutputs(await events(server.api, project, agentId))).toHaveLength(2);
    // The second call was shown the whole conversation, read by the claim.
    const text = requestText(provider, 1);
    for (const said of ["first question", "first answer", "second question"]) expect(text).toContain(said);
    // The claim's 3 statements, the definition (1), the endpoint (4) and the conversation (the checkpoint,
    // the events, the inputs and outputs they name, the outputs' tool calls: 5), then the record's 2.
    expect(commitsOf(count)).toEqual({ statements: 15, transactions: 2, commits: 2 });
  });

  it("shows the model an image of the earlier conversation, whose bytes the step loads outside the claim", async () => {
    const png = Buffer.from("89504e470d0a1a0a0000000d4948445200000001", "hex");
    const question = [{ type: "text", text: "what is this?" }, { type: "media", media_type: "image/png", data: png.toString("base64") }];
    const { project, agentId } = await answeredByEarlierWorker(question, { text: "a picture" }, { text: "still a picture" });
    await send(server.api, project, agentId, "and now?");
    // On the embedded database a read outside the claim's transaction waits for it to end: were the
    // bytes loaded inside it, this step would never come.
    const restarted = startAgentWorker({ db: server.db, services: server.app.services, config: server.config, log: quiet });
    await eventually(async () => finalOutputs(await events(server.api, project, agentId)).length, (n) => n === 2);
    await restarted.stop();
    const text = requestText(provider, 1);
    expect(text).toContain(png.toString("base64"));
    expect(text).toContain("and now?");
  });
});
