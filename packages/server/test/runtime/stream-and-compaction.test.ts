import { describe, expect, it } from "vitest";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, finalOutputs, launch, requestText, send, untilEvents } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";
import { SseStream, type SseFrame } from "../support/sse.js";

const server = useTestServer({}, { worker: true });
const provider = useFakeProvider();

describe("the live stream of a running agent", () => {
  it("streams deltas that share the model call context with the final output, tool-call updates, and resumes without gaps", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const tools = "tools:\n  lookup:\n    type: custom\n    description: Looks up\n    input_schema:\n      type: object\n";
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project, tools)));
    const streamUrl = `${server.url}${project.base}/agents/${agentId}/events/stream?stream_deltas=true`;
    const stream = await SseStream.open(streamUrl, { token: project.token });
    expect((await stream.frames(1))[0]).toMatchObject({ event: "agent_input", id: "1" });

    provider.script({ text: "Thinking out loud about the answer.", chunkDelayMs: 20, toolCalls: [{ name: "lookup", input: {} }] });
    await send(server.api, project, agentId, "go");
    const seen: SseFrame[] = [];
    while (!seen.some((f) => f.event === "tool_call_update" && f.json.state === "ready")) seen.push(...(await stream.frames(1)));
    const output = seen.find((f) => f.event === "model_output")!;
    const deltas = seen.filter((f) => f.event === "model_output_delta");
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.every((d) => d.id === undefined && d.json.model_call_context_id === output.json.model_call_context_id)).toBe(true);
    const text = deltas.filter((d) => d.json.event.kind === "text_delta").map((d) => d.json.event.delta).join("");
    expect(text).toBe("Thinking out loud about the answer.");
    const toolBlock = output.json.content_blocks.find((b: any) => b.type === "tool_call");
    const toolStart = deltas.find((d) => d.json.event.kind === "block_start" && d.json.event.block.kind === "tool_use");
    expect(toolStart?.json.event.block.tool_call_id).toBe(toolBlock.tool_call_id);
    expect(seen.filter((f) => f.event === "tool_call_update").map((f) => f.json)).toContainEqual({ tool_call_id: toolBlock.tool_call_id, state: "ready" });
    stream.close();

    // Saved while nobody listened: replayed after Last-Event-ID, deltas are not.
    provider.script({ text: "All done." });
    const submitted = await server.api.post(
      `${project.base}/agents/${agentId}/tool-calls/${toolBlock.tool_call_id}/result`,
      { outcome: "succeeded", content_blocks: [{ type: "text", text: "found" }] },
      { token: project.token },
    );
    expect(submitted.status, submitted.text).toBe(200);
    const all = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    const resumed = await SseStream.open(`${server.url}${project.base}/agents/${agentId}/events/stream`, {
      token: project.token,
      headers: { "last-event-id": output.id! },
    });
    const replayed = await resumed.frames(all.length - Number(output.id));
    expect(replayed.map((f) => Number(f.id))).toEqual(all.filter((e) => e.sequence > Number(output.id)).map((e) => e.sequence));
    expect(replayed.some((f) => f.event === "model_output_delta")).toBe(false);
    resumed.close();
  });
});

describe("context checkpoints", () => {
  it("summarizes older events when the conversation outgrows the window and continues the same turn", async () => {
    const project = await agentProject(server.api, provider.baseUrl, { contextWindowTokens: 1400, maxOutputTokens: 200 });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)));
    const long = (tag: string) => `${tag} ${"lorem ipsum dolor sit amet ".repeat(70)}`;
    const usage = (inputTokens: number) => ({ inputTokens, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 });
    provider.script(
      { text: "noted one", usage: usage(100) },
      { text: "noted two", usage: usage(200) },
      { text: "SUMMARY: the user sent two long notes.", usage: usage(4000) },
      { text: "answer after the checkpoint", usage: usage(300) },
    );
    await send(server.api, project, agentId, long("NOTE-ONE"));
    await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    await send(server.api, project, agentId, long("NOTE-TWO"));
    await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 2);
    await send(server.api, project, agentId, long("NOTE-THREE"));
    const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 3);

    const checkpoint = list.find((e) => e.event_kind === "context_checkpoint");
    expect(checkpoint).toMatchObject({ summary: "SUMMARY: the user sent two long notes.", is_opening_event: false });
    const third = list.find((e) => e.event_kind === "agent_input" && e.content_blocks?.[0]?.text.startsWith("NOTE-THREE"));
    expect(checkpoint.turn_id).toBe(third.turn_id);
    expect(checkpoint.summarized_through_event_sequence).toBeLessThan(third.sequence);
    expect(requestText(provider, 2)).toContain("NOTE-ONE");
    const after = requestText(provider, 3);
    expect(after).toContain("<context_checkpoint>");
    expect(after).toContain("SUMMARY: the user sent two long notes.");
    expect(after).toContain("NOTE-THREE");
    expect(after).not.toContain("NOTE-ONE");
    expect(finalOutputs(list).at(-1).content_blocks[0].text).toBe("answer after the checkpoint");
    // The summary call is a model call: it counts in usage (docs/usage-and-budgets.md).
    const counted = await server.api.get(`/api/v1/orgs/${project.orgId}/usage?agent_id=${agentId}`, { token: project.token });
    expect(counted.status, counted.text).toBe(200);
    expect(counted.body.totals).toMatchObject({ model_calls: 4, input_tokens: 4600, output_tokens: 40 });
  });
});
