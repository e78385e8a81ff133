import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { agentMcpConnections } from "../../src/db/schema/index.js";
import { decodeId } from "../../src/platform/ids.js";
import { startFakeProvider, type FakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, eventually, events, finalOutputs, launch, modelCalls, providerRequests, requestText, send, untilEvents } from "../support/agent-loop.js";
import { getBytes } from "../api/artifacts-fixtures.js";
import { PIXEL_PNG, startFakeMcpServer, type FakeMcpServer } from "../support/fake-mcp.js";
import { useTestServer } from "../support/server.js";

const server = useTestServer({}, { worker: true });
let provider: FakeProvider;
let mcp: FakeMcpServer;
beforeAll(async () => {
  provider = await startFakeProvider();
  mcp = await startFakeMcpServer();
});
afterAll(async () => {
  await provider.close();
  await mcp.close();
});
beforeEach(() => {
  provider.reset();
  mcp.reset();
});

/** An `mcp:` section with one server `docs` at the fake server; `extra` is indented under it. */
const mcpYaml = (extra = "", key = "docs") => `mcp:\n  ${key}:\n    url: ${mcp.url}\n${extra}`;
const allowAll = "    permission: {mode: always_allow}\n";

/** Names of the tools offered in model call `index` (Chat Completions wire format). */
function offeredTools(index: number): string[] {
  const body = modelCalls(provider)[index]!.body as { tools?: Array<{ function: { name: string } }> };
  return (body.tools ?? []).map((t) => t.function.name);
}

const toolResults = (list: any[]) => list.filter((e) => e.event_kind === "tool_result");

