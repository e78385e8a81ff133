import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeProvider, type FakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { agentProject, yamlConfig } from "../support/agents.js";
import { useTestServer } from "../support/server.js";

/*
 * Checking a config without saving it (`POST …/agent-configs/validate`, docs/agent-configs.md "Checking a
 * config as you type"): the same issues a create answers, as a 200; and the document's JSON Schema that
 * editors complete from.
 */
const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true" });
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await fake?.close();
});

type Issue = { path: string; message: string; line?: number; column?: number };

describe("validating an agent config without saving it", () => {
  it("answers 200 with the issues a create answers, at their line and column, and saves nothing", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const auth = { token: p.token };
    const source = yamlConfig(p, "  colour: blue\ntools:\n  web_search: {}\n");
    const created = await server.api.post(`${p.base}/agent-configs`, { source, source_format: "yaml" }, auth);
    expect(created.status).toBe(400);
    const checked = await server.api.post(`${p.base}/agent-configs/validate`, { source, source_format: "yaml" }, auth);
    expect(checked.status, checked.text).toBe(200);
    expect(Object.keys(checked.body)).toEqual(["issues"]);
    expect(checked.body.issues).toEqual(created.body.issues);
    const issues = checked.body.issues as Issue[];
    expect(issues.map((i) => [i.path, i.line])).toEqual([
      ["/model/colour", 6],
      ["/tools/web_search", 8],
    ]);

    // A model the project has no grant for is found too: the checks that read the project run as well.
    const ungranted = yamlConfig({ ...p, modelName: "slow" });
    const model = await server.api.post(`${p.base}/agent-configs/validate`, { source: ungranted, source_format: "yaml" }, auth);
    expect(model.status).toBe(200);
    expect((model.body.issues as Issue[]).map((i) => i.path)).toEqual(["/model/name"]);

    // A source that does not parse: an issue where the parser stopped.
    const broken = await server.api.post(`${p.base}/agent-configs/validate`, { source: "version: v1\nmodel: {a: b: c}\n", source_format: "yaml" }, auth);
    expect(broken.status).toBe(200);
    expect(broken.body.issues).toEqual([{ path: "", message: expect.any(String), line: 2, column: expect.any(Number) }]);

    // A valid source: no issues, and still no config made.
    const fine = await server.api.post(`${p.base}/agent-configs/validate`, { source: yamlConfig(p), source_format: "yaml" }, auth);
    expect(fine.status).toBe(200);
    expect(fine.body).toEqual({ issues: [] });
    const first = await server.api.post(`${p.base}/agent-configs`, { source: yamlConfig(p), source_format: "yaml" }, auth);
    expect(first.status, "validate saved the config").toBe(201);
  });

  it("refuses a malformed request (4xx), an unknown caller (401) and a project the caller cannot see (404)", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const auth = { token: p.token };
    const url = `${p.base}/agent-configs/validate`;
    const missing = await server.api.post(url, { source: yamlConfig(p) }, auth);
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe("validation_failed");
    const extra = await server.api.post(url, { source: yamlConfig(p), source_format: "yaml", save: true }, auth);
    expect(extra.status).toBe(400);
    expect((await server.api.post(url, { source: yamlConfig(p), source_format: "yaml" })).status).toBe(401);
    const other = await agentProject(server.api, fake.baseUrl);
    const foreign = await server.api.post(url, { source: yamlConfig(p), source_format: "yaml" }, { token: other.token });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe("not_found");
  });
});

describe("the config document's JSON Schema", () => {
  it("lists the document's keys, the built-in tools and the permission modes, with descriptions", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const reply = await server.api.get(`${p.base}/agent-configs/schema`, { token: p.token });
    expect(reply.status, reply.text).toBe(200);
    const schema = reply.body;
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(schema.required).toEqual(["version", "instruction", "model"]);
    expect(Object.keys(schema.properties)).toEqual(["version", "instruction", "model", "tools", "mcp", "machine_sources", "machine_tools", "skills", "interaction_handlers"]);
    expect(Object.keys(schema.properties.model.properties)).toContain("provider_config");
    expect(schema.properties.tools.properties.run_command.description).toEqual(expect.any(String));
    expect(schema.properties.tools.properties.ask_question.properties.permission.properties.mode.enum).toEqual(["always_allow", "always_ask", "always_deny"]);
    expect((await server.api.get(`${p.base}/agent-configs/schema`)).status).toBe(401);
  });
});
