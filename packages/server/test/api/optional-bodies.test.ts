import { beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../support/server.js";
import { createTestAgent, text, type TestAgent } from "./timeline-fixtures.js";

/*
 * Issue 8, item 6: the reference's SDK calls cancel and promote_to_steering with no body at all, as the
 * reference's openapi.yaml allows (`requestBody.required: false`); there an absent body means `{}`. Issue 21:
 * every other body is required, even one whose members are all optional (the updates of a model provider
 * config, a configured model and a machine pool answered an empty PUT with 200); `{}` changes nothing.
 */
// A machine pool is among the updates; pools need the local provider enabled.
const server = useTestServer({ SVC_MACHINE_PROVIDERS: "local" });
let owner: { token: string; org: { id: string }; project: { id: string } };

beforeAll(async () => {
  owner = await server.api.userWithOrg("Optional bodies");
});

/** The three ways a client sends "nothing": no body at all, an empty JSON body, and `{}`. */
const variants = {
  absent: { headers: {} },
  emptyJson: { raw: "" },
  emptyObject: { body: {} },
} as const;

async function queuedInput(agent: TestAgent): Promise<string> {
  const reply = await server.api.post(`${agent.path}/inputs`, { content_blocks: [text("later")], delivery_mode: "queued" }, { token: owner.token });
  expect(reply.status, reply.text).toBe(201);
  return reply.body.agent_input.id as string;
}

describe("optional request bodies", () => {
  it("cancel answers the same with no body, an empty JSON body and {}", async () => {
    const replies = [];
    for (const options of Object.values(variants)) {
      const agent = await createTestAgent(server, owner.org, owner.project);
      const reply = await server.api.request("POST", `${agent.path}/cancel`, { ...options, token: owner.token });
      replies.push({ status: reply.status, body: reply.body });
    }
    expect(replies[0]!.status).toBe(200);
    expect(replies[1]).toEqual(replies[0]);
    expect(replies[2]).toEqual(replies[0]);
  });

  it("promote_to_steering answers the same with no body, an empty JSON body and {}", async () => {
    const agent = await createTestAgent(server, owner.org, owner.project);
    for (const [name, options] of Object.entries(variants)) {
      const inputId = await queuedInput(agent);
      const reply = await server.api.request("POST", `${agent.path}/inputs/${inputId}/promote_to_steering`, { ...options, token: owner.token });
      expect({ name, status: reply.status, body: reply.body }).toEqual({ name, status: 200, body: { ok: true } });
    }
  });

  it("a body with a required member is still required", async () => {
    const agent = await createTestAgent(server, owner.org, owner.project);
    for (const options of [variants.absent, variants.emptyJson]) {
      const reply = await server.api.request("POST", `${agent.path}/inputs`, { ...options, token: owner.token });
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({ error: expect.any(String), code: "validation_failed", issues: [expect.objectContaining({ path: "" })] });
    }
    const missing = await server.api.request("POST", `${agent.path}/inputs`, { body: {}, token: owner.token });
    expect(missing.body.issues).toEqual([{ path: "/content_blocks", message: "is required" }]);
  });

  it("a body that is not empty is still parsed and validated strictly", async () => {
    const agent = await createTestAgent(server, owner.org, owner.project);
    const malformed = await server.api.request("POST", `${agent.path}/cancel`, { raw: "{", token: owner.token });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe("invalid_request");
    const notObject = await server.api.request("POST", `${agent.path}/cancel`, { raw: "null", token: owner.token });
    expect(notObject.body.code).toBe("validation_failed");
  });

  it("an update with no body is refused and changes nothing; {} changes nothing either, behind a byte order mark too", async () => {
    const auth = { token: owner.token };
    const org = `/api/v1/orgs/${owner.org.id}`;
    const secret = await server.api.post(`${org}/secrets`, { owner: { kind: "org" }, name: "key", material: { kind: "generic", value: "sk-1" } }, auth);
    const provider = await server.api.post(`${org}/model-provider-configs`, { name: "p", api_format: "openai-chat-completions", base_url: "https://example.com/v1", credential_secret_id: secret.body.id }, auth);
    const providerPath = `${org}/model-provider-configs/${provider.body.config.id}`;
    const model = await server.api.post(`${providerPath}/models`, { name: "m", provider_model_slug: "s", context_window_tokens: 1000, max_output_tokens: 100 }, auth);
    const pool = await server.api.post(`${org}/machine-pools`, { name: "pool", provider: "local", max_total_machines: 1 }, auth);
    // A configured model has no GET of its own; its provider config's list shows it.
    const updates = [
      { path: providerPath, read: providerPath },
      { path: `${providerPath}/models/${model.body.id}`, read: `${providerPath}/models` },
      { path: `${org}/machine-pools/${pool.body.id}`, read: `${org}/machine-pools/${pool.body.id}` },
    ];
    for (const { path, read } of updates) {
      const before = await server.api.get(read, auth);
      expect(before.status, `${read} ${before.text}`).toBe(200);
      for (const nothing of [variants.absent, variants.emptyJson, { raw: "\uFEFF" }, { raw: " \n" }]) {
        const reply = await server.api.request("PUT", path, { ...nothing, token: owner.token });
        expect({ path, status: reply.status, code: reply.body.code }).toEqual({ path, status: 400, code: "validation_failed" });
      }
      for (const empty of [variants.emptyObject, { raw: "\uFEFF{}" }]) {
        const reply = await server.api.request("PUT", path, { ...empty, token: owner.token });
        expect({ path, status: reply.status }).toEqual({ path, status: 200 });
      }
      expect((await server.api.get(read, auth)).body).toEqual(before.body);
    }
  });

  it("a body whose members are all optional is still required when the route does not declare it optional", async () => {
    const reply = await server.api.request("POST", `/api/v1/orgs/${owner.org.id}/projects/${owner.project.id}/agents`, { token: owner.token });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ error: expect.any(String), code: "validation_failed", issues: [expect.objectContaining({ path: "" })] });
  });

  it("the OpenAPI document marks exactly the optional bodies as not required", async () => {
    const doc = (await server.api.get("/api/v1/openapi.json")).body;
    const optional = Object.entries(doc.paths as Record<string, Record<string, { requestBody?: { required: boolean } }>>).flatMap(([path, operations]) =>
      Object.entries(operations).flatMap(([method, operation]) => (operation.requestBody?.required === false ? [`${method} ${path}`] : [])),
    );
    const base = "/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}";
    expect(optional.sort()).toEqual([`post ${base}/cancel`, `post ${base}/inputs/{inputID}/promote_to_steering`, "post /api/v1/orgs/{orgID}/machines/{machineID}/daemon-tokens"].sort());
  });
});
