import type { FakeFormat, FakeReply } from "./types.js";

/** What the deterministic default answer needs from a request: the last user text, or trailing tool results. */
export interface Conversation {
  lastUserText: string;
  /** Non-empty when the conversation ends with tool results (the model's turn after tools ran). */
  toolResults: Array<{ name: string; content: string }>;
}

/**
 * The answer when nothing is scripted:
 * - after tool results: `tool <name> said: <result>` (one line per result);
 * - `call tool <name> <json object>` in the last user text: that tool call;
 * - otherwise `echo: <last user text>`.
 */
export function defaultReply(conversation: Conversation): FakeReply {
  if (conversation.toolResults.length > 0) {
    return { text: conversation.toolResults.map((result) => `tool ${result.name} said: ${result.content}`).join("\n") };
  }
  const match = /call tool (\S+)(?:\s+([\s\S]*))?$/.exec(conversation.lastUserText);
  if (match?.[1] !== undefined) {
    const input = parseObject(match[2]?.trim() || "{}");
    if (input !== undefined) return { toolCalls: [{ name: match[1], input }] };
  }
  return { text: `echo: ${conversation.lastUserText}` };
}

export function readConversation(format: FakeFormat, body: unknown): Conversation {
  const request = asRecord(body) ?? {};
  switch (format) {
    case "openai-chat-completions":
      return readChat(asArray(request["messages"]));
    case "openai-responses":
      return readResponses(typeof request["input"] === "string" ? [{ role: "user", content: request["input"] }] : asArray(request["input"]));
    case "anthropic-messages":
      return readAnthropic(asArray(request["messages"]));
  }
}

function readChat(messages: Record<string, unknown>[]): Conversation {
  const names = new Map<string, string>();
  for (const message of messages) {
    for (const call of asArray(message["tool_calls"])) {
      const fn = asRecord(call["function"]);
      if (typeof call["id"] === "string" && typeof fn?.["name"] === "string") names.set(call["id"], fn["name"]);
    }
  }
  const toolResults: Conversation["toolResults"] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]?.["role"] === "tool"; i--) {
    const message = messages[i] ?? {};
    toolResults.unshift({ name: names.get(String(message["tool_call_id"])) ?? "unknown", content: textOf(message["content"]) });
  }
  const lastUser = [...messages].reverse().find((message) => message["role"] === "user");
  return { lastUserText: textOf(lastUser?.["content"]), toolResults };
}

function readResponses(items: Record<string, unknown>[]): Conversation {
  const names = new Map<string, string>();
  for (const item of items) {
    if (item["type"] === "function_call" && typeof item["call_id"] === "string") names.set(item["call_id"], String(item["name"]));
  }
  const toolResults: Conversation["toolResults"] = [];
  for (let i = items.length - 1; i >= 0 && items[i]?.["type"] === "function_call_output"; i--) {
    const item = items[i] ?? {};
    toolResults.unshift({ name: names.get(String(item["call_id"])) ?? "unknown", content: textOf(item["output"]) });
  }
  const lastUser = [...items].reverse().find((item) => item["role"] === "user");
  return { lastUserText: textOf(lastUser?.["content"]), toolResults };
}

function readAnthropic(messages: Record<string, unknown>[]): Conversation {
  const names = new Map<string, string>();
  for (const message of messages) {
    for (const block of asArray(message["content"])) {
      if (block["type"] === "tool_use" && typeof block["id"] === "string") names.set(block["id"], String(block["name"]));
    }
  }
  const last = messages[messages.length - 1];
  const results = last?.["role"] === "user" ? asArray(last["content"]).filter((block) => block["type"] === "tool_result") : [];
  const toolResults = results.map((block) => ({ name: names.get(String(block["tool_use_id"])) ?? "unknown", content: textOf(block["content"]) }));
  const lastUser = [...messages].reverse().find((message) => message["role"] === "user" && textOf(message["content"]) !== "");
  return { lastUserText: textOf(lastUser?.["content"]), toolResults };
}

/** A string, or the text parts of a content array (`text`, `input_text`, `output_text`). */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return asArray(content)
    .filter((part) => typeof part["text"] === "string" && part["type"] !== "tool_result")
    .map((part) => String(part["text"]))
    .join("");
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return asRecord(value) && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined;
}

function asArray(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.map((item) => asRecord(item) ?? {}) : [];
}
