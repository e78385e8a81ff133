import { describe, expect, it } from "vitest";
import { agentProject, yamlConfig } from "../support/agents.js";
import { startAgentWorker } from "../../src/runtime/index.js";
import { createConfig, eventually, launch } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";
import { countStatements } from "../support/statements.js";

/*
 * What appending to an agent costs the database once the caller is known (issue 8: at most 4 statements
 * after auth). Bearer principals and project access come from the short-lived access cache, so the
 * second request of a burst runs only the append's own statements. No worker runs here.
 */
// Statements are counted exactly: no background receipts processor runs beside the requests.
const server = useTestServer({}, { followReceipts: false });
const provider = useFakeProvider({ reset: false });

/** Sends `request` twice (the first fills the caches) and counts the statements of the second. */
async function costOfSecond(request: (label: string) => Promise<{ status: number; text: string }>, status: number) {
  expect((await request("warm the caches")).status).toBe(status);
  const stop = countStatements(server);
  const reply = await request("counted");
  const { statements, transactions } = stop();
  expect(reply.status, reply.text).toBe(status);
  return { statements, transactions };
}

describe("the cost of an append", () => {
  const textInput = (text: string) => ({ content_blocks: [{ type: "text", text }] });

  it("queues a user's input in four statements in one transaction: lock, user, actor, enqueue with its wakeup", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)));
    const send = (text: string) => server.api.post(`${project.base}/agents/${agentId}/inputs`, textInput(text), { token: project.token });
    expect(await costOfSecond(send, 201)).toEqual({ statements: 4, transactions: 1 });
  });

  it("queues an org key's unattributed input in two statements: lock, enqueue with its wakeup", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)));
    const { token } = await server.api.orgKey(project.session, project.orgId, "admin");
    const send = (text: string) => server.api.post(`${project.base}/agents/${agentId}/inputs`, textInput(text), { token });
    expect(await costOfSecond(send, 201)).toEqual({ statements: 2, transactions: 1 });
  });

  // Compiling reads the model with its grant in one statement (the config row of a known definition is
  // remembered: config rows never change); the append writes input, turn, event and config in one.
  it("changes the config of an agent whose turn has settled in four statements: lock, model, turn, append", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const first = await createConfig(server.api, project, yamlConfig(project));
    const agentId = await launch(server.api, project, first);
    // The counted change goes back to the first config: a known definition, as a relaunch or revert is.
    const sources = [yamlConfig(project, "", "You are the second config."), yamlConfig(project)];
    const change = () => server.api.post(`${project.base}/agents/${agentId}/config`, { source: sources.shift(), source_format: "yaml" }, { token: project.token });
    expect(await costOfSecond(change, 200)).toEqual({ statements: 4, transactions: 1 });
  });

  // A custom tool's answer: the agent and the call are read together (the check before media is stored),
  // then, under the agent's lock, the call again and one statement writing result, call state, event,
  // wakeup and their hints, which takes its COMMIT along (nine statements when those were written one by one).
  it("submits a custom tool call's result in five statements in one transaction", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const tools = "tools:\n  lookup:\n    type: custom\n    description: Looks a thing up\n    input_schema: { type: object }\n";
    // Asked for by the message, not by a script: the worker also answers the agents of the tests above.
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project, tools)), "call tool lookup {}");
    const calls = `${project.base}/agents/${agentId}/tool-calls`;
    const worker = startAgentWorker({ db: server.db, services: server.app.services, config: server.config, log: { info: () => {}, warn: () => {}, error: () => {} } });
    const ready = await eventually(
      async () => (await server.api.get(`${calls}?state=ready`, { token: project.token })).body.data,
      (list: Array<{ id: string }>) => list.length === 1,
    ).finally(() => worker.stop());
    expect((await server.api.get(calls, { token: project.token })).status).toBe(200);
    const stop = countStatements(server);
    const reply = await server.api.post(`${calls}/${ready[0]!.id}/result`, { outcome: "succeeded", content_blocks: [{ type: "text", text: "42" }] }, { token: project.token });
    const { statements, transactions } = stop();
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.tool_call).toMatchObject({ state: "completed", outcome: "succeeded" });
    expect(reply.body.tool_result).toMatchObject({ outcome: "succeeded", content_blocks: [{ type: "text", text: "42" }] });
    // Written by one statement, so with one clock reading.
    expect(reply.body.tool_call.completed_at).toBe(reply.body.tool_result.created_at);
    expect({ statements, transactions }).toEqual({ statements: 5, transactions: 1 });
  });

  // Not an append, but on the same path of every agent response: a config row never changes, so the model
  // it names is remembered, and reading an agent is the agent's own lookup only.
  it("reads an agent in two statements (the agent, its activity) once its config's model is known", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)));
    const read = () => server.api.get(`${project.base}/agents/${agentId}`, { token: project.token });
    // The agent's lookup, and its activity (what it is doing now, docs/console.md): one statement each.
    expect(await costOfSecond(read, 200)).toEqual({ statements: 2, transactions: 0 });
    expect((await read()).body.agent.model).toEqual({ provider_config: project.providerName, name: project.modelName });
  });
});
