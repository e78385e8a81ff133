import { argumentPieces, FAKE_CREATED_AT, pad, textPieces } from "./chunks.js";
import type { ResolvedTurn, WireEvent, WireFormat } from "./types.js";

/** OpenAI Chat Completions (`POST /v1/chat/completions`). Chat has no reasoning on the wire: it is dropped. */
export const openaiChat: WireFormat = {
  stream(turn) {
    const refusal = turn.stopReason === "refusal";
    const base = { id: `chatcmpl-fake${pad(turn.sequence)}`, object: "chat.completion.chunk", created: FAKE_CREATED_AT, model: turn.model, system_fingerprint: "fp_fake", service_tier: "default" };
    const usageField = turn.includeUsageInStream ? { usage: null } : {};
    const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): WireEvent => ({
      data: { ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], ...usageField },
    });
    const events: WireEvent[] = [];
    const first = turn.toolCalls[0];
    if (turn.text !== "" || first === undefined) {
      events.push(chunk({ role: "assistant", content: "", refusal: null }));
      for (const piece of textPieces(turn.text)) events.push(chunk(refusal ? { refusal: piece } : { content: piece }));
    }
    turn.toolCalls.forEach((call, index) => {
      const opening = { index, id: call.id, type: "function", function: { name: call.name, arguments: "" } };
      events.push(chunk(index === 0 && turn.text === "" ? { role: "assistant", content: null, tool_calls: [opening], refusal: null } : { tool_calls: [opening] }));
      for (const piece of argumentPieces(call.arguments)) events.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    });
    if (turn.streamError) {
      events.push({ data: { error: { message: turn.streamError.message, type: turn.streamError.type ?? "server_error", param: null, code: null } } });
      return events;
    }
    events.push(chunk({}, finishReason(turn)));
    if (turn.includeUsageInStream) events.push({ data: { ...base, choices: [], usage: usage(turn) } });
    events.push({ data: "[DONE]" });
    return events;
  },

  json(turn) {
    const refusal = turn.stopReason === "refusal";
    const message: Record<string, unknown> = {
      role: "assistant",
      content: refusal || turn.text === "" ? null : turn.text,
      refusal: refusal ? turn.text : null,
      annotations: [],
    };
    if (turn.toolCalls.length > 0) {
      message["tool_calls"] = turn.toolCalls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } }));
    }
    return {
      id: `chatcmpl-fake${pad(turn.sequence)}`,
      object: "chat.completion",
      created: FAKE_CREATED_AT,
      model: turn.model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(turn) }],
      usage: usage(turn),
      service_tier: "default",
      system_fingerprint: "fp_fake",
    };
  },

  errorBody(status, message) {
    const [type, code] = OPENAI_ERRORS[status] ?? (status >= 500 ? ["server_error", null] : ["invalid_request_error", null]);
    return { error: { message, type, param: null, code } };
  },
};

/** Shared with the Responses API, which uses the same error envelope. */
export const OPENAI_ERRORS: Record<number, [string, string | null]> = {
  400: ["invalid_request_error", null],
  401: ["invalid_request_error", "invalid_api_key"],
  403: ["invalid_request_error", "unsupported_country_region_territory"],
  404: ["invalid_request_error", "model_not_found"],
  429: ["requests", "rate_limit_exceeded"],
  500: ["server_error", null],
  503: ["server_error", "service_unavailable"],
};

function finishReason(turn: ResolvedTurn): string {
  switch (turn.stopReason) {
    case "tool_use":
      return "tool_calls";
    case "max_tokens":
      return "length";
    case "content_filter":
      return "content_filter";
    case "refusal":
    case "end_turn":
      return "stop";
  }
}

function usage(turn: ResolvedTurn) {
  const { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, reasoningTokens } = turn.usage;
  return {
    prompt_tokens: inputTokens,
    completion_tokens: outputTokens,
    total_tokens: inputTokens + outputTokens,
    prompt_tokens_details: { cached_tokens: cacheReadTokens, audio_tokens: 0, ...(cacheWriteTokens > 0 ? { cache_write_tokens: cacheWriteTokens } : {}) },
    completion_tokens_details: { reasoning_tokens: reasoningTokens, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}
