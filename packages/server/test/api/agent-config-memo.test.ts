import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeProvider, type FakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { agentProject, yamlConfig } from "../support/agents.js";
import { useTestServer } from "../support/server.js";

/*
 * Issue 8, item 4: compiling memoizes the pure half (parse and document checks) by source hash and
 * compiler version. What reads the database (the model and its grant, MCP bearer secrets) is checked on
 * every compile, so the same source can be refused later.
 */
const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true" });
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await fake?.close();
});

describe("compiling a source again", () => {
  it("answers the same config, and refuses it once its MCP bearer secret is gone", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const secret = await server.api.post(
      `/api/v1/orgs/${p.orgId}/secrets`,
      { owner: { kind: "project", project_id: p.projectId }, name: "mcp token", material: { kind: "generic", value: "t" } },
      { token: p.token },
    );
    expect(secret.status, secret.text).toBe(201);
    const source = yamlConfig(p, ["mcp:", "  docs:", "    url: https://mcp.example.com/mcp", `    auth: {type: bearer, secret_id: ${secret.body.id}}`, ""].join("\n"));
    const post = () => server.api.post(`${p.base}/agent-configs`, { source, source_format: "yaml" }, { token: p.token });

    const first = await post();
    expect(first.status, first.text).toBe(201);
    const again = await post();
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);

    expect((await server.api.delete(`/api/v1/orgs/${p.orgId}/secrets/${secret.body.id}`, { token: p.token })).status).toBe(204);
    const refused = await post();
    expect(refused.status).toBe(400);
    expect(refused.body.issues).toEqual([expect.objectContaining({ path: "/mcp/docs/auth/secret_id", line: expect.any(Number) })]);
  });

  it("still reports document issues every time", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const source = yamlConfig(p, "colour: blue\n");
    for (let i = 0; i < 2; i++) {
      const reply = await server.api.post(`${p.base}/agent-configs`, { source, source_format: "yaml" }, { token: p.token });
      expect(reply.status).toBe(400);
      expect(reply.body.issues).toEqual([expect.objectContaining({ path: "/colour" })]);
    }
  });
});
