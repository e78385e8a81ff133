import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, tool, type LanguageModel } from "ai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runFakeProvider } from "../../src/runtime/models/fake-provider/cli.js";
import { startFakeProvider, type FakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import type { ModelApiFormat } from "../../src/runtime/models/types.js";
import { FORMATS, modelRequest, run, weatherTool } from "./support.js";

let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider({ host: "127.0.0.1", port: 0 });
});
afterAll(async () => {
  await fake?.close();
});
beforeEach(() => fake.reset());

describe.each(FORMATS)("%s default answers", (format) => {
  it("echoes the last user text", async () => {
    const { result } = await run(modelRequest(fake, format, { messages: [{ role: "user", content: [{ type: "text", text: "ping 42" }] }] }));
    expect(result.parts).toMatchObject([{ type: "text", text: "echo: ping 42" }]);
    expect(result.stopReason).toBe("end_turn");
  });

  it("calls the tool named in `call tool <name> <json>`", async () => {
    const { result } = await run(modelRequest(fake, format, { tools: [weatherTool], messages: [{ role: "user", content: 'please call tool get_weather {"city":"Oslo"}' }] }));
    expect(result.stopReason).toBe("tool_use");
    expect(result.parts).toMatchObject([{ type: "tool_call", name: "get_weather", input: { city: "Oslo" } }]);
  });

  it("consumes scripted replies in order, then falls back to the default", async () => {
    fake.script({ text: "first" }, { text: "second" });
    expect(fake.pending()).toBe(2);
    const texts: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { result } = await run(modelRequest(fake, format));
      texts.push(result.parts[0]?.type === "text" ? result.parts[0].text : "");
    }
    expect(texts).toEqual(["first", "second", "echo: hello"]);
    expect(fake.pending()).toBe(0);
    expect(fake.requests).toHaveLength(3);
  });
});

describe("non-streaming JSON answers parse with the SDK's own schemas", () => {
  const models: Record<ModelApiFormat, () => LanguageModel> = {
    "openai-chat-completions": () => createOpenAI({ baseURL: fake.baseUrl, apiKey: "k" }).chat("fake-model"),
    "openai-responses": () => createOpenAI({ baseURL: fake.baseUrl, apiKey: "k" }).responses("fake-model"),
    "anthropic-messages": () => createAnthropic({ baseURL: fake.baseUrl, apiKey: "k" }).messages("fake-model"),
  };

  it.each(FORMATS)("%s", async (format) => {
    fake.script({
      reasoning: "thinking it over",
      text: "Here you go.",
      toolCalls: [{ id: "call_json", name: "get_weather", input: { city: "Lima" } }],
      usage: { inputTokens: 30, outputTokens: 12, cacheReadTokens: 10, reasoningTokens: 4 },
    });
    const result = await generateText({
      model: models[format](),
      prompt: "hi",
      tools: { get_weather: tool({ description: "weather", inputSchema: jsonSchema<{ city: string }>({ type: "object", properties: { city: { type: "string" } } }) }) },
      maxRetries: 0,
    });
    expect(fake.requests[0]?.body).not.toHaveProperty("stream", true);
    expect(result.text).toBe("Here you go.");
    expect(result.toolCalls).toMatchObject([{ toolCallId: "call_json", toolName: "get_weather", input: { city: "Lima" } }]);
    expect(result.finishReason).toBe("tool-calls");
    expect(result.usage).toMatchObject({ inputTokens: 30, outputTokens: 12, inputTokenDetails: { cacheReadTokens: 10 } });
    // Chat completions has no reasoning on the wire.
    expect(result.reasoningText).toBe(format === "openai-chat-completions" ? undefined : "thinking it over");
  });
});

describe("wire details", () => {
  async function sse(path: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<string> {
    const response = await fetch(`${fake.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    return response.text();
  }
  const eventNames = (text: string) => [...text.matchAll(/^event: (.+)$/gm)].map((match) => match[1]);

  it("Anthropic streams named events in the documented order", async () => {
    fake.script({ reasoning: "hm", text: "hi", toolCalls: [{ name: "t", input: {} }] });
    const text = await sse("/v1/messages", { model: "m", max_tokens: 10, stream: true, messages: [{ role: "user", content: "x" }] });
    expect(eventNames(text)).toEqual([
      "message_start",
      "ping",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(text).toContain('"type":"signature_delta"');
    expect(text).toContain('"stop_reason":"tool_use"');
  });

  it("Responses streams sequence-numbered events ending in response.completed", async () => {
    fake.script({ text: "hi" });
    const text = await sse("/v1/responses", { model: "m", stream: true, input: "x" });
    expect(eventNames(text)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const sequence = [...text.matchAll(/"sequence_number":(\d+)/g)].map((match) => Number(match[1]));
    expect(sequence).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it("chat completions sends data-only chunks, a usage chunk when asked, and [DONE]", async () => {
    fake.script({ text: "hi" });
    const text = await sse("/v1/chat/completions", { model: "m", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "x" }] });
    expect(eventNames(text)).toEqual([]);
    const frames = text.trim().split("\n\n");
    expect(frames.at(-1)).toBe("data: [DONE]");
    const usageChunk = JSON.parse(frames.at(-2)?.slice("data: ".length) ?? "{}") as Record<string, unknown>;
    expect(usageChunk["choices"]).toEqual([]);
    expect(usageChunk["usage"]).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) });
  });

  it("records method, path, lower-cased headers and the parsed body", async () => {
    await fetch(`${fake.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "X-Api-Key": "secret", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "m", max_tokens: 5, messages: [{ role: "user", content: "x" }] }),
    });
    expect(fake.requests[0]).toMatchObject({
      method: "POST",
      path: "/v1/messages",
      format: "anthropic-messages",
      headers: { "x-api-key": "secret", "anthropic-version": "2023-06-01" },
      body: { model: "m", max_tokens: 5 },
    });
  });

  it("answers unknown routes with 404 and lists a fake model", async () => {
    expect((await fetch(`${fake.url}/v1/embeddings`, { method: "POST", body: "{}" })).status).toBe(404);
    const models = (await (await fetch(`${fake.url}/v1/models`)).json()) as { data: Array<{ id: string }> };
    expect(models.data.map((model) => model.id)).toEqual(["fake-model"]);
  });
});

describe("svc fake-provider command", () => {
  it("prints the base URLs, serves, and stops when told to", async () => {
    const lines: string[] = [];
    const stop = new AbortController();
    const exit = runFakeProvider(["--port", "0", "--host", "127.0.0.1"], { signal: stop.signal, out: (line) => lines.push(line), err: (line) => lines.push(line) });
    await expect.poll(() => lines.length).toBeGreaterThanOrEqual(4);
    const url = /listening on (\S+)/.exec(lines[0] ?? "")?.[1] ?? "";
    expect(lines.join("\n")).toContain(`anthropic-messages       base_url ${url}/v1`);
    const reply = await fetch(`${url}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "yo" }] }) });
    const body = (await reply.json()) as { choices: Array<{ message: { content: string } }> };
    expect(body.choices[0]?.message.content).toBe("echo: yo");
    stop.abort();
    expect(await exit).toBe(0);
  });

  it("rejects bad arguments with exit code 2", async () => {
    const lines: string[] = [];
    expect(await runFakeProvider(["--port", "http"], { err: (line) => lines.push(line) })).toBe(2);
    expect(await runFakeProvider(["--bogus"], { err: (line) => lines.push(line) })).toBe(2);
    expect(lines.join("\n")).toContain("usage: svc fake-provider");
  });
});
