import { createHash } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentConfigs } from "../../src/db/schema/index.js";
import { decodeId } from "../../src/platform/ids.js";
import { startFakeProvider, type FakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { useTestServer } from "../support/server.js";
import { ISO, MREV_ID } from "./models-fixtures.js";

const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true" });
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await fake?.close();
});

const ACFG_ID = /^acfg_[a-z2-7]{26}$/;
const HASH = /^sha256:[0-9a-f]{64}$/;
const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

function create(p: AgentProject, source: string, format: "yaml" | "json" = "yaml", token = p.token) {
  return server.api.post(`${p.base}/agent-configs`, { source, source_format: format }, { token });
}

/** The issues of a 400 validation_failed reply. */
async function issuesOf(p: AgentProject, source: string, format: "yaml" | "json" = "yaml") {
  const reply = await create(p, source, format);
  expect(reply.status, reply.text).toBe(400);
  expect(reply.body.code).toBe("validation_failed");
  expect(Object.keys(reply.body).sort()).toEqual(["code", "error", "issues"]);
  return reply.body.issues as Array<{ path: string; message: string; line?: number; column?: number }>;
}

/** Adds a model to the project's provider config (granted unless told otherwise); returns its id. */
async function addModel(p: AgentProject, body: Record<string, unknown>, grant: Record<string, unknown> | null = {}) {
  const auth = { token: p.token };
  const providers = await server.api.get(`/api/v1/orgs/${p.orgId}/model-provider-configs`, auth);
  const providerId = providers.body.data[0].id as string;
  const model = await server.api.post(`/api/v1/orgs/${p.orgId}/model-provider-configs/${providerId}/models`, body, auth);
  expect(model.status, model.text).toBe(201);
  if (grant) {
    const granted = await server.api.post(`${p.base}/model-grants`, { configured_model_id: model.body.id, ...grant }, auth);
    expect(granted.status, granted.text).toBe(201);
  }
  return model.body.id as string;
}

