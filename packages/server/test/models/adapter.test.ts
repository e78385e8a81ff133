import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeProvider, type FakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import type { ModelMessage, ModelResultPart } from "../../src/runtime/models/types.js";
import { deltaText, FORMATS, lastBody, modelRequest, run, weatherTool } from "./support.js";

let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await fake?.close();
});
beforeEach(() => fake.reset());

describe.each(FORMATS)("%s over the real wire", (format) => {
  it("streams a plain text turn: ordered deltas, final text, usage and end_turn", async () => {
    const text = "The quick brown fox jumps over the lazy dog.";
    fake.script({ text, usage: { inputTokens: 120, outputTokens: 11, cacheReadTokens: 40, cacheWriteTokens: 8 } });

    const { result, deltas } = await run(modelRequest(fake, format));

    expect(result.stopReason).toBe("end_turn");
    expect(result.parts).toHaveLength(1);
    expect(result.parts[0]).toMatchObject({ type: "text", text });
    expect(result.usage).toEqual({ inputTokens: 120, outputTokens: 11, cacheReadTokens: 40, cacheWriteTokens: 8, reasoningTokens: 0 });
    expect(result.providerResponseId).toMatch(/fake0001$/);
    expect(result.servedModel).toBe("fake-model");

    expect(deltas[0]).toEqual({ kind: "block_start", blockIndex: 0, block: { kind: "text" } });
    expect(deltas.at(-1)).toEqual({ kind: "block_stop", blockIndex: 0 });
    const middle = deltas.slice(1, -1);
    expect(middle.length).toBeGreaterThan(1);
    expect(middle.every((delta) => delta.kind === "text_delta" && delta.blockIndex === 0)).toBe(true);
    expect(deltaText(deltas, "text_delta").get(0)).toBe(text);

    const body = lastBody(fake);
    expect(body["model"]).toBe("fake-model");
    expect(body["stream"]).toBe(true);
    expect(JSON.stringify(body)).toContain("You are a test model.");
  });

  it("reports tool calls with parsed input, argument deltas and tool_use", async () => {
    fake.script({
      text: "Checking both.",
      toolCalls: [
        { id: "call_paris", name: "get_weather", input: { city: "Paris", days: 3 } },
        { id: "call_rome", name: "get_weather", input: { city: "Rome" } },
      ],
    });

    const { result, deltas } = await run(modelRequest(fake, format, { tools: [weatherTool], messages: [{ role: "user", content: "Weather in Paris and Rome?" }] }));

    expect(result.stopReason).toBe("tool_use");
    expect(result.parts.map(({ type }) => type)).toEqual(["text", "tool_call", "tool_call"]);
    expect(result.parts[0]).toMatchObject({ type: "text", text: "Checking both." });
    expect(result.parts[1]).toMatchObject({ type: "tool_call", providerCallId: "call_paris", name: "get_weather", input: { city: "Paris", days: 3 } });
    expect(result.parts[2]).toMatchObject({ type: "tool_call", providerCallId: "call_rome", name: "get_weather", input: { city: "Rome" } });

    const starts = deltas.filter((delta) => delta.kind === "tool_call_start");
    expect(starts).toEqual([
      { kind: "tool_call_start", blockIndex: 1, toolCallId: "call_paris", toolName: "get_weather" },
      { kind: "tool_call_start", blockIndex: 2, toolCallId: "call_rome", toolName: "get_weather" },
    ]);
    const args = deltaText(deltas, "tool_arguments_delta");
    expect(JSON.parse(args.get(1) ?? "")).toEqual({ city: "Paris", days: 3 });
    expect(JSON.parse(args.get(2) ?? "")).toEqual({ city: "Rome" });
    expect(deltas.filter((delta) => delta.kind === "tool_arguments_delta" && delta.blockIndex === 1).length).toBeGreaterThan(1);
    // Every block that starts also stops, in order.
    expect(deltas.filter((delta) => delta.kind === "block_stop").map((delta) => delta.blockIndex)).toEqual([0, 1, 2]);

    const body = lastBody(fake);
    const tools = body["tools"] as Array<Record<string, unknown>>;
    const declared = format === "openai-chat-completions" ? (tools[0]?.["function"] as Record<string, unknown>) : tools[0];
    expect(declared?.["name"]).toBe("get_weather");
    expect(JSON.stringify(declared)).toContain('"required":["city"]');
  });

  it("sends a history with assistant tool calls and tool results in the provider's shape", async () => {
    const messages: ModelMessage[] = [
      { role: "user", content: "Weather and time?" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Let me check." },
          { type: "tool_call", id: "call_1", name: "get_weather", input: { city: "Paris" } },
          { type: "tool_call", id: "call_2", name: "get_time", input: {} },
        ],
      },
      {
        role: "tool",
        content: [
          { type: "tool_result", toolCallId: "call_1", name: "get_weather", outcome: "succeeded", content: "sunny, 21C" },
          { type: "tool_result", toolCallId: "call_2", name: "get_time", outcome: "failed", content: "clock unavailable" },
        ],
      },
    ];

    const { result } = await run(modelRequest(fake, format, { messages }));

    // The fake's default answer after tool results proves it read them back from the wire.
    expect(result.parts).toMatchObject([{ type: "text", text: "tool get_weather said: sunny, 21C\ntool get_time said: clock unavailable" }]);
    const body = lastBody(fake);
    if (format === "openai-chat-completions") {
      expect(body["messages"]).toEqual([
        { role: "system", content: "You are a test model." },
        { role: "user", content: "Weather and time?" },
        {
          role: "assistant",
          content: "Let me check.",
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
            { id: "call_2", type: "function", function: { name: "get_time", arguments: "{}" } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "sunny, 21C" },
        { role: "tool", tool_call_id: "call_2", content: "clock unavailable" },
      ]);
    } else if (format === "openai-responses") {
      expect(body["input"]).toEqual([
        { role: "system", content: "You are a test model." },
        { role: "user", content: [{ type: "input_text", text: "Weather and time?" }] },
        { role: "assistant", content: [{ type: "output_text", text: "Let me check." }] },
        { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' },
        { type: "function_call", call_id: "call_2", name: "get_time", arguments: "{}" },
        { type: "function_call_output", call_id: "call_1", output: "sunny, 21C" },
        { type: "function_call_output", call_id: "call_2", output: "clock unavailable" },
      ]);
      expect(body["store"]).toBe(false);
    } else {
      expect(body["system"]).toEqual([{ type: "text", text: "You are a test model." }]);
      expect(body["messages"]).toEqual([
        { role: "user", content: [{ type: "text", text: "Weather and time?" }] },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Let me check." },
            { type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" } },
            { type: "tool_use", id: "call_2", name: "get_time", input: {} },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "call_1", content: "sunny, 21C" },
            { type: "tool_result", tool_use_id: "call_2", content: "clock unavailable", is_error: true },
          ],
        },
      ]);
    }
  });

  it("maps max_tokens and refusal stops", async () => {
    fake.script({ text: "cut off mid", stopReason: "max_tokens" }, { text: "I can't help with that.", stopReason: "refusal" });

    const truncated = await run(modelRequest(fake, format));
    const refused = await run(modelRequest(fake, format));

    expect(truncated.result.stopReason).toBe("max_tokens");
    expect(refused.result.stopReason).toBe("refusal");
    expect(refused.result.parts).toMatchObject([{ type: "text", text: "I can't help with that." }]);
  });

  it("maps a content filter stop", async () => {
    fake.script({ text: "partial", stopReason: "content_filter" });
    const { result } = await run(modelRequest(fake, format));
    // Anthropic has no content filter stop; the fake sends `refusal` there.
    expect(result.stopReason).toBe(format === "anthropic-messages" ? "refusal" : "content_filter");
  });
});

