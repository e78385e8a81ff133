import { describe, expect, it } from "vitest";
import { agentProject, yamlConfig, type ApiFormat } from "../support/agents.js";
import { createConfig, events, finalOutputs, launch, modelCalls, providerRequests, requestText, send, untilEvents } from "../support/agent-loop.js";

/** The text of the last user message of a Chat Completions request. */
function lastUserText(body: { messages: Array<{ role: string; content: unknown }> }): string {
  const content = body.messages.filter((m) => m.role === "user").at(-1)!.content;
  return typeof content === "string" ? content : (content as Array<{ text?: string }>).map((p) => p.text ?? "").join("");
}
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";

const server = useTestServer({}, { worker: true });
const provider = useFakeProvider();

describe.each<ApiFormat>(["openai-chat-completions", "openai-responses", "anthropic-messages"])("one turn over %s", (format) => {
  it("answers the opening message and records a dense timeline", async () => {
    const project = await agentProject(server.api, provider.baseUrl, { format });
    provider.script({ text: "Hello from the model." });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)), "Hi there");
    const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    expect(list.map((e) => e.sequence)).toEqual([1, 2, 3]);
    expect(list.map((e) => [e.event_kind, e.turn_sequence, e.is_opening_event])).toEqual([
      ["agent_input", 1, true],
      ["agent_input", 2, true],
      ["model_output", 2, false],
    ]);
    expect(list[0].input_kind).toBe("config_change");
    expect(list[1].content_blocks).toEqual([{ type: "text", text: "Hi there" }]);
    expect(list[2].stop_reason).toBe("end_turn");
    expect(list[2].content_blocks).toEqual([{ type: "text", text: "Hello from the model." }]);
    expect(list[2].model_call_context_id).toMatch(/^mcc_[a-z2-7]{26}$/);
    expect(modelCalls(provider)).toHaveLength(1);
    expect(modelCalls(provider)[0]!.format).toBe(format);
    expect(requestText(provider, 0)).toContain("Hi there");
    expect(requestText(provider, 0)).toContain("You are a helpful test agent.");
  });
});

describe("admission", () => {
  it("delivers steering at the next model call, before queued inputs, and queued inputs one turn each", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    provider.script({ text: "first answer", delayMs: 1500 }, { text: "steered answer" }, { text: "queued answer" });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)), "first");
    await providerRequests(provider, 1);
    await send(server.api, project, agentId, "queued one");
    await send(server.api, project, agentId, "steer now", "steering");
    const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 3);
    const openings = list.filter((e) => e.is_opening_event && e.input_kind === "content").map((e) => e.content_blocks[0].text);
    expect(openings).toEqual(["first", "steer now", "queued one"]);
    expect(requestText(provider, 1)).toContain("steer now");
    expect(requestText(provider, 1)).not.toContain("queued one");
    // The steered call still sees the first turn's answer in its history.
    expect(requestText(provider, 1)).toContain("first answer");
  });

  it("takes queued inputs in backlog order after a reorder", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    provider.script({ text: "busy", delayMs: 1500 });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)), "start");
    await providerRequests(provider, 1);
    const a = await send(server.api, project, agentId, "input A");
    await send(server.api, project, agentId, "input B");
    const c = await send(server.api, project, agentId, "input C");
    const moved = await server.api.post(`${project.base}/agents/${agentId}/inputs/${c}/move`, { position: "before", anchor_input_id: a }, { token: project.token });
    expect(moved.status, moved.text).toBe(200);
    const backlog = await server.api.get(`${project.base}/agents/${agentId}/inputs/backlog`, { token: project.token });
    expect(backlog.body.data.map((i: any) => i.content_blocks[0].text)).toEqual(["input C", "input A", "input B"]);
    await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 4);
    expect([1, 2, 3].map((i) => lastUserText(JSON.parse(requestText(provider, i))))).toEqual(["input C", "input A", "input B"]);
    const taken = await server.api.post(`${project.base}/agents/${agentId}/inputs/${a}/cancel`, undefined, { token: project.token });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe("state_transition_conflict");
  });
});