describe("creating agent configs", () => {
  it("compiles a YAML config (201), answers the same source with the same config (200), and reads it back", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const source = yamlConfig(p);
    const created = await create(p, source);
    expect(created.status, created.text).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(ACFG_ID),
      org_id: p.orgId,
      project_id: p.projectId,
      source,
      source_format: "yaml",
      compiler_version: "svc-2",
      effective_definition_hash: expect.stringMatching(HASH),
      model: {
        provider_config: "fake",
        name: "fast",
        provider_model_slug: "fake-model",
        configured_model_id: p.configuredModelId,
        current_revision_id: expect.stringMatching(MREV_ID),
        api_format: "openai-chat-completions",
        api_variant: "default",
        context_window_tokens: 128000,
        max_output_tokens: 4096,
        default_max_output_tokens: 4096,
        default_cache_retention: "short",
        supports_tools: true,
        supports_reasoning: false,
        default_reasoning_effort: "",
        supported_reasoning_efforts: [],
        input_modalities: [],
        output_modalities: [],
      },
      instruction_hash: sha256("You are a helpful test agent."),
      created_at: expect.stringMatching(ISO),
    });

    const again = await create(p, source);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(created.body);
    const read = await server.api.get(`${p.base}/agent-configs/${created.body.id}`, { token: p.token });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
  });

  it("keeps each source text apart but hashes equal definitions equally, YAML or JSON", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const yaml = await create(p, yamlConfig(p));
    const spaced = await create(p, `# the same agent\n${yamlConfig(p)}`);
    const json = await create(
      p,
      JSON.stringify({ version: "v1", instruction: "You are a helpful test agent.", model: { provider_config: "fake", name: "fast" } }),
      "json",
    );
    expect([yaml.status, spaced.status, json.status]).toEqual([201, 201, 201]);
    expect(new Set([yaml.body.id, spaced.body.id, json.body.id]).size).toBe(3);
    expect(spaced.body.effective_definition_hash).toBe(yaml.body.effective_definition_hash);
    expect(json.body.effective_definition_hash).toBe(yaml.body.effective_definition_hash);
    expect(json.body.source_format).toBe("json");
    const other = await create(p, yamlConfig(p, "", "Another instruction."));
    expect(other.body.effective_definition_hash).not.toBe(yaml.body.effective_definition_hash);
  });

  it("compiles tools into the definition the agent loop runs", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const source = JSON.stringify({
      version: "v1",
      instruction: "Help.",
      model: { provider_config: "fake", name: "fast", cache_retention: "long" },
      tools: {
        lookup: {
          type: "custom",
          description: "Looks a thing up.",
          input_schema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
          permission: { mode: "always_ask" },
        },
        ask_question: { permission: { mode: "always_deny" } },
      },
    });
    const reply = await create(p, source, "json");
    expect(reply.status, reply.text).toBe(201);
    // The compiled definition has no HTTP surface of its own: it is what the worker reads from the row.
    const [row] = await server.db.read.select().from(agentConfigs).where(eq(agentConfigs.id, decodeId("agentConfig", reply.body.id)!));
    const definition = row!.compiledDefinition;
    expect(definition.model).toMatchObject({
      providerConfigName: "fake",
      name: "fast",
      configuredModelId: decodeId("configuredModel", p.configuredModelId),
      apiFormat: "openai-chat-completions",
      providerModelSlug: "fake-model",
      contextWindowTokens: 128000,
      maxOutputTokens: 4096,
      cacheRetention: "long",
      supportsReasoning: false,
      reasoningEffort: "",
    });
    expect(definition.tools.map((t) => [t.name, t.type, t.permission])).toEqual([
      ["ask_question", "built_in", "always_deny"],
      ["lookup", "custom", "always_ask"],
      // Added to every config with enabled tools, to read back results saved as artifacts (the reference's rule).
      ["read_file", "built_in", "always_allow"],
      ["search_files", "built_in", "always_allow"],
    ]);
    expect(definition.tools[0]!.inputSchema).toMatchObject({ type: "object", additionalProperties: false, required: ["questions"] });
    expect(definition.tools[1]).toMatchObject({ description: "Looks a thing up.", inputSchema: { required: ["q"] } });
    expect(row!.sourceHash).toBe(sha256(source));
    expect(row!.effectiveDefinitionHash).toBe(reply.body.effective_definition_hash);

    const disabled = await create(p, yamlConfig(p, "tools:\n  ask_question: {enabled: false}\n"));
    expect(disabled.status, disabled.text).toBe(201);
    const [bare] = await server.db.read.select().from(agentConfigs).where(eq(agentConfigs.id, decodeId("agentConfig", disabled.body.id)!));
    expect(bare!.compiledDefinition.tools).toEqual([]);
    expect(disabled.body.effective_definition_hash).toBe((await create(p, yamlConfig(p))).body.effective_definition_hash);
  });
});

describe("concurrent creation", () => {
  it("gives racing identical requests one config", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const source = yamlConfig(p, "", "Raced.");
    const replies = await Promise.all(Array.from({ length: 6 }, () => create(p, source)));
    expect(new Set(replies.map((reply) => reply.body.id)).size).toBe(1);
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
  });
});

