import type {
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  SharedV3ProviderMetadata,
  SharedV3ProviderOptions,
} from "@ai-sdk/provider";
import type { AssistantContentPart, MediaSource, ModelApiFormat, ModelMessage, ModelRequest, ProviderReplay, ToolResultPart, ToolSpec, UserContentPart } from "./types.js";

/*
 * svc messages → the provider packages' own prompt (the AI SDK's LanguageModelV3 interface), handed to
 * `doStream` directly. `streamText` would build the same prompt from SDK messages, but it validates the
 * whole conversation against its schemas and rebuilds it on every call, a cost that grows with every
 * event of a long conversation (docs/performance.md, "Conversation length"); svc's messages are built
 * by svc from stored rows, so that validation checks nothing a caller could get wrong.
 * The rules streamText applies are kept: empty texts are dropped, consecutive tool messages merge.
 */

type UserPart = Extract<LanguageModelV3Message, { role: "user" }>["content"][number];
type AssistantPart = Extract<LanguageModelV3Message, { role: "assistant" }>["content"][number];
type ToolPart = Extract<LanguageModelV3Message, { role: "tool" }>["content"][number];

export function toProviderPrompt(request: Pick<ModelRequest, "system" | "messages" | "apiFormat">): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Prompt = request.system === undefined ? [] : [{ role: "system", content: request.system }];
  for (const message of request.messages) {
    const converted = convertedMessage(message, request.apiFormat);
    const last = prompt.at(-1);
    // Consecutive tool messages merge into a new message: the converted ones are shared between calls.
    if (converted.role === "tool" && last?.role === "tool") prompt[prompt.length - 1] = { role: "tool", content: [...last.content, ...converted.content] };
    else prompt.push(converted);
  }
  return prompt;
}

/**
 * A conversation's messages are the same objects from one call to the next (the worker's conversation
 * cache renders each once), so each is converted once per wire format: a long conversation costs a
 * lookup per message, not a rebuild. The converted message is frozen, since later calls share it.
 */
const converted = new Map<ModelApiFormat, WeakMap<ModelMessage, LanguageModelV3Message>>();

function convertedMessage(message: ModelMessage, format: ModelApiFormat): LanguageModelV3Message {
  let byMessage = converted.get(format);
  if (!byMessage) converted.set(format, (byMessage = new WeakMap()));
  let result = byMessage.get(message);
  if (!result) {
    result = Object.freeze(convertMessage(message, format));
    Object.freeze(result.content);
    byMessage.set(message, result);
  }
  return result;
}

function convertMessage(message: ModelMessage, format: ModelApiFormat): LanguageModelV3Message {
  switch (message.role) {
    case "user":
      return {
        role: "user",
        content: typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content.map(toUserPart).filter(notEmptyText),
      };
    case "assistant":
      return {
        role: "assistant",
        content: message.content.filter((part) => part.type !== "text" || part.text !== "" || part.providerReplay !== undefined).map((part) => toAssistantPart(part, format)),
      };
    case "tool":
      return { role: "tool", content: message.content.map(toToolResultPart) };
  }
}

/** Tools without anything to run: the model's calls are reported, never executed by the SDK. */
export function toProviderTools(specs: ToolSpec[]): LanguageModelV3FunctionTool[] {
  return specs.map((spec) => ({ type: "function", name: spec.name, description: spec.description, inputSchema: spec.inputSchema }));
}

function notEmptyText(part: UserPart): boolean {
  return part.type !== "text" || part.text !== "";
}

function toUserPart(part: UserContentPart): UserPart {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text };
    case "image":
      return { type: "file", data: mediaData(part.source), mediaType: part.mediaType };
    case "file":
      return { type: "file", data: mediaData(part.source), mediaType: part.mediaType, ...(part.filename === undefined ? {} : { filename: part.filename }) };
  }
}

/** Media URLs go to the provider as they are; svc never fetches a user-supplied URL. */
function mediaData(source: MediaSource): Uint8Array | URL {
  return "data" in source ? source.data : new URL(source.url);
}

function toAssistantPart(part: AssistantContentPart, format: ModelApiFormat): AssistantPart {
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
 * item id alone points at nothing and the API rejects the request. Such parts go without replay (the
 * provider package then leaves them out).
 */
function replayFor(part: AssistantContentPart, format: ModelApiFormat): SharedV3ProviderOptions | undefined {
  const replay = part.providerReplay;
  if (replay === undefined) return undefined;
  if (format === "openai-responses" && part.type === "reasoning" && typeof replay["openai"]?.["reasoningEncryptedContent"] !== "string") {
    return undefined;
  }
  return replay;
}

function toToolResultPart(part: ToolResultPart): ToolPart {
  return {
    type: "tool-result",
    toolCallId: part.toolCallId,
    toolName: part.name,
    output: part.outcome === "succeeded" ? { type: "text", value: part.content } : { type: "error-text", value: part.content },
  };
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
export function providerOptionsFor(request: ModelRequest, warnings: string[]): SharedV3ProviderOptions {
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
export function toReplay(metadata: SharedV3ProviderMetadata | undefined): ProviderReplay | undefined {
  if (metadata === undefined || Object.keys(metadata).length === 0) return undefined;
  return JSON.parse(JSON.stringify(metadata)) as ProviderReplay;
}