describe("custom tools", () => {
  const toolsYaml = (mode = "always_allow") =>
    `tools:\n  lookup:\n    type: custom\n    description: Looks a thing up\n    permission:\n      mode: ${mode}\n    input_schema:\n      type: object\n      properties:\n        q: { type: string }\n      required: [q]\n`;

  it("waits for the client's result, accepts the first one only, and continues the turn with it", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    provider.script({ toolCalls: [{ name: "lookup", input: { q: "svc" } }] }, { text: "The answer is 42." });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project, toolsYaml())), "look it up");
    const ready = await untilReady(project, agentId);
    expect(ready).toMatchObject({ name: "lookup", type: "custom", state: "ready", input: { q: "svc" } });
    const path = `${project.base}/agents/${agentId}/tool-calls/${ready.id}/result`;
    const body = { outcome: "succeeded", content_blocks: [{ type: "text", text: "42" }, { type: "structured_data", value: { n: 42 } }] };
    const first = await server.api.post(path, body, { token: project.token });
    expect(first.status, first.text).toBe(200);
    expect(first.body.tool_call).toMatchObject({ id: ready.id, state: "completed", outcome: "succeeded" });
    expect(first.body.tool_result).toMatchObject({ tool_call_id: ready.id, outcome: "succeeded", content_blocks: body.content_blocks });
    const second = await server.api.post(path, body, { token: project.token });
    expect(second.status).toBe(409);
    const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    const result = list.find((e) => e.event_kind === "tool_result");
    expect(result).toMatchObject({ id: first.body.tool_result.event_id, tool_call_id: ready.id, outcome: "succeeded" });
    expect(requestText(provider, 1)).toContain("42");
  });

  it("asks for permission: Allow makes the call ready, Deny completes it as denied and the model is told", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    provider.script({ toolCalls: [{ name: "lookup", input: { q: "one" } }] }, { toolCalls: [{ name: "lookup", input: { q: "two" } }] }, { text: "done" });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project, toolsYaml("always_ask"))), "go");
    const first = await untilInteraction(project, agentId, 1);
    expect(first.interaction_kind).toBe("permission");
    expect(first.request.questions[0].options.map((o: any) => o.label)).toEqual(["Allow", "Deny"]);
    const allow = await server.api.post(`${project.base}/agents/${agentId}/interactions/${first.id}/resolve`, { answers: [{ option_indices: [0] }] }, { token: project.token });
    expect(allow.status, allow.text).toBe(200);
    expect(allow.body.state).toBe("resolved");
    const replay = await server.api.post(`${project.base}/agents/${agentId}/interactions/${first.id}/resolve`, { answers: [{ option_indices: [0] }] }, { token: project.token });
    expect(replay.status).toBe(200);
    const other = await server.api.post(`${project.base}/agents/${agentId}/interactions/${first.id}/resolve`, { answers: [{ option_indices: [1] }] }, { token: project.token });
    expect(other.status).toBe(409);
    const ready = await untilReady(project, agentId);
    await server.api.post(`${project.base}/agents/${agentId}/tool-calls/${ready.id}/result`, { outcome: "succeeded", content_blocks: [{ type: "text", text: "ok" }] }, { token: project.token });
    const second = await untilInteraction(project, agentId, 2);
    const deny = await server.api.post(
      `${project.base}/agents/${agentId}/interactions/${second.id}/resolve`,
      { answers: [{ option_indices: [1], text: "not today" }] },
      { token: project.token },
    );
    expect(deny.status, deny.text).toBe(200);
    const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    const results = list.filter((e) => e.event_kind === "tool_result").map((e) => e.outcome);
    expect(results).toEqual(["succeeded", "denied"]);
    expect(requestText(provider, 2)).toContain("not today");
  });

  it.each(["steering input", "promotion"])("cancels open interactions with a %s; the tool call completes as canceled and the agent goes on", async (via) => {
    const project = await agentProject(server.api, provider.baseUrl);
    provider.script({ toolCalls: [{ name: "lookup", input: { q: "one" } }] }, { text: "moved on" });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project, toolsYaml("always_ask"))), "go");
    const open = await untilInteraction(project, agentId, 1);
    let inputId: string;
    if (via === "steering input") {
      const sent = await server.api.post(
        `${project.base}/agents/${agentId}/inputs`,
        { content_blocks: [{ type: "text", text: "never mind" }], delivery_mode: "steering", cancel_open_interactions: true },
        { token: project.token },
      );
      expect(sent.status, sent.text).toBe(201);
      inputId = sent.body.agent_input.id;
    } else {
      inputId = await send(server.api, project, agentId, "never mind");
      const promoted = await server.api.post(`${project.base}/agents/${agentId}/inputs/${inputId}/promote_to_steering`, { cancel_open_interactions: true }, { token: project.token });
      expect(promoted.status, promoted.text).toBe(200);
      expect(promoted.body).toEqual({ ok: true });
    }
    const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    expect(list.find((e) => e.event_kind === "tool_result")).toMatchObject({ outcome: "canceled" });
    expect(list.some((e) => e.control_type === "cancel_current")).toBe(false);
    const interactions = await server.api.get(`${project.base}/agents/${agentId}/interactions`, { token: project.token });
    expect(interactions.body.data[0]).toMatchObject({ id: open.id, state: "canceled", resolved_by_input_id: inputId });
    const late = await server.api.post(`${project.base}/agents/${agentId}/interactions/${open.id}/resolve`, { answers: [{ option_indices: [0] }] }, { token: project.token });
    expect(late.status).toBe(409);
    expect(requestText(provider, 1)).toContain("never mind");
  });

  async function untilReady(project: Awaited<ReturnType<typeof agentProject>>, agentId: string) {
    let found: any;
    for (let i = 0; i < 300 && !found; i++) {
      const reply = await server.api.get(`${project.base}/agents/${agentId}/tool-calls?state=ready&type=custom`, { token: project.token });
      found = reply.body.data?.[0];
      if (!found) await new Promise((r) => setTimeout(r, 100));
    }
    expect(found).toBeDefined();
    return found;
  }

  async function untilInteraction(project: Awaited<ReturnType<typeof agentProject>>, agentId: string, count: number) {
    let list: any[] = [];
    for (let i = 0; i < 300 && list.length < count; i++) {
      const reply = await server.api.get(`${project.base}/agents/${agentId}/interactions`, { token: project.token });
      list = reply.body.data ?? [];
      if (list.length < count) await new Promise((r) => setTimeout(r, 100));
    }
    expect(list.length).toBeGreaterThanOrEqual(count);
    return list[count - 1];
  }
});