describe("config issues point into the source", () => {
  it("reports an unknown key at the key", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const issues = await issuesOf(p, "version: v1\ninstruction: hi\nmodel:\n  provider_config: fake\n  name: fast\n  colour: red\n");
    expect(issues).toEqual([
      {
        path: "/model/colour",
        message: "unknown key; expected one of: provider_config, name, context_window_tokens, default_max_output_tokens, cache_retention, reasoning",
        line: 6,
        column: 3,
      },
    ]);
  });

  it("reports a missing section at the mapping that should hold it", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    expect(await issuesOf(p, "# no model\nversion: v1\ninstruction: hi\n")).toEqual([
      { path: "/model", message: expect.stringContaining("is required"), line: 2, column: 1 },
    ]);
    expect(await issuesOf(p, "version: v1\ninstruction: hi\nmodel:\n  provider_config: fake\n")).toEqual([
      { path: "/model/name", message: expect.stringContaining("is required"), line: 3, column: 1 },
    ]);
  });

  it("reports a wrong permission mode at its value", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const issues = await issuesOf(p, yamlConfig(p, "tools:\n  ask_question:\n    permission:\n      mode: sometimes\n"));
    expect(issues).toEqual([
      {
        path: "/tools/ask_question/permission/mode",
        message: 'must be one of: always_allow, always_ask, always_deny; got "sometimes"',
        line: 9,
        column: 13,
      },
    ]);
  });

  it("reports bad custom tool schemas where they go wrong", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const tools = [
      "tools:",
      "  lookup:",
      "    type: custom",
      "    description: Looks a thing up",
      "    input_schema:",
      "      type: object",
      "      properties:",
      "        q: {type: strin}",
      "  plain:",
      "    type: custom",
      "    description: Not an object",
      "    input_schema: {type: string}",
      "  vague:",
      "    type: custom",
      "    input_schema: {type: object}",
      "",
    ].join("\n");
    expect(await issuesOf(p, yamlConfig(p, tools))).toEqual([
      {
        path: "/tools/lookup/input_schema/properties/q/type",
        message: "is not valid JSON Schema: must be one of: array, boolean, integer, null, number, object, string",
        line: 13,
        column: 19,
      },
      { path: "/tools/plain/input_schema/type", message: 'must be "object": a tool\'s input is always an object; got "string"', line: 17, column: 26 },
      { path: "/tools/vague/description", message: expect.stringContaining("is required"), line: 18, column: 3 },
    ]);
  });

  it("reports every problem of a document at once", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const source = [
      "version: v2",
      "instruction: ''",
      "model:",
      "  provider_config: fake",
      "  name: fast",
      "  cache_retention: forever",
      "tools:",
      "  web_search: {}",
      "  mcp__linear__get: {}",
      "  ask_question: yes please",
      "extra: 1",
      "",
    ].join("\n");
    expect(await issuesOf(p, source)).toEqual([
      { path: "/extra", message: expect.stringContaining("unknown key"), line: 11, column: 1 },
      { path: "/version", message: 'must be "v1", the only config version; got "v2"', line: 1, column: 10 },
      { path: "/instruction", message: "must not be empty", line: 2, column: 14 },
      { path: "/model/cache_retention", message: 'must be one of: none, short, long; got "forever"', line: 6, column: 20 },
      { path: "/tools/web_search", message: expect.stringMatching(/^unknown tool "web_search"/), line: 8, column: 3 },
      { path: "/tools/mcp__linear__get", message: "the mcp__ prefix is reserved for tools of MCP servers", line: 9, column: 3 },
      { path: "/tools/ask_question", message: expect.stringMatching(/^must be an object/), line: 10, column: 17 },
    ]);
  });

  it("reports YAML syntax errors at the whole document, with their position", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    expect(await issuesOf(p, "version: v1\ninstruction: hi: there\n")).toEqual([
      { path: "", message: "Nested mappings are not allowed in compact mappings", line: 2, column: 14 },
    ]);
    expect(await issuesOf(p, "version: v1\nversion: v1\n")).toEqual([{ path: "", message: "Map keys must be unique", line: 2, column: 1 }]);
    expect(await issuesOf(p, "version: v1\ntools:\n  a: {}\n  b: [{x: 1, x: 2}]\n")).toEqual([{ path: "", message: "Map keys must be unique", line: 4, column: 14 }]);
  });

  it("reports JSON syntax errors and JSON issues with their positions", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const broken = '{"version": "v1",\n  "instruction": "hi",\n  "model": {"provider_config": "fake" "name": "fast"}\n}';
    expect(await issuesOf(p, broken, "json")).toEqual([
      { path: "", message: "unexpected '\"' where ',' or '}' belongs", line: 3, column: 39 },
    ]);
    expect(await issuesOf(p, '{"version": "v1", "version": "v1"}', "json")).toEqual([
      { path: "", message: 'duplicate key "version"', line: 1, column: 19 },
    ]);
    expect(await issuesOf(p, '{"version": "v1",\n "instruction": "hi",\n "model": {"provider_config": "fake", "name": 7}}', "json")).toEqual([
      { path: "/model/name", message: "must be a string; got 7", line: 3, column: 47 },
    ]);
    expect(await issuesOf(p, "[1, 2]", "json")).toEqual([{ path: "", message: expect.stringContaining("must be an object"), line: 1, column: 1 }]);
    expect(await issuesOf(p, "{} trailing", "json")).toEqual([
      { path: "", message: "unexpected 't' after the end of the document", line: 1, column: 4 },
    ]);
  });

  it("refuses NUL characters, alias bombs and runaway nesting with an issue, never a server error", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    expect(await issuesOf(p, "version: v1\ninstruction: a\u0000b\n")).toEqual([
      { path: "", message: "the source must not contain NUL characters", line: 2, column: 15 },
    ]);
    const escaped = JSON.stringify({ version: "v1", instruction: "a\u0000b", model: { provider_config: "fake", name: "fast" } });
    expect(await issuesOf(p, escaped, "json")).toEqual([
      { path: "/instruction", message: "must not contain NUL characters", line: 1, column: 31 },
    ]);
    const bomb = ["a: &a [x, x, x, x, x, x, x, x, x, x]", ...Array.from({ length: 8 }, (_, i) => {
      const prev = String.fromCharCode(97 + i);
      const next = String.fromCharCode(98 + i);
      return `${next}: &${next} [*${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}]`;
    })].join("\n");
    const [aliases] = await issuesOf(p, bomb);
    expect(aliases).toMatchObject({ path: "", message: expect.stringContaining("alias"), line: 1, column: 1 });
    expect(await issuesOf(p, "[".repeat(300) + "]".repeat(300), "json")).toEqual([
      { path: "", message: "objects and lists are nested more than 100 levels deep", line: 1, column: 101 },
    ]);
    // 100 levels are fine as far as nesting goes (the document is then simply not a config).
    expect((await issuesOf(p, "[".repeat(100) + "]".repeat(100), "json"))[0]!.message).toMatch(/^the config must be an object/);
    // Deep YAML never reaches yaml's recursive composer: on Node 20 a second stack overflow there can abort
    // the process, so these run several times in a row and the server must still answer afterwards.
    for (let round = 0; round < 3; round++) {
      for (const deep of ["[".repeat(20000) + "]".repeat(20000), "- ".repeat(50000) + "x", "a:\n" + "  - ".repeat(150) + "x"]) {
        const issues = await issuesOf(p, deep);
        expect(issues).toEqual([{ path: "", message: "mappings and lists are nested more than 100 levels deep", line: expect.any(Number), column: expect.any(Number) }]);
      }
    }
    expect(await issuesOf(p, "[".repeat(20000) + "]".repeat(20000))).toEqual([
      { path: "", message: "mappings and lists are nested more than 100 levels deep", line: 1, column: 101 },
    ]);
    const chain = ["l0: &l0 [x]", ...Array.from({ length: 120 }, (_, i) => `l${i + 1}: &l${i + 1} [*l${i}]`)].join("\n");
    expect(await issuesOf(p, chain)).toEqual([{ path: "", message: "a config may use at most 100 aliases", line: 102, column: 14 }]);
    expect((await create(p, yamlConfig(p))).status).toBe(201);
  });

  it("refuses a source longer than 131072 characters before parsing it", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const padded = (length: number) => yamlConfig(p).padEnd(length, "#");
    const reply = await create(p, padded(128 * 1024 + 1));
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code: "validation_failed", issues: [expect.objectContaining({ path: "/source" })] });
    expect((await create(p, padded(128 * 1024))).status).toBe(201);
  });

  it("refuses what the project cannot use instead of ignoring it", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const rest = "machine_sources:\n  - machine_pool_name: default\nskills: [nope]\n";
    expect(await issuesOf(p, yamlConfig(p, rest))).toEqual([
      { path: "/skills/0", message: 'must be a skill id (skl_…); got "nope"', line: 8, column: 10 },
      { path: "/machine_sources/0/machine_pool_name", message: 'no machine pool named "default" is granted to this project', line: 7, column: 24 },
    ]);
    // Empty sections hold nothing that cannot run.
    expect((await create(p, yamlConfig(p, "mcp: {}\nmachine_sources: []\nskills: []\n"))).status).toBe(201);
  });
});

