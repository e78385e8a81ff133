import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, eventually } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { startTestServer, useTestServer } from "../support/server.js";

/*
 * svc as an MCP server (issue 31, item 4; docs/mcp.md), driven by the official MCP TypeScript SDK's
 * client over Streamable HTTP with the caller's bearer token, against a real svc with its worker and a
 * fake model provider.
 */

const server = useTestServer({}, { worker: true });
const provider = useFakeProvider();

const AGENT_ID = /^agt_[a-z2-7]{26}$/;
const SVC_TOOLS = ["svc_get_agent", "svc_list_agents", "svc_read_events", "svc_resolve_interaction", "svc_send_input"];
const LOOKUP_TOOL = `tools:\n  lookup:\n    type: custom\n    description: Looks a thing up\n    permission:\n      mode: always_ask\n    input_schema:\n      type: object\n      properties:\n        q: { type: string }\n      required: [q]\n`;

let p: AgentProject;
let endpoint: string;
const clients: Client[] = [];

beforeAll(async () => {
  p = await agentProject(server.api, provider.baseUrl);
  endpoint = `${p.base}/mcp`;
  const plain = await createConfig(server.api, p, yamlConfig(p));
  const asking = await createConfig(server.api, p, yamlConfig(p, LOOKUP_TOOL));
  for (const body of [
    { name: "Researcher", config: plain, mcp_tool: true, description: "Finds things out and says what it found." },
    { name: "Hidden helper", config: plain },
    { name: "Approver", config: asking, mcp_tool: true },
  ]) {
    const created = await server.api.post(`${p.base}/agent-profiles`, body, { token: p.token });
    expect(created.status, created.text).toBe(201);
  }
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

async function connect(token: string, path = endpoint): Promise<Client> {
  const client = new Client({ name: "svc-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(server.url + path), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  clients.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

const texts = (result: CallToolResult) => result.content.flatMap((block) => (block.type === "text" ? [block.text] : []));

/** A project member holding `role` on the project, and a personal token of theirs. */
async function memberWith(role: string): Promise<string> {
  const member = await server.api.orgMember({ token: p.token }, p.orgId, "member");
  const set = await server.api.put(`/api/v1/orgs/${p.orgId}/members/${member.userId}/projects/${p.projectId}`, { role }, { token: p.token });
  expect(set.status, set.text).toBe(200);
  return member.token;
}

describe("the MCP endpoint", () => {
  it("initializes at the current protocol version, statelessly, and lists only opted-in profiles beside the svc_ tools", async () => {
    const client = await connect(p.token);
    expect(client.getServerVersion()).toMatchObject({ name: "svc" });
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: false });

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["approver", "researcher", ...SVC_TOOLS].sort());
    const researcher = tools.find((t) => t.name === "researcher")!;
    expect(researcher.title).toBe("Researcher");
    expect(researcher.description).toContain("Finds things out and says what it found.");
    expect(Object.keys(researcher.inputSchema.properties ?? {}).sort()).toEqual(["message", "wait_seconds"]);
    expect(researcher.inputSchema.required).toEqual(["message"]);

    // The switch shows at the next tools/list: the server is built per request.
    const listed = await server.api.get(`${p.base}/agent-profiles?name=Hidden*`, { token: p.token });
    const hidden = listed.body.data[0];
    expect(hidden).toMatchObject({ name: "Hidden helper", mcp_tool: false, description: "" });
    const on = await server.api.patch(`${p.base}/agent-profiles/${hidden.id}`, { mcp_tool: true }, { token: p.token });
    expect(on.status, on.text).toBe(200);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("hidden_helper");
    const off = await server.api.patch(`${p.base}/agent-profiles/${hidden.id}`, { mcp_tool: false }, { token: p.token });
    expect(off.body.mcp_tool).toBe(false);
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain("hidden_helper");
  });

  it("answers a raw initialize without a session id, over SSE, at the protocol version the client asked for", async () => {
    const reply = await fetch(server.url + endpoint, {
      method: "POST",
      headers: { authorization: `Bearer ${p.token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "curl", version: "1" } },
      }),
    });
    expect(reply.status).toBe(200);
    expect(reply.headers.get("mcp-session-id")).toBeNull();
    expect(reply.headers.get("content-type")).toContain("text/event-stream");
    const data = (await reply.text()).split("\n").find((line) => line.startsWith("data: "))!;
    expect(JSON.parse(data.slice(6))).toMatchObject({ id: 1, result: { protocolVersion: LATEST_PROTOCOL_VERSION, serverInfo: { name: "svc" } } });
  });

  it("launches an agent from a profile tool and answers its final output, then follows up on it with the svc_ tools", async () => {
    const client = await connect(p.token);
    provider.script({ text: "The answer is 42." }, { text: "Still 42." });
    const first = await call(client, "researcher", { message: "What is the answer?" });
    expect(first.isError ?? false, JSON.stringify(first)).toBe(false);
    expect(texts(first)[0]).toBe("The answer is 42.");
    const facts = first.structuredContent as { agent_id: string; state: string; output: string };
    expect(facts).toMatchObject({ agent_id: expect.stringMatching(AGENT_ID), state: "idle", stop_reason: "end_turn", output: "The answer is 42." });

    const agent = await server.api.get(`${p.base}/agents/${facts.agent_id}`, { token: p.token });
    expect(agent.body.agent).toMatchObject({ name: "Researcher", agent_profile_id: expect.stringMatching(/^aprf_/) });

    const second = await call(client, "svc_send_input", { agent_id: facts.agent_id, message: "Are you sure?" });
    expect(texts(second)[0]).toBe("Still 42.");
    expect(second.structuredContent).toMatchObject({ agent_id: facts.agent_id, state: "idle" });

    const got = await call(client, "svc_get_agent", { agent_id: facts.agent_id });
    expect(got.structuredContent).toMatchObject({ agent: { id: facts.agent_id, name: "Researcher" }, status: "idle", interactions: [], backlog_count: 0 });

    const listed = await call(client, "svc_list_agents", {});
    expect((listed.structuredContent as { data: Array<{ id: string }> }).data.map((a) => a.id)).toContain(facts.agent_id);

    const events = await call(client, "svc_read_events", { agent_id: facts.agent_id, after: 1, limit: 2 });
    const page = events.structuredContent as { data: Array<{ sequence: number; event_kind: string }>; next_after_sequence: number; has_more: boolean };
    expect(page.data.map((e) => [e.sequence, e.event_kind])).toEqual([
      [2, "agent_input"],
      [3, "model_output"],
    ]);
    expect(page).toMatchObject({ next_after_sequence: 3, has_more: true });
    const rest = await call(client, "svc_read_events", { agent_id: facts.agent_id, after: 3 });
    expect((rest.structuredContent as typeof page).data.map((e) => e.event_kind)).toEqual(["agent_input", "model_output"]);
  });

  it("answers the agent's id and state when wait_seconds runs out", async () => {
    const client = await connect(p.token);
    provider.script({ text: "Slow answer.", delayMs: 8000 });
    const result = await call(client, "researcher", { message: "Take your time.", wait_seconds: 1 });
    expect(result.isError ?? false).toBe(false);
    const pending = result.structuredContent as { agent_id: string; state: string };
    expect(pending).toEqual({ agent_id: expect.stringMatching(AGENT_ID), state: "working" });
    expect(JSON.parse(texts(result)[0]!)).toEqual(pending);
    // The agent goes on without the client; its answer is in its events.
    await eventually(
      async () => (await call(client, "svc_read_events", { agent_id: pending.agent_id })).structuredContent as { data: Array<{ event_kind: string }> },
      (page) => page.data.some((e) => e.event_kind === "model_output"),
    );
  });

  it("stops at an approval with the open interaction, and svc_resolve_interaction answers it", async () => {
    const client = await connect(p.token);
    provider.script({ toolCalls: [{ name: "lookup", input: { q: "secret" } }] }, { text: "Done without looking it up." });
    const result = await call(client, "approver", { message: "Look up the secret." });
    const waiting = result.structuredContent as { agent_id: string; state: string; interactions: Array<{ id: string; interaction_kind: string; state: string }> };
    expect(waiting).toMatchObject({ agent_id: expect.stringMatching(AGENT_ID), state: "waiting" });
    expect(waiting.interactions).toHaveLength(1);
    expect(waiting.interactions[0]).toMatchObject({ interaction_kind: "permission", state: "open" });

    const denied = await call(client, "svc_resolve_interaction", {
      agent_id: waiting.agent_id,
      interaction_id: waiting.interactions[0]!.id,
      answers: [{ option_indices: [1], text: "not this one" }],
    });
    expect(denied.isError ?? false, JSON.stringify(denied)).toBe(false);
    expect(denied.structuredContent).toMatchObject({ id: waiting.interactions[0]!.id, state: "resolved", resolution: { answers: [{ option_indices: [1], text: "not this one" }] } });
    const again = await call(client, "svc_resolve_interaction", { agent_id: waiting.agent_id, interaction_id: waiting.interactions[0]!.id, answers: [{ option_indices: [0] }] });
    expect(again.isError).toBe(true);
    expect(texts(again)[0]).toContain("idempotency_key_conflict");

    const page = await eventually(
      async () => (await call(client, "svc_read_events", { agent_id: waiting.agent_id })).structuredContent as { data: Array<any> },
      (events) => events.data.some((e) => e.event_kind === "model_output" && e.stop_reason === "end_turn"),
    );
    expect(page.data.find((e) => e.event_kind === "tool_result")).toMatchObject({ outcome: "denied" });
    expect(page.data.at(-1).content_blocks).toEqual([{ type: "text", text: "Done without looking it up." }]);
  });

  it("lets a viewer's token list and read, and refuses it launching with a tool error that says so", async () => {
    provider.script({ text: "For the owner." });
    const owner = await connect(p.token);
    const launched = (await call(owner, "researcher", { message: "Hello" })).structuredContent as { agent_id: string };

    const viewer = await connect(await memberWith("viewer"));
    expect((await viewer.listTools()).tools.map((t) => t.name)).toContain("researcher");
    const refused = await call(viewer, "researcher", { message: "Let me in" });
    expect(refused.isError).toBe(true);
    expect(texts(refused)[0]).toMatch(/^forbidden: .*not launch/);
    const send = await call(viewer, "svc_send_input", { agent_id: launched.agent_id, message: "me too" });
    expect(send.isError).toBe(true);
    expect(texts(send)[0]).toMatch(/^forbidden/);
    expect((await call(viewer, "svc_get_agent", { agent_id: launched.agent_id })).structuredContent).toMatchObject({ agent: { id: launched.agent_id } });
    expect((await call(viewer, "svc_read_events", { agent_id: launched.agent_id })).isError ?? false).toBe(false);
    expect(provider.requests.filter((r) => r.method === "POST")).toHaveLength(1);
  });

  it("answers svc's refusals as tool errors: unknown ids, bad arguments", async () => {
    const client = await connect(p.token);
    const unknown = await call(client, "svc_get_agent", { agent_id: "agt_" + "a".repeat(26) });
    expect(unknown.isError).toBe(true);
    expect(texts(unknown)[0]).toMatch(/^not_found/);
    const malformed = await call(client, "svc_get_agent", { agent_id: "not an id" });
    expect(malformed.isError).toBe(true);
    const tooLong = await call(client, "researcher", { message: "hi", wait_seconds: 601 });
    expect(tooLong.isError).toBe(true);
    expect(texts(tooLong)[0]).toContain("wait_seconds");
    const cursor = await call(client, "svc_list_agents", { cursor: "garbage" });
    expect(cursor.isError).toBe(true);
  });

  it("refuses other organizations' tokens, org keys without the project, and callers without a bearer token", async () => {
    const initialize = (headers: Record<string, string>, path = endpoint) =>
      server.api.post(path, { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "t", version: "1" } } }, {
        headers: { accept: "application/json, text/event-stream", ...headers },
      });

    const none = await initialize({});
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe('Bearer realm="svc"');
    expect(none.body).toEqual({ error: expect.any(String), code: "unauthorized" });
    const bad = await initialize({ authorization: "Bearer svc_pat_v1_nottoken" });
    expect(bad.status).toBe(401);
    expect(bad.headers.get("www-authenticate")).toBe('Bearer realm="svc", error="invalid_token"');
    // A browser session is not a credential here: the endpoint takes bearer tokens only.
    const cookie = await initialize({ cookie: p.session.cookie, "x-svc-csrf": p.session.csrf, origin: server.config.publicUrl });
    expect(cookie.status).toBe(401);

    const stranger = await server.api.userWithOrg("Elsewhere");
    const foreign = await initialize({ authorization: `Bearer ${stranger.token}` });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe("not_found");
    await expect(connect(stranger.token)).rejects.toThrow();
    // The stranger's own project answers; the owner's token there is a 404 in turn.
    const theirs = `/api/v1/orgs/${stranger.org.id}/projects/${stranger.project.id}/mcp`;
    expect((await initialize({ authorization: `Bearer ${stranger.token}` }, theirs)).status).toBe(200);
    expect((await initialize({ authorization: `Bearer ${p.token}` }, theirs)).status).toBe(404);

    const memberKey = await server.api.orgKey(p.session, p.orgId, "member");
    expect((await initialize({ authorization: `Bearer ${memberKey.token}` })).status).toBe(404);
    const adminKey = await server.api.orgKey(p.session, p.orgId, "admin");
    const asKey = await connect(adminKey.token);
    expect((await asKey.listTools()).tools.map((t) => t.name)).toContain("researcher");

    const fromPage = await initialize({ authorization: `Bearer ${p.token}`, origin: "https://evil.example" });
    expect(fromPage.status).toBe(403);
    expect(fromPage.body.code).toBe("forbidden");
  });

  it("answers a turn whose model call failed for good as a tool error naming the agent", async () => {
    const client = await connect(p.token);
    provider.script({ error: { status: 400, message: "bad request body" } });
    const result = await call(client, "researcher", { message: "Fail, please." });
    expect(result.isError).toBe(true);
    expect(texts(result)[0]).toMatch(/^the agent's model call failed: .*bad request body.*\(svc agent agt_[a-z2-7]{26}, now idle\)$/s);
    expect(result.structuredContent).toMatchObject({ agent_id: expect.stringMatching(AGENT_ID), state: "idle" });
  });

  it("names profile tools from their names: lower case, one _ per run of other characters, twins told apart by id, svc_ reserved", async () => {
    const other = await agentProject(server.api, provider.baseUrl);
    const cfg = await createConfig(server.api, other, yamlConfig(other));
    const ids: Record<string, string> = {};
    for (const name of ["Customer support (EU)", "Twin", "twin", "svc get agent", "Ünïcode — déjà vu"]) {
      const created = await server.api.post(`${other.base}/agent-profiles`, { name, config: cfg, mcp_tool: true }, { token: other.token });
      expect(created.status, created.text).toBe(201);
      ids[name] = created.body.id;
    }
    const client = await connect(other.token, `${other.base}/mcp`);
    const names = (await client.listTools()).tools.map((t) => t.name).filter((n) => !SVC_TOOLS.includes(n));
    expect(names.sort()).toEqual(
      ["customer_support_eu", `twin_${ids["Twin"]!.slice(-8)}`, `twin_${ids["twin"]!.slice(-8)}`, "agent_svc_get_agent", "unicode_deja_vu"].sort(),
    );
    for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });

  it("answers GET and DELETE with 405: the server is stateless", async () => {
    for (const method of ["GET", "DELETE"]) {
      const reply = await server.api.request(method, endpoint, { token: p.token, headers: { accept: "text/event-stream" } });
      expect(reply.status, method).toBe(405);
      expect(reply.headers.get("allow")).toBe("POST");
      expect(reply.body).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 } });
    }
  });
});

describe("shutdown", () => {
  it("ends a wait under way at once, answering the agent's id and state, so the server can close", async () => {
    // No worker: the agent's message stays queued, so only the shutdown can end the wait before 600 s.
    const own = await startTestServer();
    let closed = false;
    try {
      const q = await agentProject(own.api, provider.baseUrl);
      const cfg = await createConfig(own.api, q, yamlConfig(q));
      const made = await own.api.post(`${q.base}/agent-profiles`, { name: "Sleeper", config: cfg, mcp_tool: true }, { token: q.token });
      expect(made.status, made.text).toBe(201);
      const client = new Client({ name: "svc-test", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${own.url}${q.base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${q.token}` } } }));
      const pending = client.callTool({ name: "sleeper", arguments: { message: "Never mind.", wait_seconds: 600 } }, undefined, { timeout: 600_000 });
      await eventually(async () => (await own.api.get(`${q.base}/agents`, { token: q.token })).body.data.length, (n) => n === 1);
      const closing = own.close().then(() => (closed = true));
      const result = (await pending) as CallToolResult;
      expect(result.isError ?? false).toBe(false);
      expect(result.structuredContent).toEqual({ agent_id: expect.stringMatching(AGENT_ID), state: "working" });
      await closing;
      await client.close();
    } finally {
      if (!closed) await own.close();
    }
  });
});
