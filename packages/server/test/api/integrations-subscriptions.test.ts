import { describe, expect, it } from "vitest";
import { yamlConfig } from "../support/agents.js";
import { collectPages } from "../support/paging.js";
import { useTestServer } from "../support/server.js";
import { createIntegration, integrationProject, ISO } from "./integrations-fixtures.js";

const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true" });

async function subscribable() {
  const p = await integrationProject(server.api);
  const integration = await createIntegration(server.api, p, "eng");
  const config = await server.api.post(`${p.base}/agent-configs`, { source: yamlConfig(p), source_format: "yaml" }, { token: p.token });
  expect([200, 201]).toContain(config.status);
  const launch = async (name: string): Promise<string> => {
    const reply = await server.api.post(`${p.base}/agents`, { config: config.body.id, name }, { token: p.token });
    expect(reply.status, reply.text).toBe(201);
    return reply.body.agent.id as string;
  };
  return { p, integration, launch, subscriptions: `${p.integrations}/${integration.id}/subscriptions` };
}

const thread = { channel_id: "C0123ABC", thread_ts: "1700000000.000100" };

describe("integrations: subscriptions", () => {
  it("attaches an agent to a conversation, idempotently for an active attachment, and lists it", async () => {
    const { p, launch, subscriptions, integration } = await subscribable();
    const agentId = await launch("watcher");
    const created = await server.api.post(subscriptions, { agent_id: agentId, conversation: thread }, { token: p.token });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^isub_[a-z2-7]{26}$/),
      integration_id: integration.id,
      project_id: p.projectId,
      agent_id: agentId,
      agent_name: "watcher",
      conversation: thread,
      created_at: expect.stringMatching(ISO),
    });
    const again = await server.api.post(subscriptions, { agent_id: agentId, conversation: { thread_ts: thread.thread_ts, channel_id: thread.channel_id } }, { token: p.token });
    expect(again.status, again.text).toBe(200);
    expect(again.body).toEqual(created.body);
    const listed = await collectPages(server.api, subscriptions, { token: p.token });
    expect(listed).toEqual([created.body]);
  });

  it("validates the conversation against the kind's conversation_schema and the agent against the project", async () => {
    const { p, launch, subscriptions } = await subscribable();
    const agentId = await launch("a");
    const auth = { token: p.token };
    const noThread = await server.api.post(subscriptions, { agent_id: agentId, conversation: { channel_id: "C0123ABC" } }, auth);
    expect(noThread.status).toBe(400);
    expect(noThread.body.issues).toEqual([{ path: "/conversation/thread_ts", message: "is required" }]);
    const badTs = await server.api.post(subscriptions, { agent_id: agentId, conversation: { ...thread, thread_ts: "yesterday" } }, auth);
    expect(badTs.body.issues[0].path).toBe("/conversation/thread_ts");
    const extra = await server.api.post(subscriptions, { agent_id: agentId, conversation: { ...thread, team: "T1" } }, auth);
    expect(extra.body.issues).toEqual([{ path: "/conversation/team", message: "unknown field" }]);
    const missing = await server.api.post(subscriptions, { agent_id: `agt_${"a".repeat(26)}`, conversation: thread }, auth);
    expect(missing.status).toBe(404);
    expect(await collectPages(server.api, subscriptions, auth)).toEqual([]);
  });

  it("allows at most 16 agents per conversation (409 for the 17th); other conversations are separate", async () => {
    const { p, launch, subscriptions } = await subscribable();
    const auth = { token: p.token };
    const agents: string[] = [];
    for (let n = 0; n < 17; n++) agents.push(await launch(`agent ${n}`));
    for (const agentId of agents.slice(0, 16)) {
      const reply = await server.api.post(subscriptions, { agent_id: agentId, conversation: thread }, auth);
      expect(reply.status, reply.text).toBe(201);
    }
    const seventeenth = await server.api.post(subscriptions, { agent_id: agents[16], conversation: thread }, auth);
    expect(seventeenth.status, seventeenth.text).toBe(409);
    expect(seventeenth.body.code).toBe("conflict");
    // Repeating one of the sixteen is still the same attachment, not a new one.
    expect((await server.api.post(subscriptions, { agent_id: agents[0], conversation: thread }, auth)).status).toBe(200);
    const elsewhere = await server.api.post(subscriptions, { agent_id: agents[16], conversation: { ...thread, thread_ts: "1700000000.000200" } }, auth);
    expect(elsewhere.status).toBe(201);
    const listed = await collectPages(server.api, `${subscriptions}?limit=5`, auth, (reply) => expect(reply.body.data.length).toBeLessThanOrEqual(5));
    expect(listed).toHaveLength(17);
    expect(listed.map((s) => s.agent_id)).toEqual([...agents.slice(0, 16), agents[16]]);
  });

  it("takes a GitHub pull request subscription's events filter from the kind's list; unknown names and other kinds' filters are a 400 at the field", async () => {
    const { p, launch } = await subscribable();
    const auth = { token: p.token };
    const github = await server.api.post(p.integrations, { name: "reviews", integration_kind: "github_pr" }, auth);
    expect(github.status, github.text).toBe(201);
    const prSubscriptions = `${p.integrations}/${github.body.id}/subscriptions`;
    const pull = { repository_id: 123456, pull_request: 42 };
    const agentId = await launch("reviewer");

    const unknown = await server.api.post(prSubscriptions, { agent_id: agentId, conversation: pull, events: ["commit", "push", "review"] }, auth);
    expect(unknown.status, unknown.text).toBe(400);
    expect(unknown.body).toMatchObject({ code: "validation_failed" });
    expect(unknown.body.issues).toEqual([
      { path: "/events/1", message: "is not an event of github_pr; one of discussion_comment, review_comment, commit" },
      { path: "/events/2", message: "is not an event of github_pr; one of discussion_comment, review_comment, commit" },
    ]);
    const empty = await server.api.post(prSubscriptions, { agent_id: agentId, conversation: pull, events: [] }, auth);
    expect(empty.status).toBe(400);
    expect(empty.body.issues[0].path).toBe("/events");
    const repeated = await server.api.post(prSubscriptions, { agent_id: agentId, conversation: pull, events: ["commit", "commit"] }, auth);
    expect(repeated.status).toBe(400);
    expect(repeated.body.issues[0].path).toBe("/events");
    expect(await collectPages(server.api, prSubscriptions, auth)).toEqual([]);

    // Kept in the kind's order; repeating the attachment replaces the selection, and omitting it selects every event.
    const created = await server.api.post(prSubscriptions, { agent_id: agentId, conversation: pull, events: ["commit", "discussion_comment"] }, auth);
    expect(created.status, created.text).toBe(201);
    expect(created.body.events).toEqual(["discussion_comment", "commit"]);
    const narrowed = await server.api.post(prSubscriptions, { agent_id: agentId, conversation: pull, events: ["review_comment"] }, auth);
    expect(narrowed.status).toBe(200);
    expect(narrowed.body).toEqual({ ...created.body, events: ["review_comment"] });
    expect(await collectPages(server.api, prSubscriptions, auth)).toEqual([narrowed.body]);
    const everything = await server.api.post(prSubscriptions, { agent_id: agentId, conversation: pull }, auth);
    expect(everything.status).toBe(200);
    expect(everything.body).not.toHaveProperty("events");
  });

  it("refuses an events filter on a kind whose conversations have none (Slack)", async () => {
    const { p, launch, subscriptions } = await subscribable();
    const agentId = await launch("watcher");
    const reply = await server.api.post(subscriptions, { agent_id: agentId, conversation: thread, events: ["message"] }, { token: p.token });
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body.issues).toEqual([{ path: "/events", message: "slack_thread subscriptions forward every event and take no events filter" }]);
    expect(await collectPages(server.api, subscriptions, { token: p.token })).toEqual([]);
  });

  it("deletes one; a fresh attachment gets a new id, so an old DELETE cannot remove it", async () => {
    const { p, launch, subscriptions } = await subscribable();
    const auth = { token: p.token };
    const agentId = await launch("a");
    const first = await server.api.post(subscriptions, { agent_id: agentId, conversation: thread }, auth);
    expect((await server.api.delete(`${subscriptions}/${first.body.id}`, auth)).status).toBe(204);
    const second = await server.api.post(subscriptions, { agent_id: agentId, conversation: thread }, auth);
    expect(second.status).toBe(201);
    expect(second.body.id).not.toBe(first.body.id);
    expect((await server.api.delete(`${subscriptions}/${first.body.id}`, auth)).status).toBe(404);
    expect(await collectPages(server.api, subscriptions, auth)).toEqual([second.body]);
  });

  it("keeps subscriptions over a disconnect, ends them when the agent is archived or the integration deleted", async () => {
    const { p, launch, subscriptions, integration } = await subscribable();
    const auth = { token: p.token };
    const [kept, archived] = [await launch("kept"), await launch("archived")];
    for (const agentId of [kept, archived]) expect((await server.api.post(subscriptions, { agent_id: agentId, conversation: thread }, auth)).status).toBe(201);
    expect((await server.api.post(`${p.integrations}/${integration.id}/disconnect`, undefined, auth)).status).toBe(200);
    expect(await collectPages(server.api, subscriptions, auth)).toHaveLength(2);
    const archive = await server.api.post(`${p.base}/agents/${archived}/archive`, undefined, auth);
    expect(archive.status, archive.text).toBe(200);
    expect((await collectPages(server.api, subscriptions, auth)).map((s) => s.agent_id)).toEqual([kept]);
    const refused = await server.api.post(subscriptions, { agent_id: archived, conversation: thread }, auth);
    expect(refused.status).toBe(409);
    expect((await server.api.delete(`${p.integrations}/${integration.id}`, auth)).status).toBe(204);
    expect((await server.api.get(subscriptions, auth)).status).toBe(404);
    // The agent and its history stay.
    expect((await server.api.get(`${p.base}/agents/${kept}`, auth)).status).toBe(200);
  });

  it("lets a viewer list but not attach or remove", async () => {
    const { p, launch, subscriptions } = await subscribable();
    const agentId = await launch("a");
    const made = await server.api.post(subscriptions, { agent_id: agentId, conversation: thread }, { token: p.token });
    const viewer = await server.api.orgMember({ token: p.token }, p.orgId);
    await server.api.put(`/api/v1/orgs/${p.orgId}/members/${viewer.userId}/projects/${p.projectId}`, { role: "viewer" }, { token: p.token });
    expect((await server.api.get(subscriptions, { token: viewer.token })).status).toBe(200);
    expect((await server.api.post(subscriptions, { agent_id: agentId, conversation: thread }, { token: viewer.token })).status).toBe(403);
    expect((await server.api.delete(`${subscriptions}/${made.body.id}`, { token: viewer.token })).status).toBe(403);
  });

  it("attaches subscriptions given in the agent launch request, in its transaction", async () => {
    const { p, subscriptions, integration } = await subscribable();
    const config = await server.api.post(`${p.base}/agent-configs`, { source: yamlConfig(p), source_format: "yaml" }, { token: p.token });
    const launched = await server.api.post(
      `${p.base}/agents`,
      { config: config.body.id, name: "launched", subscriptions: [{ integration_id: integration.id, conversation: thread }] },
      { token: p.token },
    );
    expect(launched.status, launched.text).toBe(201);
    const listed = await collectPages(server.api, subscriptions, { token: p.token });
    expect(listed.map((s) => [s.agent_id, s.conversation])).toEqual([[launched.body.agent.id, thread]]);
    // A bad attachment refuses the whole launch: no agent is made.
    const before = (await server.api.get(`${p.base}/agents`, { token: p.token })).body.data.length;
    const refused = await server.api.post(
      `${p.base}/agents`,
      { config: config.body.id, subscriptions: [{ integration_id: integration.id, conversation: { channel_id: "C0123ABC" } }] },
      { token: p.token },
    );
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.issues).toEqual([{ path: "/subscriptions/0/conversation/thread_ts", message: "is required" }]);
    const unknown = await server.api.post(
      `${p.base}/agents`,
      { config: config.body.id, subscriptions: [{ integration_id: `itg_${"a".repeat(26)}`, conversation: thread }] },
      { token: p.token },
    );
    expect(unknown.status, unknown.text).toBe(400);
    expect(unknown.body.issues[0].path).toBe("/subscriptions/0/integration_id");
    expect((await server.api.get(`${p.base}/agents`, { token: p.token })).body.data.length).toBe(before);
  });
});