describe("the mcp section", () => {
  it("accepts servers with a mode per server and per tool, and a project secret as bearer token", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const secret = await server.api.post(
      `/api/v1/orgs/${p.orgId}/secrets`,
      { owner: { kind: "project", project_id: p.projectId }, name: "linear token", material: { kind: "generic", value: "t" } },
      { token: p.token },
    );
    expect(secret.status, secret.text).toBe(201);
    const rest = [
      "mcp:",
      "  linear:",
      "    url: https://mcp.linear.app/mcp",
      `    auth: {type: bearer, secret_id: ${secret.body.id}}`,
      "    permission: {mode: always_ask}",
      "    tools:",
      "      get_issue: {permission: {mode: always_allow}}",
      "      delete-issue: {permission: {mode: always_deny}}",
      "  docs-2:",
      "    url: http://127.0.0.1:9/mcp",
      "",
    ].join("\n");
    const reply = await create(p, yamlConfig(p, rest));
    expect(reply.status, reply.text).toBe(201);
    const [row] = await server.db.read.select().from(agentConfigs).where(eq(agentConfigs.id, decodeId("agentConfig", reply.body.id)!));
    expect(row!.compiledDefinition.mcp).toEqual({
      "docs-2": { url: "http://127.0.0.1:9/mcp", auth: { type: "none" }, permission: "always_ask", toolPermissions: {} },
      linear: {
        url: "https://mcp.linear.app/mcp",
        auth: { type: "bearer", secretId: decodeId("secret", secret.body.id) },
        permission: "always_ask",
        toolPermissions: { get_issue: "always_allow", "delete-issue": "always_deny" },
      },
    });
  });

  it("names every problem: keys, urls, auth, secrets the project cannot use and modes", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const orgSecret = await server.api.post(`/api/v1/orgs/${p.orgId}/secrets`, { owner: { kind: "org" }, name: "org token", material: { kind: "generic", value: "t" } }, { token: p.token });
    expect(orgSecret.status, orgSecret.text).toBe(201);
    const rest = [
      "mcp:",
      "  bad__key: {url: https://a.example}",
      "  nourl: {}",
      "  ftp: {url: ftp://files.example/mcp}",
      "  creds: {url: https://user:pw@a.example/mcp}",
      "  sigv4: {url: https://a.example, auth: {type: sigv4, secret_id: x}}",
      `  foreign: {url: https://a.example, auth: {type: bearer, secret_id: ${orgSecret.body.id}}}`,
      "  modes:",
      "    url: https://a.example",
      "    permission: {mode: sometimes}",
      "    tools:",
      "      'a.b': {permission: {mode: always_allow}}",
      "      ok: {}",
      "",
    ].join("\n");
    expect(await issuesOf(p, yamlConfig(p, rest))).toEqual([
      { path: "/mcp/bad__key", message: "server keys are 1 to 32 letters and digits, with single - or _ between them", line: 7, column: 3 },
      { path: "/mcp/nourl/url", message: "is required: the server's Streamable HTTP endpoint, such as https://mcp.example.com/mcp", line: 8, column: 3 },
      { path: "/mcp/ftp/url", message: "must use https (or http); got ftp:", line: 9, column: 14 },
      { path: "/mcp/creds/url", message: "must not carry credentials; use auth with a secret", line: 10, column: 16 },
      { path: "/mcp/sigv4/auth/type", message: "sigv4 authentication for MCP servers is not supported yet; use none, bearer or oauth", line: 11, column: 48 },
      { path: "/mcp/modes/permission/mode", message: "must be one of: always_allow, always_ask, always_deny; got \"sometimes\"", line: 15, column: 24 },
      { path: "/mcp/modes/tools/a.b", message: "MCP tool names are letters, digits, _ or -, and mcp__modes__<tool> is at most 64 characters", line: 17, column: 7 },
      { path: "/mcp/modes/tools/ok/permission", message: "is required: the mode for this tool, overriding the server's", line: 18, column: 7 },
      { path: "/mcp/foreign/auth/secret_id", message: `no secret ${orgSecret.body.id} is owned by or granted to this project`, line: 12, column: 69 },
    ]);
  });
});

