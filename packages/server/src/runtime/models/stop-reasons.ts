import type { FinishReason } from "ai";
import { ModelError, type ModelResult } from "./types.js";

/**
 * Maps the SDK's unified finish reason plus the provider's raw value to a persisted stop reason. Stops the
 * loop cannot record as an answer (context window exhausted, unknown or error) become a `ModelError`, so
 * they take the failure path (reference design-brief.md §3.4 step 8).
 *
 * Refusals: Anthropic says `refusal` (the SDK folds it into `content-filter`); OpenAI sends refusal text
 * with a normal finish, which the SDK also reports as `content-filter` while the raw reason stays `stop`
 * (chat) or absent (responses). A real OpenAI content filter keeps the raw `content_filter`.
 */
export function mapStopReason(finishReason: FinishReason, raw: string | undefined): ModelResult["stopReason"] {
  if (raw === "model_context_window_exceeded") {
    throw new ModelError({
      kind: "context_overflow",
      message: "the model stopped because the context window is full",
      retryable: false,
      providerCode: raw,
    });
  }
  switch (finishReason) {
    case "stop":
      return "end_turn";
    case "tool-calls":
      return "tool_use";
    case "length":
      return "max_tokens";
    case "content-filter":
      return raw === "content_filter" ? "content_filter" : "refusal";
    case "error":
    case "other":
      throw new ModelError({
        kind: "invalid_response",
        message: `the provider ended the response with an unsupported stop reason (${raw ?? finishReason})`,
        retryable: true,
        ...(raw === undefined ? {} : { providerCode: raw }),
      });
  }
}
