import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeProvider, type FakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, launch } from "../support/agent-loop.js";
import { useTestServer } from "../support/server.js";
import { countStatements } from "../support/statements.js";

/*
 * What appending to an agent costs the database once the caller is known (issue 8: at most 4 statements
 * after auth). Bearer principals and project access come from the short-lived access cache, so the
 * second request of a burst runs only the append's own statements. No worker runs here.
 */
const server = useTestServer();
let provider: FakeProvider;
beforeAll(async () => {
  provider = await startFakeProvider();
});
afterAll(() => provider.close());

describe("the cost of an append", () => {
  it("queues a user's input in four statements in one transaction: lock, user, actor, enqueue with its wakeup", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)));
    const send = (text: string) =>
      server.api.post(`${project.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "text", text }] }, { token: project.token });
    expect((await send("warm the caches")).status).toBe(201);
    const stop = countStatements(server);
    const reply = await send("counted");
    const { statements, transactions } = stop();
    expect(reply.status, reply.text).toBe(201);
    expect({ statements, transactions }).toEqual({ statements: 4, transactions: 1 });
  });

  it("queues an org key's unattributed input in two statements: lock, enqueue with its wakeup", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)));
    const { token } = await server.api.orgKey(project.session, project.orgId, "admin");
    const send = (text: string) => server.api.post(`${project.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "text", text }] }, { token });
    expect((await send("warm the caches")).status).toBe(201);
    const stop = countStatements(server);
    const reply = await send("counted");
    const { statements, transactions } = stop();
    expect(reply.status, reply.text).toBe(201);
    expect({ statements, transactions }).toEqual({ statements: 2, transactions: 1 });
  });

  // Compiling reads the model with its grant in one statement (the config row of a known definition is
  // remembered: config rows never change); the append writes input, turn, event and config in one.
  it("changes the config of an agent whose turn has settled in four statements: lock, model, turn, append", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const first = await createConfig(server.api, project, yamlConfig(project));
    const agentId = await launch(server.api, project, first);
    const second = yamlConfig(project, "", "You are the second config.");
    const change = (source: string) =>
      server.api.post(`${project.base}/agents/${agentId}/config`, { source, source_format: "yaml" }, { token: project.token });
    expect((await change(second)).status).toBe(200);
    const stop = countStatements(server);
    const reply = await change(yamlConfig(project));
    const { statements, transactions } = stop();
    expect(reply.status, reply.text).toBe(200);
    expect({ statements, transactions }).toEqual({ statements: 4, transactions: 1 });
  });
});