describe("resolving the model", () => {
  it("names the field to fix when the provider config, the model or the grant is missing", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    await addModel(p, { name: "slow", provider_model_slug: "slow-model", context_window_tokens: 32000 }, null);
    const model = (provider: string, name: string) => `version: v1\ninstruction: hi\nmodel:\n  provider_config: ${provider}\n  name: ${name}\n`;
    expect(await issuesOf(p, model("nope", "fast"))).toEqual([
      { path: "/model/provider_config", message: 'the organization has no model provider config named "nope"', line: 4, column: 20 },
    ]);
    expect(await issuesOf(p, model("fake", "nope"))).toEqual([
      { path: "/model/name", message: 'provider config "fake" has no model named "nope"', line: 5, column: 9 },
    ]);
    expect(await issuesOf(p, model("fake", "slow"))).toEqual([
      { path: "/model/name", message: expect.stringContaining("is not granted to this project"), line: 5, column: 9 },
    ]);
  });

  it("lets a config narrow the model's limits, never widen them", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const model = (settings: string) => yamlConfig(p).replace("  name: fast\n", `  name: fast\n${settings}`);
    const narrowed = await create(p, model("  context_window_tokens: 64000\n  default_max_output_tokens: 2000\n  cache_retention: none\n"));
    expect(narrowed.status, narrowed.text).toBe(201);
    expect(narrowed.body.model).toMatchObject({
      context_window_tokens: 64000,
      max_output_tokens: 4096,
      default_max_output_tokens: 2000,
      default_cache_retention: "none",
    });
    const small = await create(p, model("  context_window_tokens: 3000\n  default_max_output_tokens: 1000\n"));
    expect(small.body.model).toMatchObject({ context_window_tokens: 3000, max_output_tokens: 2999, default_max_output_tokens: 1000 });

    const cases: Array<[string, string, unknown]> = [
      ["  context_window_tokens: 200000\n", "/model/context_window_tokens", "must not exceed the model's context window in this project (128000)"],
      ["  default_max_output_tokens: 5000\n", "/model/default_max_output_tokens", "must not exceed the model's max_output_tokens in this project (4096)"],
      ["  context_window_tokens: 3000\n", "/model/context_window_tokens", expect.stringContaining("default output cap (4096)")],
      ["  context_window_tokens: 2000\n  default_max_output_tokens: 2000\n", "/model/default_max_output_tokens", "must be below the context window (2000)"],
      ["  context_window_tokens: 1\n", "/model/context_window_tokens", "must be a whole number from 2 to 2147483647; got 1"],
      ["  reasoning: {effort: high}\n", "/model/reasoning", "the model does not support reasoning in this project; remove reasoning"],
    ];
    for (const [settings, path, message] of cases) {
      const issues = await issuesOf(p, model(settings));
      expect(issues, settings).toEqual([{ path, message, line: expect.any(Number), column: expect.any(Number) }]);
    }
  });

  it("uses the project's view of the model: the grant narrows it, reasoning efforts must be the model's", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    await addModel(
      p,
      {
        name: "thinker",
        provider_model_slug: "think-model",
        context_window_tokens: 200000,
        max_output_tokens: 64000,
        default_max_output_tokens: 16000,
        supports_reasoning: true,
        default_reasoning_effort: "medium",
        supported_reasoning_efforts: ["low", "medium", "high"],
        input_modalities: ["text", "image"],
      },
      { context_window_tokens: 100000, supported_reasoning_efforts: ["low", "medium"], input_modalities: ["text"] },
    );
    const thinker = (settings = "") => `version: v1\ninstruction: think\nmodel:\n  provider_config: fake\n  name: thinker\n${settings}`;
    const plain = await create(p, thinker());
    expect(plain.status, plain.text).toBe(201);
    expect(plain.body.model).toMatchObject({
      provider_model_slug: "think-model",
      context_window_tokens: 100000,
      max_output_tokens: 64000,
      default_max_output_tokens: 16000,
      supports_reasoning: true,
      default_reasoning_effort: "medium",
      supported_reasoning_efforts: ["low", "medium"],
      input_modalities: ["text"],
    });
    const low = await create(p, thinker("  reasoning:\n    effort: low\n"));
    expect(low.body.model.default_reasoning_effort).toBe("low");
    expect(await issuesOf(p, thinker("  reasoning:\n    effort: high\n"))).toEqual([
      { path: "/model/reasoning/effort", message: "must be one of the model's reasoning efforts: low, medium", line: 7, column: 13 },
    ]);
    expect(await issuesOf(p, thinker("  context_window_tokens: 150000\n"))).toEqual([
      {
        path: "/model/context_window_tokens",
        message: "must not exceed the model's context window in this project (100000)",
        line: 6,
        column: 26,
      },
    ]);
  });

  it("refuses tools for a model that cannot call them", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    await addModel(p, { name: "toolless", provider_model_slug: "m", context_window_tokens: 32000, supports_tools: false });
    const source = "version: v1\ninstruction: hi\nmodel:\n  provider_config: fake\n  name: toolless\ntools:\n  ask_question: {}\n";
    expect(await issuesOf(p, source)).toEqual([
      { path: "/tools", message: expect.stringContaining("does not support tools"), line: 7, column: 3 },
    ]);
    expect((await create(p, source.replace("{}", "{enabled: false}"))).status).toBe(201);
  });

  it("keeps a config as compiled when the model changes later", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const first = await create(p, yamlConfig(p));
    const providers = await server.api.get(`/api/v1/orgs/${p.orgId}/model-provider-configs`, { token: p.token });
    const revised = await server.api.put(
      `/api/v1/orgs/${p.orgId}/model-provider-configs/${providers.body.data[0].id}/models/${p.configuredModelId}`,
      { context_window_tokens: 64000 },
      { token: p.token },
    );
    expect(revised.status, revised.text).toBe(200);
    const read = await server.api.get(`${p.base}/agent-configs/${first.body.id}`, { token: p.token });
    expect(read.body).toEqual(first.body);
    // The same source now compiles against the new revision: another definition, another config.
    const again = await create(p, yamlConfig(p));
    expect(again.status).toBe(201);
    expect(again.body.model.context_window_tokens).toBe(64000);
    expect(again.body.model.current_revision_id).toBe(revised.body.current_revision_id);
  });
});

