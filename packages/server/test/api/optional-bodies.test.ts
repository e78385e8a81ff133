import { beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../support/server.js";
import { createTestAgent, text, type TestAgent } from "./timeline-fixtures.js";

/*
 * Issue 8, item 6: the reference's SDK calls cancel and promote_to_steering with no body at all, as the
 * reference's openapi.yaml allows (`requestBody.required: false`). An absent body means `{}` on every route
 * whose body has no required member; a body with a required member is still required.
 */
const server = useTestServer();
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

  it("the OpenAPI document marks exactly the optional bodies as not required", async () => {
    const doc = (await server.api.get("/api/v1/openapi.json")).body;
    const base = "/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}";
    expect(doc.paths[`${base}/cancel`].post.requestBody.required).toBe(false);
    expect(doc.paths[`${base}/inputs/{inputID}/promote_to_steering`].post.requestBody.required).toBe(false);
    expect(doc.paths[`${base}/inputs`].post.requestBody.required).toBe(true);
  });
});
