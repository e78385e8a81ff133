import { describe, expect, it } from "vitest";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, eventually, events, finalOutputs, launch, modelCalls, send, untilEvents } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";

/*
 * Coordinator agents and delegates (docs/delegation.md), through HTTP with the worker running. The fake
 * provider's unscripted answers drive most of it: "call tool <name> <json>" makes that call, a tool result
 * is answered "tool <name> said: <result>", anything else "echo: <text>".
 */

const server = useTestServer({}, { worker: true });
const provider = useFakeProvider();

const USAGE = { inputTokens: 1000, outputTokens: 200, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
const CALL_TOKENS = 1200;
const call = (name: string, input: Record<string, unknown>) => `call tool ${name} ${JSON.stringify(input)}`;

async function profile(project: AgentProject, name: string, rest = "", instruction?: string): Promise<string> {
  const config = await createConfig(server.api, project, yamlConfig(project, rest, instruction));
  const reply = await server.api.post(`${project.base}/agent-profiles`, { name, config }, { token: project.token });
  expect(reply.status, reply.text).toBe(201);
  return reply.body.id as string;
}

const delegatesYaml = (entries: Record<string, string>) =>
  `delegates:\n${Object.entries(entries)
    .map(([handle, profileName]) => `  ${handle}:\n    profile: ${profileName}\n    description: "Use for ${handle} work."`)
    .join("\n")}\n`;

async function coordinator(project: AgentProject, entries: Record<string, string>, message?: string): Promise<string> {
  return launch(server.api, project, await createConfig(server.api, project, yamlConfig(project, delegatesYaml(entries))), message);
}

async function children(project: AgentProject, parentId: string): Promise<any[]> {
  const reply = await server.api.get(`${project.base}/agents?parent_agent_id=${parentId}&sort=created_at&limit=100`, { token: project.token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.data;
}

const toolResults = (list: any[]) => list.filter((e) => e.event_kind === "tool_result");
const textOf = (event: any) => (event.content_blocks ?? []).map((b: any) => b.text ?? JSON.stringify(b.value ?? b)).join("\n");

describe("the delegates section of a config", () => {
  it("pins profiles by name, offers the coordinator tools with the roster, and names mistakes with line and column", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    await profile(project, "researcher");
    const refused = await server.api.post(
      `${project.base}/agent-configs`,
      { source: yamlConfig(project, `delegates:\n  Bad-Handle:\n    profile: researcher\n    description: x\n  ghost:\n    profile: nobody\n    description: y\n`), source_format: "yaml" },
      { token: project.token },
    );
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.issues).toEqual([
      { path: "/delegates/Bad-Handle", message: expect.stringContaining("a handle is a lowercase letter"), line: 7, column: 3 },
      { path: "/delegates/ghost/profile", message: 'no agent profile named "nobody" in this project', line: 11, column: 14 },
    ]);
    const configId = await createConfig(server.api, project, yamlConfig(project, delegatesYaml({ research: "researcher" })));
    const config = await server.api.get(`${project.base}/agent-configs/${configId}`, { token: project.token });
    expect(config.status).toBe(200);
    const agentId = await launch(server.api, project, configId, "hello");
    await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    const tools = JSON.stringify(modelCalls(provider)[0]!.body);
    for (const name of ["delegate", "message_delegate", "await_delegates"]) expect(tools).toContain(`"${name}"`);
    expect(tools).toContain("research: Use for research work.");
  });
});

describe("a coordinator", () => {
  it("delegates with wait, follows up with message_delegate (the child keeps its conversation), and lists its children", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    await profile(project, "helper");
    const agentId = await coordinator(project, { helper: "helper" }, call("delegate", { to: "helper", message: "first task" }));
    let list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    expect(textOf(toolResults(list)[0])).toBe("echo: first task");
    expect(finalOutputs(list)[0].content_blocks[0].text).toBe("tool delegate said: echo: first task");

    const [child] = await children(project, agentId);
    expect(child).toMatchObject({ parent_agent_id: agentId, root_agent_id: agentId, name: "helper", state: "active" });
    const top = await server.api.get(`${project.base}/agents/${agentId}`, { token: project.token });
    expect(top.body.agent).toMatchObject({ parent_agent_id: null, root_agent_id: null });

    await send(server.api, project, agentId, call("message_delegate", { agent_id: child.id, message: "second task" }));
    list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 2);
    expect(textOf(toolResults(list)[1])).toBe("echo: second task");
    // The child's second model call still has its first exchange.
    const second = modelCalls(provider).map((r) => JSON.stringify(r.body)).find((body) => body.includes("second task") && !body.includes("message_delegate"));
    expect(second).toContain("first task");
    expect(await children(project, agentId)).toHaveLength(1);
  });

  it("starts two children in parallel and combines their answers with await_delegates", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    await profile(project, "writer");
    await profile(project, "checker");
    provider.script({
      toolCalls: [
        { name: "delegate", input: { to: "writer", message: "write a line", wait: false } },
        { name: "delegate", input: { to: "checker", message: "check a line", wait: false } },
      ],
    });
    const agentId = await coordinator(project, { writer: "writer", checker: "checker" }, "start both");
    let list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    const started = toolResults(list).map((r) => r.content_blocks[0].value.agent_id as string);
    expect(started).toHaveLength(2);
    expect(new Set((await children(project, agentId)).map((c) => c.id))).toEqual(new Set(started));

    await send(server.api, project, agentId, call("await_delegates", { agent_ids: started, timeout_seconds: 300 }));
    list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 2);
    const combined = toolResults(list)[2].content_blocks[0].value;
    expect(combined.timed_out).toBe(false);
    // One result per child, in the order asked (the two delegate results may be recorded in either order,
    // so which child is the writer is not known here: the outputs are compared as a set).
    expect(combined.results.map((r: { agent_id: string; state: string }) => [r.agent_id, r.state])).toEqual(started.map((id) => [id, "completed"]));
    expect(combined.results.map((r: { output: string }) => r.output).sort()).toEqual(["echo: check a line", "echo: write a line"]);
    expect(finalOutputs(list)[1].content_blocks[0].text).toContain("echo: write a line");
  });

  it("answers a child's failed turn as a failed call, never a hang", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    await profile(project, "fragile");
    // The coordinator's call, then the child's, which the provider refuses for good.
    provider.script({ toolCalls: [{ name: "delegate", input: { to: "fragile", message: "try" } }] }, { error: { status: 400, message: "the request is malformed" } });
    const agentId = await coordinator(project, { fragile: "fragile" }, "go");
    const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    const [result] = toolResults(list);
    expect(result.outcome).toBe("failed");
    expect(textOf(result)).toMatch(/did not answer: failed/);
  });

  it("refuses an unknown handle, another agent's id, a fourth level below the top, and a 33rd child, as tool errors", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const loopId = await profile(project, "loop");
    // The profile delegates to itself: each level hands the rest of the chain down.
    const again = await createConfig(server.api, project, yamlConfig(project, delegatesYaml({ me: "loop" })));
    const current = (await server.api.get(`${project.base}/agent-profiles/${loopId}`, { token: project.token })).body.current_config_id as string;
    const updated = await server.api.post(`${project.base}/agent-profiles/${loopId}/config`, { config: again, expected_current_config_id: current }, { token: project.token });
    expect(updated.status, updated.text).toBe(200);
    let message = call("delegate", { to: "me", message: "too deep" });
    for (let level = 0; level < 4; level++) message = call("delegate", { to: "me", message });
    const rootReply = await server.api.post(`${project.base}/agents`, { profile: loopId, message }, { token: project.token });
    expect(rootReply.status, rootReply.text).toBe(201);
    const rootId = rootReply.body.agent.id as string;
    const list = await untilEvents(server.api, project, rootId, (e) => finalOutputs(e).length === 1);
    expect(finalOutputs(list)[0].content_blocks[0].text).toContain("Delegation refused: a delegate may be at most 4 levels below");
    // Levels 1 to 4 exist, each the child of the one before, all under the same root.
    let parent = rootId;
    for (let level = 1; level <= 4; level++) {
      const kids = await children(project, parent);
      expect(kids, `level ${level}`).toHaveLength(1);
      expect(kids[0].root_agent_id).toBe(rootId);
      parent = kids[0].id;
    }
    expect(await children(project, parent)).toHaveLength(0);

    await profile(project, "many");
    const fan = Array.from({ length: 33 }, (_, i) => ({ name: "delegate", input: { to: "many", message: `task ${i}`, wait: false } }));
    provider.script({ toolCalls: [...fan, { name: "delegate", input: { to: "nobody", message: "x" } }, { name: "message_delegate", input: { agent_id: rootId, message: "x" } }] });
    const fanId = await coordinator(project, { many: "many" }, "fan out");
    const fanned = await untilEvents(server.api, project, fanId, (e) => toolResults(e).length === 35);
    const outcomes = toolResults(fanned).map((r) => r.outcome);
    expect(outcomes.filter((o) => o === "succeeded")).toHaveLength(32);
    const failures = toolResults(fanned).filter((r) => r.outcome === "failed").map(textOf);
    expect(failures).toEqual(
      expect.arrayContaining([
        expect.stringContaining("at most 32 delegates"),
        // The roster is the `to` enum, so an unknown handle never reaches the tool.
        "Malformed input for delegate: /to must be equal to one of the allowed values",
        `${rootId} is not one of your delegates; delegate answered their ids.`,
      ]),
    );
    expect(await eventually(async () => (await children(project, fanId)).length, (n) => n === 32)).toBe(32);
  });

  it("reports a child waiting for a person as waiting, naming the interaction, in await_delegates, which answers when its timeout runs out", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    await profile(project, "asker", "tools:\n  ask_question:\n    permission: {mode: always_allow}\n");
    const question = call("ask_question", { questions: [{ prompt: "Which colour?", options: [{ label: "red" }, { label: "blue" }] }] });
    const agentId = await coordinator(project, { asker: "asker" }, call("delegate", { to: "asker", message: question, wait: false }));
    let list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    const childId = toolResults(list)[0].content_blocks[0].value.agent_id as string;
    const open = await eventually(
      async () => (await server.api.get(`${project.base}/agents/${childId}/interactions`, { token: project.token })).body.data as any[],
      (items) => items.some((i) => i.state === "open"),
    );
    await send(server.api, project, agentId, call("await_delegates", { agent_ids: [childId], timeout_seconds: 1 }));
    list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 2);
    expect(toolResults(list)[1].content_blocks[0].value).toEqual({
      timed_out: true,
      results: [{ agent_id: childId, state: "waiting", open_interactions: [{ interaction_id: open[0].id, kind: "question", tool_name: "ask_question" }] }],
    });
  });

  it("hears at once of a child paused by a budget: a waiting delegate fails saying so, and await_delegates answers paused", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const workerId = await profile(project, "worker");
    // One child answers and spends the profile's whole budget; the next child of that profile is held at its first call.
    provider.script({ toolCalls: [{ name: "delegate", input: { to: "worker", message: "one" } }] }, { text: "first answer", usage: USAGE });
    const agentId = await coordinator(project, { worker: "worker" }, "go");
    let list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    expect(toolResults(list)[0]).toMatchObject({ outcome: "succeeded", content_blocks: [{ text: "first answer" }] });
    const budget = await server.api.post(
      `/api/v1/orgs/${project.orgId}/budgets`,
      { name: "workers", scope: { kind: "agent_profile", id: workerId }, period: "month", limit_tokens: CALL_TOKENS, action: "pause" },
      { token: project.token },
    );
    expect(budget.status, budget.text).toBe(201);
    expect(budget.body.state).toBe("exceeded");
    const callsBefore = modelCalls(provider).length;

    await send(server.api, project, agentId, call("delegate", { to: "worker", message: "two" }));
    list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 2);
    const waited = toolResults(list)[1];
    expect(waited.outcome).toBe("failed");
    const [, second] = await children(project, agentId);
    expect(textOf(waited)).toContain(`The delegate ${second.id} did not answer: paused. The delegate is paused by budget ${budget.body.id}`);
    const got = await server.api.get(`${project.base}/agents/${second.id}`, { token: project.token });
    expect(got.body.agent.activity).toMatchObject({ status: "paused", detail: "paused by a budget" });

    await send(server.api, project, agentId, call("await_delegates", { agent_ids: [second.id], timeout_seconds: 3600 }));
    list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 3);
    const awaited = toolResults(list)[2].content_blocks[0].value;
    expect(awaited).toEqual({
      timed_out: false,
      results: [{ agent_id: second.id, state: "paused", budget: { budget_id: budget.body.id, period_end: budget.body.period_end }, error: expect.stringContaining("paused by budget") }],
    });
    // The held child never called the model: only the coordinator's four calls since the budget (a tool call and an answer per input).
    expect(modelCalls(provider).length - callsBefore).toBe(4);
  });

  it("cancels and archives its children with it", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    await profile(project, "slow");
    // The child's model call never answers until the cancel aborts it.
    provider.script({ toolCalls: [{ name: "delegate", input: { to: "slow", message: "take your time" } }] }, { hang: true });
    const agentId = await coordinator(project, { slow: "slow" }, "go");
    const [child] = await eventually(() => children(project, agentId), (kids) => kids.length === 1);
    await eventually(async () => modelCalls(provider).length, (n) => n >= 2);
    const canceled = await server.api.post(`${project.base}/agents/${agentId}/cancel`, {}, { token: project.token });
    expect(canceled.status, canceled.text).toBe(200);
    const list = await untilEvents(server.api, project, agentId, (e) => toolResults(e).length === 1);
    expect(toolResults(list)[0].outcome).toBe("canceled");
    const childEvents = await untilEvents(server.api, project, child.id, (e) => e.some((x: any) => x.event_kind === "agent_input" && x.sequence > 2));
    expect(childEvents.length).toBeGreaterThan(2);
    const calls = await server.api.get(`${project.base}/agents/${child.id}/tool-calls?limit=100`, { token: project.token });
    expect(calls.status).toBe(200);

    const archived = await server.api.post(`${project.base}/agents/${agentId}/archive`, undefined, { token: project.token });
    expect(archived.status, archived.text).toBe(200);
    const after = await server.api.get(`${project.base}/agents/${child.id}`, { token: project.token });
    expect(after.body.agent.state).toBe("archived");
    expect(await children(project, agentId)).toHaveLength(0);
    void events;
  });
});