describe("failures", () => {
  it("retries a 429 after its Retry-After and records one answer", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    provider.script({ error: { status: 429, headers: { "retry-after": "1" } } }, { text: "second time lucky" });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)), "hello");
    const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    expect(finalOutputs(list)[0].content_blocks).toEqual([{ type: "text", text: "second time lucky" }]);
    expect(list.filter((e) => e.event_kind === "model_output")).toHaveLength(1);
    expect(modelCalls(provider)).toHaveLength(2);
  });

  it("turns a 400 into a terminal error output that the next turn sees", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    provider.script({ error: { status: 400, message: "bad request body" } }, { text: "recovered" });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)), "hello");
    let list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    const failed = finalOutputs(list)[0];
    expect(failed.stop_reason).toBe("error");
    expect(failed.content_blocks[0].type).toBe("error");
    expect(failed.content_blocks[0].text).toContain("bad request body");
    await send(server.api, project, agentId, "again");
    list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 2);
    expect(requestText(provider, 1)).toContain("bad request body");
  });
});

describe("cancel, archive and config change", () => {
  it("cancels a running call; a second cancel changes nothing", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    provider.script({ hang: true });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)), "take your time");
    await providerRequests(provider, 1);
    const cancel = await server.api.post(`${project.base}/agents/${agentId}/cancel`, {}, { token: project.token });
    expect(cancel.status, cancel.text).toBe(200);
    expect(cancel.body).toMatchObject({ affected: true, runtime_cancel_requested: true });
    expect(cancel.body.event).toMatchObject({ event_kind: "agent_input", input_kind: "control", control_type: "cancel_current" });
    const again = await server.api.post(`${project.base}/agents/${agentId}/cancel`, {}, { token: project.token });
    expect(again.body).toMatchObject({ affected: false, runtime_cancel_requested: false, event: null });
    provider.script({ text: "after cancel" });
    await send(server.api, project, agentId, "next");
    const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    expect(finalOutputs(list)[0].content_blocks[0].text).toBe("after cancel");
  });

  it("archives: waiting inputs are dropped, new inputs refused, archiving again returns the agent", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    provider.script({ hang: true });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)), "one");
    await providerRequests(provider, 1);
    await send(server.api, project, agentId, "two");
    const archived = await server.api.post(`${project.base}/agents/${agentId}/archive`, undefined, { token: project.token });
    expect(archived.status, archived.text).toBe(200);
    expect(archived.body.agent).toMatchObject({ state: "archived" });
    expect(archived.body.agent.archived_at).toBeDefined();
    const backlog = await server.api.get(`${project.base}/agents/${agentId}/inputs/backlog`, { token: project.token });
    expect(backlog.body.data).toEqual([]);
    const refused = await server.api.post(`${project.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "text", text: "x" }] }, { token: project.token });
    expect(refused.status).toBe(409);
    const again = await server.api.post(`${project.base}/agents/${agentId}/archive`, undefined, { token: project.token });
    expect(again.body.agent).toEqual(archived.body.agent);
    const listed = await server.api.get(`${project.base}/agents`, { token: project.token });
    expect(listed.body.data.map((a: any) => a.id)).not.toContain(agentId);
  });

  it("applies a config change at the next model call", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    provider.script({ text: "old" }, { text: "new" });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project, "", "Old instructions.")), "one");
    await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    const change = await server.api.post(
      `${project.base}/agents/${agentId}/config`,
      { source: yamlConfig(project, "", "New instructions."), source_format: "yaml" },
      { token: project.token },
    );
    expect(change.status, change.text).toBe(200);
    expect(change.body.agent_input).toMatchObject({ input_kind: "config_change", delivery_mode: "immediate" });
    const agent = await server.api.get(`${project.base}/agents/${agentId}`, { token: project.token });
    expect(agent.body.agent.current_config_id).toBe(change.body.agent_config.id);
    await send(server.api, project, agentId, "two");
    await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 2);
    expect(requestText(provider, 0)).toContain("Old instructions.");
    expect(requestText(provider, 1)).toContain("New instructions.");
  });
});

describe("ask_question", () => {
  it("opens a question; the answer completes the tool call and the turn continues", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const question = { questions: [{ prompt: "Which colour?", options: [{ label: "red" }, { label: "blue" }] }] };
    provider.script({ toolCalls: [{ name: "ask_question", input: question }] }, { text: "Blue it is." });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project, "tools:\n  ask_question: {}\n")), "ask me");
    let interaction: any;
    for (let i = 0; i < 300 && !interaction; i++) {
      const reply = await server.api.get(`${project.base}/agents/${agentId}/interactions?state=open`, { token: project.token });
      interaction = reply.body.data?.[0];
      if (!interaction) await new Promise((r) => setTimeout(r, 100));
    }
    expect(interaction).toMatchObject({ interaction_kind: "question", state: "open" });
    expect(interaction.request.questions[0].options.map((o: any) => o.label)).toEqual(["red", "blue", "Other"]);
    const resolved = await server.api.post(`${project.base}/agents/${agentId}/interactions/${interaction.id}/resolve`, { answers: [{ option_indices: [1] }] }, { token: project.token });
    expect(resolved.status, resolved.text).toBe(200);
    const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    const result = list.find((e) => e.event_kind === "tool_result");
    expect(result.outcome).toBe("succeeded");
    expect(result.content_blocks[0].value.answers[0]).toMatchObject({ question: "Which colour?", selected: ["blue"] });
    expect(list.some((e) => e.event_kind === "agent_input" && e.input_kind === "interaction_response")).toBe(true);
    expect(requestText(provider, 1)).toContain("blue");
    expect(await events(server.api, project, agentId)).toHaveLength(list.length);
  });
});
