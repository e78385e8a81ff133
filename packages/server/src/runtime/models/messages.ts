import {
  jsonSchema,
  tool,
  type JSONSchema7,
  type ModelMessage as SdkMessage,
  type ProviderMetadata,
  type ToolSet,
} from "ai";
import type {
  AssistantContentPart,
  JsonObject,
  MediaSource,
  ModelApiFormat,
  ModelMessage,
  ModelRequest,
  ProviderReplay,
  ToolResultPart,
  ToolSpec,
  UserContentPart,
} from "./types.js";

type SdkProviderOptions = NonNullable<Extract<SdkMessage, { role: "user" }>["providerOptions"]>;
type SdkUserPart = Exclude<Extract<SdkMessage, { role: "user" }>["content"], string>[number];
type SdkAssistantPart = Exclude<Extract<SdkMessage, { role: "assistant" }>["content"], string>[number];
type SdkToolPart = Extract<SdkMessage, { role: "tool" }>["content"][number];

/** svc messages → AI SDK messages. Media URLs stay URLs; the SDK is told never to download them. */
export function toSdkMessages(messages: ModelMessage[], format: ModelApiFormat): SdkMessage[] {
  return messages.map((message): SdkMessage => {
    switch (message.role) {
      case "user":
        return {
          role: "user",
          content: typeof message.content === "string" ? message.content : message.content.map(toUserPart),
        };
      case "assistant":
        return { role: "assistant", content: message.content.map((part) => toAssistantPart(part, format)) };
      case "tool":
        return { role: "tool", content: message.content.map(toToolResultPart) };
    }
  });
}

function toUserPart(part: UserContentPart): SdkUserPart {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text };
    case "image":
      return { type: "image", image: mediaData(part.source), mediaType: part.mediaType };
    case "file":
      return {
        type: "file",
        data: mediaData(part.source),
        mediaType: part.mediaType,
        ...(part.filename === undefined ? {} : { filename: part.filename }),
      };
  }
}

function mediaData(source: MediaSource): Uint8Array | URL {
  return "data" in source ? source.data : new URL(source.url);
}

function toAssistantPart(part: AssistantContentPart, format: ModelApiFormat): SdkAssistantPart {
  const providerOptions = replayFor(part, format);
  const options = providerOptions === undefined ? {} : { providerOptions };
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text, ...options };
    case "reasoning":
      return { type: "reasoning", text: part.text, ...options };
    case "tool_call":
      return { type: "tool-call", toolCallId: part.id, toolName: part.name, input: part.input, ...options };
  }
}

/**
 * With `store: false` an OpenAI reasoning item can only be replayed inline, with its encrypted content; an
 * item id alone points at nothing and the API rejects the request. Such parts go without replay (the SDK
 * then leaves them out).
 */
function replayFor(part: AssistantContentPart, format: ModelApiFormat): SdkProviderOptions | undefined {
  const replay = part.providerReplay;
  if (replay === undefined) return undefined;
  if (format === "openai-responses" && part.type === "reasoning" && typeof replay["openai"]?.["reasoningEncryptedContent"] !== "string") {
    return undefined;
  }
  return replay;
}

function toToolResultPart(part: ToolResultPart): SdkToolPart {
  return {
    type: "tool-result",
    toolCallId: part.toolCallId,
    toolName: part.name,
    output: part.outcome === "succeeded" ? { type: "text", value: part.content } : { type: "error-text", value: part.content },
  };
}

/** Tools without `execute`: the SDK reports calls and never runs anything. */
export function toSdkTools(specs: ToolSpec[]): ToolSet {
  const tools: ToolSet = {};
  for (const spec of specs) {
    tools[spec.name] = tool({
      description: spec.description,
      // ToolSpec.inputSchema is a JSON Schema object by contract; JsonObject is the storage type.
      inputSchema: jsonSchema<JsonObject>(spec.inputSchema as JSONSchema7),
    });
  }
  return tools;
}

const ANTHROPIC_THINKING_BUDGET: Record<string, number> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 32000,
  max: 64000,
};
const CHAT_EFFORTS = new Set(["none", "minimal", "low", "medium", "high", "xhigh", "max"]);

/**
 * Per-format provider options. Responses runs with `store: false`: svc owns the history and replays it
 * inline (encrypted reasoning included), which also works for zero-data-retention orgs and compatible
 * servers. A reasoning effort forces the SDK's reasoning mode, since svc's model config is the authority.
 * Anthropic has no effort for budget thinking: efforts map to thinking budgets (the SDK switches to
 * adaptive thinking for models that reject budgets).
 */
export function providerOptionsFor(request: ModelRequest, warnings: string[]): SdkProviderOptions {
  const effort = request.reasoningEffort;
  switch (request.apiFormat) {
    case "openai-responses":
      return {
        openai: {
          store: false,
          ...(effort === undefined ? {} : { reasoningEffort: effort, forceReasoning: true }),
          ...(effort === undefined || effort === "none" ? {} : { reasoningSummary: "auto" }),
        },
      };
    case "openai-chat-completions":
      if (effort !== undefined && !CHAT_EFFORTS.has(effort)) {
        warnings.push(`reasoning effort "${effort}" is not supported by chat completions and was ignored`);
        return {};
      }
      return effort === undefined ? {} : { openai: { reasoningEffort: effort, forceReasoning: true } };
    case "anthropic-messages":
      if (effort === undefined) return {};
      if (effort === "none") return { anthropic: { thinking: { type: "disabled" } } };
      return { anthropic: { thinking: { type: "enabled", budgetTokens: ANTHROPIC_THINKING_BUDGET[effort] ?? 8192 } } };
  }
}

/** SDK provider metadata → storable replay data (plain JSON, undefined values dropped). */
export function toReplay(metadata: ProviderMetadata | undefined): ProviderReplay | undefined {
  if (metadata === undefined || Object.keys(metadata).length === 0) return undefined;
  return JSON.parse(JSON.stringify(metadata)) as ProviderReplay;
}
