import { createModelClient } from "../../src/runtime/models/ai-sdk-client.js";
import type { FakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import {
  ModelError,
  type ModelApiFormat,
  type ModelDelta,
  type ModelRequest,
  type ModelResult,
  type ToolSpec,
} from "../../src/runtime/models/types.js";

export const FORMATS: ModelApiFormat[] = ["openai-chat-completions", "openai-responses", "anthropic-messages"];

export const client = createModelClient();

export const weatherTool: ToolSpec = {
  name: "get_weather",
  description: "Current weather for a city",
  inputSchema: { type: "object", properties: { city: { type: "string" }, days: { type: "integer" } }, required: ["city"] },
};

export function modelRequest(fake: FakeProvider, apiFormat: ModelApiFormat, overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    apiFormat,
    baseUrl: fake.baseUrl,
    auth: { kind: "bearer_token" },
    credential: "sk-test-credential",
    model: "fake-model",
    maxOutputTokens: 1024,
    system: "You are a test model.",
    messages: [{ role: "user", content: "hello" }],
    tools: [],
    timeoutMs: 10_000,
    ...overrides,
  };
}

export async function run(request: ModelRequest): Promise<{ result: ModelResult; deltas: ModelDelta[] }> {
  const deltas: ModelDelta[] = [];
  const result = await client.stream(request, (delta) => deltas.push(delta));
  return { result, deltas };
}

/** Runs a call that must fail and returns its ModelError. */
export async function failure(request: ModelRequest, onDelta: (delta: ModelDelta) => void = () => {}): Promise<ModelError> {
  try {
    await client.stream(request, onDelta);
  } catch (error) {
    if (error instanceof ModelError) return error;
    throw error;
  }
  throw new Error("expected the model call to fail");
}

/** The concatenated deltas of one kind, per block index. */
export function deltaText(deltas: ModelDelta[], kind: "text_delta" | "thinking_delta" | "tool_arguments_delta"): Map<number, string> {
  const texts = new Map<number, string>();
  for (const delta of deltas) {
    if (delta.kind === kind) texts.set(delta.blockIndex, (texts.get(delta.blockIndex) ?? "") + delta.delta);
  }
  return texts;
}

export function lastBody(fake: FakeProvider): Record<string, unknown> {
  const request = fake.requests.at(-1);
  if (request === undefined) throw new Error("the fake provider received no request");
  return request.body as Record<string, unknown>;
}
