import { describe, expect, it } from "vitest";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, launch } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";
import { countStatements } from "../support/statements.js";

/*
 * What appending to an agent costs the database once the caller is known (issue 8: at most 4 statements
 * after auth). Bearer principals and project access come from the short-lived access cache, so the
 * second request of a burst runs only the append's own statements. No worker runs here.
 */
const server = useTestServer();
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

  // Not an append, but on the same path of every agent response: a config row never changes, so the model
  // it names is remembered, and reading an agent is the agent's own lookup only.
  it("reads an agent in one statement once its config's model is known", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)));
    const read = () => server.api.get(`${project.base}/agents/${agentId}`, { token: project.token });
    expect(await costOfSecond(read, 200)).toEqual({ statements: 1, transactions: 0 });
    expect((await read()).body.agent.model).toEqual({ provider_config: project.providerName, name: project.modelName });
  });
});
