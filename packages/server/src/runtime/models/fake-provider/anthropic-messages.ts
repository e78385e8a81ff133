import { argumentPieces, fakeOpaque, pad, textPieces } from "./chunks.js";
import type { ResolvedTurn, WireEvent, WireFormat } from "./types.js";

/** Anthropic Messages (`POST /v1/messages`): thinking, text and tool_use content blocks. */
export const anthropicMessages: WireFormat = {
  stream(turn) {
    const event = (data: Record<string, unknown>): WireEvent => ({ event: String(data["type"]), data });
    const events: WireEvent[] = [
      event({
        type: "message_start",
        message: { ...envelope(turn), content: [], stop_reason: null, stop_sequence: null, usage: { ...inputUsage(turn), output_tokens: 1 } },
      }),
      event({ type: "ping" }),
    ];
    blocks(turn).forEach((block, index) => {
      switch (block.type) {
        case "thinking":
          events.push(event({ type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } }));
          for (const thinking of textPieces(block.thinking)) events.push(event({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking } }));
          events.push(event({ type: "content_block_delta", index, delta: { type: "signature_delta", signature: block.signature } }));
          break;
        case "text":
          events.push(event({ type: "content_block_start", index, content_block: { type: "text", text: "" } }));
          for (const text of textPieces(block.text)) events.push(event({ type: "content_block_delta", index, delta: { type: "text_delta", text } }));
          break;
        case "tool_use":
          events.push(event({ type: "content_block_start", index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } }));
          for (const partial_json of argumentPieces(typeof block.input === "string" ? block.input : JSON.stringify(block.input))) {
            events.push(event({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } }));
          }
          break;
      }
      events.push(event({ type: "content_block_stop", index }));
    });
    if (turn.streamError) {
      events.push(event({ type: "error", error: { type: turn.streamError.type ?? "overloaded_error", message: turn.streamError.message } }));
      return events;
    }
    events.push(
      event({ type: "message_delta", delta: { stop_reason: stopReason(turn), stop_sequence: null }, usage: outputUsage(turn) }),
      event({ type: "message_stop" }),
    );
    return events;
  },

  json(turn) {
    return {
      ...envelope(turn),
      content: blocks(turn),
      stop_reason: stopReason(turn),
      stop_sequence: null,
      usage: { ...inputUsage(turn), ...outputUsage(turn) },
    };
  },

  errorBody(status, message) {
    return { type: "error", error: { type: ANTHROPIC_ERRORS[status] ?? (status >= 500 ? "api_error" : "invalid_request_error"), message } };
  },
};

const ANTHROPIC_ERRORS: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

type Block =
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown };

function blocks(turn: ResolvedTurn): Block[] {
  const result: Block[] = [];
  if (turn.reasoning !== "") result.push({ type: "thinking", thinking: turn.reasoning, signature: fakeOpaque("fake-signature:", turn.reasoning) });
  if (turn.text !== "") result.push({ type: "text", text: turn.text });
  for (const call of turn.toolCalls) result.push({ type: "tool_use", id: call.id, name: call.name, input: parseArguments(call.arguments) });
  return result;
}

/** Anthropic sends input as an object; malformed scripted arguments go out as a string (also malformed). */
function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function envelope(turn: ResolvedTurn) {
  return { id: `msg_fake${pad(turn.sequence)}`, type: "message", role: "assistant", model: turn.model };
}

/** Anthropic counts uncached input in `input_tokens`; cache reads and writes are separate. */
function inputUsage(turn: ResolvedTurn) {
  const { inputTokens, cacheReadTokens, cacheWriteTokens } = turn.usage;
  return {
    input_tokens: Math.max(0, inputTokens - cacheReadTokens - cacheWriteTokens),
    cache_creation_input_tokens: cacheWriteTokens,
    cache_read_input_tokens: cacheReadTokens,
  };
}

function outputUsage(turn: ResolvedTurn) {
  const { outputTokens, reasoningTokens } = turn.usage;
  return { output_tokens: outputTokens, ...(reasoningTokens > 0 ? { output_tokens_details: { thinking_tokens: reasoningTokens } } : {}) };
}

/** Anthropic has no content filter stop: a filtered answer is a refusal. */
function stopReason(turn: ResolvedTurn): string {
  return turn.stopReason === "content_filter" ? "refusal" : turn.stopReason;
}
