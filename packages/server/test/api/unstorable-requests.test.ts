import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeProvider, type FakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, launch } from "../support/agent-loop.js";
import { useTestServer } from "../support/server.js";

/*
 * Request text PostgreSQL cannot store (issue 9, F3): U+0000 and unpaired UTF-16 surrogates anywhere in
 * a body or a query answer 400 validation_failed with a pointer to each, never a 500, and write nothing.
 */
const server = useTestServer();
let provider: FakeProvider;
let project: AgentProject;
let agentId: string;
let configId: string;
beforeAll(async () => {
  provider = await startFakeProvider();
  project = await agentProject(server.api, provider.baseUrl);
  configId = await createConfig(server.api, project, yamlConfig(project));
  agentId = await launch(server.api, project, configId);
});
afterAll(() => provider.close());

const BAD = { nul: "a\u0000b", high: "a\ud800b", low: "a\udc00b" };

async function expectRefused(reply: Promise<{ status: number; body: any; text: string }>, path: string) {
  const answer = await reply;
  expect(answer.status, answer.text).toBe(400);
  expect(answer.body.code).toBe("validation_failed");
  expect(answer.body.issues.map((i: { path: string }) => i.path)).toContain(path);
}

describe.each(Object.entries(BAD))("request text with %s", (_kind, bad) => {
  const auth = () => ({ token: project.token });

  // A query string carries bytes: an unpaired surrogate cannot be encoded in it, U+0000 can (%00).
  it.runIf(bad === BAD.nul)("in a list's name filter", async () => {
    await expectRefused(server.api.get(`${project.base}/agents?name=${encodeURIComponent(bad)}`, auth()), "/name");
    await expectRefused(server.api.get(`/api/v1/orgs/${project.orgId}/secrets?name=${encodeURIComponent(bad)}`, auth()), "/name");
  });

  it("in an agent's name, a launch message and an input's text", async () => {
    await expectRefused(server.api.post(`${project.base}/agents`, { config: configId, name: bad }, auth()), "/name");
    await expectRefused(server.api.post(`${project.base}/agents`, { config: configId, message: bad }, auth()), "/message");
    await expectRefused(
      server.api.post(`${project.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "text", text: bad }] }, auth()),
      "/content_blocks/0/text",
    );
  });

  it("in a secret's name and an actor's metadata, values and keys", async () => {
    await expectRefused(
      server.api.post(`/api/v1/orgs/${project.orgId}/secrets`, { owner: { kind: "org" }, name: bad, material: { kind: "generic", value: "v" } }, auth()),
      "/name",
    );
    const { token } = await server.api.orgKey(project.session, project.orgId, "admin");
    await expectRefused(server.api.put(`${project.base}/actors`, { provider_user_id: "u", metadata: { k: bad } }, { token }), "/metadata/k");
    await expectRefused(server.api.put(`${project.base}/actors`, { provider_user_id: "u", metadata: { [bad]: "v" } }, { token }), `/metadata/${bad}`);
  });

  it("in a configured model's slug", async () => {
    const providers = await server.api.get(`/api/v1/orgs/${project.orgId}/model-provider-configs`, auth());
    const first = providers.body.data[0];
    const providerId = (first.config?.id ?? first.id) as string;
    await expectRefused(
      server.api.post(
        `/api/v1/orgs/${project.orgId}/model-provider-configs/${providerId}/models`,
        { name: "other", provider_model_slug: bad, context_window_tokens: 1000, max_output_tokens: 100 },
        auth(),
      ),
      "/provider_model_slug",
    );
  });

  it("leaves nothing written", async () => {
    const agents = await server.api.get(`${project.base}/agents?limit=100`, auth());
    expect(agents.body.data.every((a: { name: string }) => !a.name.includes("a"))).toBe(true);
  });
});

describe("a config source", () => {
  it("with an unpaired surrogate is refused with its line and column", async () => {
    const reply = await server.api.post(`${project.base}/agent-configs`, { source: `${yamlConfig(project)}# \ud800\n`, source_format: "yaml" }, { token: project.token });
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body.issues[0]).toMatchObject({ message: "the source must not contain unpaired UTF-16 surrogates" });
    expect(reply.body.issues[0].line).toBeGreaterThan(1);
  });
});