describe.each(["anthropic-messages", "openai-responses"] as const)("%s reasoning", (format) => {
  it("streams thinking deltas before the text and replays the reasoning on the next call", async () => {
    const reasoning = "The user wants a number. Forty-two is traditional.";
    fake.script({ reasoning, text: "42", usage: { inputTokens: 50, outputTokens: 30, reasoningTokens: 20 } });

    const { result, deltas } = await run(modelRequest(fake, format, { reasoningEffort: "high" }));

    expect(deltas[0]).toEqual({ kind: "block_start", blockIndex: 0, block: { kind: "thinking" } });
    expect(deltaText(deltas, "thinking_delta").get(0)).toBe(reasoning);
    expect(deltas.filter((delta) => delta.kind === "thinking_delta").length).toBeGreaterThan(1);
    expect(deltas).toContainEqual({ kind: "block_start", blockIndex: 1, block: { kind: "text" } });
    expect(deltaText(deltas, "text_delta").get(1)).toBe("42");
    expect(result.usage.reasoningTokens).toBe(20);
    expect(result.parts.map(({ type }) => type)).toEqual(["reasoning", "text"]);
    const thinking = result.parts[0] as Extract<ModelResultPart, { type: "reasoning" }>;
    expect(thinking.text).toBe(reasoning);

    const body = lastBody(fake);
    if (format === "anthropic-messages") {
      expect(body["thinking"]).toEqual({ type: "enabled", budget_tokens: 16384 });
      expect(thinking.providerReplay?.["anthropic"]?.["signature"]).toEqual(expect.any(String));
    } else {
      expect(body["reasoning"]).toEqual({ effort: "high", summary: "auto" });
      expect(body["include"]).toEqual(["reasoning.encrypted_content"]);
      expect(thinking.providerReplay?.["openai"]).toMatchObject({ itemId: "rs_fake0001", reasoningEncryptedContent: expect.any(String) });
    }

    // Next turn: the assistant message goes back with its replay data.
    const assistant: ModelMessage = {
      role: "assistant",
      content: result.parts.map((part) => (part.type === "tool_call" ? { type: "tool_call", id: part.providerCallId, name: part.name, input: part.input } : part)),
    };
    await run(modelRequest(fake, format, { reasoningEffort: "high", messages: [{ role: "user", content: "a number?" }, assistant, { role: "user", content: "again" }] }));
    const next = lastBody(fake);
    if (format === "anthropic-messages") {
      const messages = next["messages"] as Array<{ content: unknown[] }>;
      expect(messages[1]?.content[0]).toEqual({ type: "thinking", thinking: reasoning, signature: thinking.providerReplay?.["anthropic"]?.["signature"] });
    } else {
      expect(next["input"]).toContainEqual({
        type: "reasoning",
        id: "rs_fake0001",
        encrypted_content: thinking.providerReplay?.["openai"]?.["reasoningEncryptedContent"],
        summary: [{ type: "summary_text", text: reasoning }],
      });
    }
  });
});

describe("reasoning settings per format", () => {
  it("drops OpenAI reasoning parts that cannot be replayed without stored items", async () => {
    const messages: ModelMessage[] = [
      { role: "user", content: "hi" },
      { role: "assistant", content: [{ type: "reasoning", text: "thought", providerReplay: { openai: { itemId: "rs_gone" } } }, { type: "text", text: "hello" }] },
      { role: "user", content: "again" },
    ];
    await run(modelRequest(fake, "openai-responses", { messages }));
    expect(JSON.stringify(lastBody(fake)["input"])).not.toContain("rs_gone");
  });

  it("sends chat completions reasoning_effort and turns Anthropic thinking off for none", async () => {
    await run(modelRequest(fake, "openai-chat-completions", { reasoningEffort: "low" }));
    expect(lastBody(fake)["reasoning_effort"]).toBe("low");
    await run(modelRequest(fake, "anthropic-messages", { reasoningEffort: "none" }));
    expect(lastBody(fake)["thinking"]).toEqual({ type: "disabled" });
  });
});