describe("who may create and read configs", () => {
  it("needs agent.operate to create and agent.read to read; others see nothing", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const owner = { token: p.token };
    const config = await create(p, yamlConfig(p));
    const roleHolder = async (role: string) => {
      const member = await server.api.orgMember(owner, p.orgId, "member");
      const set = await server.api.put(`/api/v1/orgs/${p.orgId}/members/${member.userId}/projects/${p.projectId}`, { role }, owner);
      expect(set.status, set.text).toBe(200);
      return member.token;
    };
    const viewer = await roleHolder("viewer");
    const operator = await roleHolder("operator");
    expect((await create(p, yamlConfig(p), "yaml", viewer)).status).toBe(403);
    expect((await server.api.get(`${p.base}/agent-configs/${config.body.id}`, { token: viewer })).status).toBe(200);
    const byOperator = await create(p, yamlConfig(p, "", "Operated."), "yaml", operator);
    expect(byOperator.status, byOperator.text).toBe(201);

    const bareMember = (await server.api.orgMember(owner, p.orgId, "member")).token;
    const stranger = (await server.api.userWithOrg("Elsewhere")).token;
    for (const token of [bareMember, stranger]) {
      expect((await create(p, yamlConfig(p), "yaml", token)).status).toBe(404);
      expect((await server.api.get(`${p.base}/agent-configs/${config.body.id}`, { token })).status).toBe(404);
    }
    expect((await server.api.get(`${p.base}/agent-configs/${config.body.id}`)).status).toBe(401);
  });

  it("scopes configs to their project", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const config = await create(p, yamlConfig(p));
    const other = await server.api.post(`/api/v1/orgs/${p.orgId}/projects`, { name: "Other" }, { token: p.token });
    const elsewhere = `/api/v1/orgs/${p.orgId}/projects/${other.body.id}/agent-configs/${config.body.id}`;
    expect((await server.api.get(elsewhere, { token: p.token })).status).toBe(404);
    expect((await server.api.get(`${p.base}/agent-configs/acfg_${"a".repeat(26)}`, { token: p.token })).status).toBe(404);
    // The other project has no grant on the model, so the same source does not compile there.
    const there = await server.api.post(
      `/api/v1/orgs/${p.orgId}/projects/${other.body.id}/agent-configs`,
      { source: yamlConfig(p), source_format: "yaml" },
      { token: p.token },
    );
    expect(there.status).toBe(400);
    expect(there.body.issues[0].path).toBe("/model/name");
  });

  it("validates the request body itself", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    for (const body of [{ source: "", source_format: "yaml" }, { source: "x", source_format: "toml" }, { source: "x" }, { source: "x", source_format: "yaml", extra: 1 }]) {
      const reply = await server.api.post(`${p.base}/agent-configs`, body, { token: p.token });
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.code).toBe("validation_failed");
    }
  });
});