async function toolCalls(project: AgentProject, agentId: string): Promise<any[]> {
  const reply = await server.api.get(`${project.base}/agents/${agentId}/tool-calls`, { token: project.token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.data;
}

async function interactions(project: AgentProject, agentId: string): Promise<any[]> {
  const reply = await server.api.get(`${project.base}/agents/${agentId}/interactions`, { token: project.token });
  return reply.body.data ?? [];
}

describe("MCP servers", () => {
  it("initializes the server before the first model call, offers its tools and runs a call in the same session", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    provider.script({ toolCalls: [{ name: "mcp__docs__greet", input: { name: "Ada" } }] }, { text: "I greeted Ada." });
    const configId = await createConfig(server.api, project, yamlConfig(project, mcpYaml(allowAll)));
    const agentId = await launch(server.api, project, configId, "greet Ada");
    const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);

    // read_file and search_files come with any MCP server, for results saved as artifacts.
    expect(offeredTools(0).sort()).toEqual(["mcp__docs__explode", "mcp__docs__greet", "mcp__docs__picture", "mcp__docs__wait", "read_file", "search_files"]);
    expect(requestText(provider, 0)).toContain("Greets a person by name.");
    const methods = mcp.requests.map((r) => r.method);
    expect(methods.slice(0, 3)).toEqual(["initialize", "notifications/initialized", "tools/list"]);
    expect(mcp.calls()).toEqual([expect.objectContaining({ tool: "greet", arguments: { name: "Ada" } })]);
    // The call resumed the session opened at the turn's start.
    const initialized = mcp.requests.find((r) => r.method === "tools/list")!.sessionId;
    expect(initialized).toBeDefined();
    expect(mcp.calls()[0]!.sessionId).toBe(initialized);

    const output = list.find((e) => e.event_kind === "model_output" && e.stop_reason === "tool_use");
    expect(output.content_blocks).toEqual([expect.objectContaining({ type: "tool_call", tool_type: "mcp", name: "mcp__docs__greet", input: { name: "Ada" } })]);
    expect(toolResults(list)).toEqual([expect.objectContaining({ outcome: "succeeded", content_blocks: [{ type: "text", text: "Hello, Ada!" }] })]);
    expect(requestText(provider, 1)).toContain("Hello, Ada!");
    expect(await toolCalls(project, agentId)).toEqual([expect.objectContaining({ name: "mcp__docs__greet", type: "mcp", state: "completed", outcome: "succeeded" })]);
  });

  it("applies the server's mode and per-tool overrides: allowed calls run, denied ones never reach the server, asked ones wait for Allow", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const permissions = "    tools:\n      greet: {permission: {mode: always_allow}}\n      explode: {permission: {mode: always_deny}}\n";
    provider.script(
      {
        toolCalls: [
          { name: "mcp__docs__greet", input: { name: "Bo" } },
          { name: "mcp__docs__explode", input: {} },
          { name: "mcp__docs__picture", input: {} },
        ],
      },
      { text: "all done" },
    );
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project, mcpYaml(permissions))), "go");
    const [permission] = await eventually(() => interactions(project, agentId), (list) => list.length === 1);
    expect(permission).toMatchObject({ interaction_kind: "permission", state: "open" });
    expect(permission.request.title).toBe("Permission requested for mcp__docs__picture");
    await eventually(() => toolCalls(project, agentId), (calls) => calls.filter((c) => c.state === "completed").length === 2);
    expect(mcp.calls().map((c) => c.tool)).toEqual(["greet"]);

    const allow = await server.api.post(`${project.base}/agents/${agentId}/interactions/${permission.id}/resolve`, { answers: [{ option_indices: [0] }] }, { token: project.token });
    expect(allow.status, allow.text).toBe(200);
    const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    expect(mcp.calls().map((c) => c.tool)).toEqual(["greet", "picture"]);
    const byName = new Map((await toolCalls(project, agentId)).map((c) => [c.name, c]));
    expect(byName.get("mcp__docs__greet")).toMatchObject({ outcome: "succeeded" });
    expect(byName.get("mcp__docs__explode")).toMatchObject({ outcome: "denied" });
    expect(byName.get("mcp__docs__picture")).toMatchObject({ outcome: "succeeded" });

    const picture = toolResults(list).find((e) => e.tool_call_id === byName.get("mcp__docs__picture").id);
    expect(picture.content_blocks).toEqual([
      { type: "text", text: "a pixel" },
      { type: "media_ref", artifact_id: expect.stringMatching(/^art_/) },
      { type: "structured_data", value: { width: 1, height: 1 } },
    ]);
    const content = await getBytes(server, `${project.base}/agents/${agentId}/artifacts/${picture.content_blocks[1].artifact_id}/content`, project.token);
    expect(content.status).toBe(200);
    expect(content.bytes).toEqual(Buffer.from(PIXEL_PNG, "base64"));
  });

  it("reports a tool error, an unknown tool and an unreachable server to the model", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    provider.script({ toolCalls: [{ name: "mcp__docs__explode", input: {} }, { name: "mcp__docs__nope", input: {} }] }, { text: "noted" });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project, mcpYaml(allowAll))), "try");
    const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    const [explode, nope] = toolResults(list).sort((a, b) => (a.sequence < b.sequence ? -1 : 1));
    const outcomes = Object.fromEntries((await toolCalls(project, agentId)).map((c) => [c.name, c.outcome]));
    expect(outcomes).toEqual({ "mcp__docs__explode": "failed", "mcp__docs__nope": "failed" });
    expect(JSON.stringify([explode, nope])).toContain("kaboom");
    expect(JSON.stringify([explode, nope])).toContain("Unsupported tool: mcp__docs__nope");

    mcp.setDown(true);
    provider.script({ text: "no tools today" });
    await send(server.api, project, agentId, "again");
    await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 2);
    // A new turn initializes again; the failed server offers nothing and the model is told why.
    expect(offeredTools(2)).toEqual(["read_file", "search_files"]);
    expect(requestText(provider, 2)).toContain('The MCP server \\"docs\\" could not be reached');
  });

  it("sends a project secret as the bearer token", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const secret = await server.api.post(
      `/api/v1/orgs/${project.orgId}/secrets`,
      { owner: { kind: "project", project_id: project.projectId }, name: "docs token", material: { kind: "generic", value: "tok-123" } },
      { token: project.token },
    );
    expect(secret.status, secret.text).toBe(201);
    mcp.requireToken("tok-123");
    provider.script({ toolCalls: [{ name: "mcp__docs__greet", input: { name: "Cy" } }] }, { text: "ok" });
    const auth = `    auth: {type: bearer, secret_id: ${secret.body.id}}\n${allowAll}`;
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project, mcpYaml(auth))), "hi");
    const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    expect(toolResults(list)[0].content_blocks).toEqual([{ type: "text", text: "Hello, Cy!" }]);
    expect(new Set(mcp.requests.map((r) => r.authorization))).toEqual(new Set(["Bearer tok-123"]));
  });

  it("opens a new session when the server has forgotten the turn's one", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    provider.script({ toolCalls: [{ name: "mcp__docs__wait", input: { ms: 10 } }], delayMs: 300 }, { text: "ok" });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project, mcpYaml(allowAll))), "wait");
    await providerRequests(provider, 1);
    mcp.forgetSessions();
    const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    expect(toolResults(list)[0]).toMatchObject({ outcome: "succeeded", content_blocks: [{ type: "text", text: "waited 10" }] });
    expect(mcp.calls().map((c) => c.tool)).toEqual(["wait", "wait"]);
    expect(mcp.calls()[1]!.sessionId).not.toBe(mcp.calls()[0]!.sessionId);
    expect(mcp.requests.filter((r) => r.method === "initialize")).toHaveLength(2);
  });

  it("follows config changes: an added server offers its tools at the next model call, a removed one stops", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    provider.script({ text: "plain" }, { text: "with tools" }, { text: "plain again" });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)), "one");
    await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    const change = (source: string) => server.api.post(`${project.base}/agents/${agentId}/config`, { source, source_format: "yaml" }, { token: project.token });
    expect((await change(yamlConfig(project, mcpYaml(allowAll, "extra")))).status).toBe(200);
    await send(server.api, project, agentId, "two");
    await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 2);
    expect((await change(yamlConfig(project))).status).toBe(200);
    await send(server.api, project, agentId, "three");
    await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 3);
    expect(offeredTools(0)).toEqual([]);
    expect(offeredTools(1)).toContain("mcp__extra__greet");
    expect(offeredTools(2)).toEqual([]);
    // The removed server's connection is gone, not left behind.
    const connections = await server.db.read.select().from(agentMcpConnections).where(eq(agentMcpConnections.agentId, decodeId("agent", agentId)!));
    expect(connections).toEqual([]);
  });

  it("offers no more tools than a provider takes in one request and tells the model what was left out", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    // 124 custom tools, read_file and search_files (added for the MCP server) leave room for 2 of its tools.
    const custom = Array.from({ length: 124 }, (_, i) => `  t${i}: {type: custom, description: tool ${i}, input_schema: {type: object}}`).join("\n");
    provider.script({ text: "fine" });
    const config = yamlConfig(project, `tools:\n${custom}\n${mcpYaml(allowAll)}`);
    const agentId = await launch(server.api, project, await createConfig(server.api, project, config), "hello");
    await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    const offered = offeredTools(0);
    expect(offered).toHaveLength(128);
    expect(offered.filter((name) => name.startsWith("mcp__docs__"))).toHaveLength(2);
    expect(requestText(provider, 0)).toContain('The MCP server \\"docs\\" offers 4 tools; only 2 fit the limit of 128 tools per model call.');
  });

  it("cancels a running MCP call: the call completes as canceled and the agent takes new work", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    provider.script({ toolCalls: [{ name: "mcp__docs__wait", input: { ms: 60_000 } }] });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project, mcpYaml(allowAll))), "wait long");
    await eventually(async () => mcp.calls().length, (n) => n === 1);
    const running = await toolCalls(project, agentId);
    expect(running).toEqual([expect.objectContaining({ state: "running" })]);
    const cancel = await server.api.post(`${project.base}/agents/${agentId}/cancel`, {}, { token: project.token });
    expect(cancel.body).toMatchObject({ affected: true, runtime_cancel_requested: true });
    expect(await toolCalls(project, agentId)).toEqual([expect.objectContaining({ state: "completed", outcome: "canceled" })]);
    provider.script({ text: "after cancel" });
    await send(server.api, project, agentId, "next");
    const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    expect(finalOutputs(list)[0].content_blocks[0].text).toBe("after cancel");
    expect(toolResults(await events(server.api, project, agentId))).toHaveLength(1);
  });
});