describe("listing agent configs", () => {
  it("pages the project's configs newest first (or oldest first), each as GET answers it, and only to readers of the project", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const before = await server.api.get(`${p.base}/agent-configs?limit=100`, { token: p.token });
    expect(before.status, before.text).toBe(200);
    const made: string[] = [...before.body.data.map((c: { id: string }) => c.id)].reverse();
    for (const instruction of ["First.", "Second.", "Third."]) {
      const config = await create(p, yamlConfig(p, "", instruction));
      expect(config.status, config.text).toBe(201);
      made.push(config.body.id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await server.api.get(`${p.base}/agent-configs?limit=2${cursor ? `&cursor=${cursor}` : ""}`, { token: p.token });
      expect(page.status, page.text).toBe(200);
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.data.map((c: { id: string }) => c.id));
      cursor = page.body.next_cursor as string | null;
    } while (cursor);
    expect(seen).toEqual([...made].reverse());
    const oldest = await server.api.get(`${p.base}/agent-configs?sort=created_at&limit=100`, { token: p.token });
    expect(oldest.body.data.map((c: { id: string }) => c.id)).toEqual(made);
    const one = await server.api.get(`${p.base}/agent-configs/${made.at(-1)}`, { token: p.token });
    expect(oldest.body.data.at(-1)).toEqual(one.body);

    expect((await server.api.get(`${p.base}/agent-configs?sort=name`, { token: p.token })).status).toBe(400);
    expect((await server.api.get(`${p.base}/agent-configs?limit=0`, { token: p.token })).status).toBe(400);
    const stranger = (await server.api.userWithOrg("Elsewhere")).token;
    expect((await server.api.get(`${p.base}/agent-configs`, { token: stranger })).status).toBe(404);
    expect((await server.api.get(`${p.base}/agent-configs`)).status).toBe(401);
  });
});
