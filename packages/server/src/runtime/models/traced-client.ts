import { SpanKind } from "@opentelemetry/api";
import { inSpan } from "../../platform/tracing.js";
import type { ModelClient } from "./types.js";

/**
 * Each provider call as a `model.call` span, a child of the step that made it (docs/operations.md,
 * "Traces"). It names the model, the wire format, the stop reason and the token counts (OpenTelemetry's
 * `gen_ai.*` attributes); never the prompt, the answer, the endpoint's credential or the error's message.
 */
export function tracedModelClient(client: ModelClient): ModelClient {
  return {
    stream(request, onDelta) {
      const attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": request.model,
        "gen_ai.request.max_tokens": request.maxOutputTokens,
        "svc.model.api_format": request.apiFormat,
      };
      return inSpan("model.call", { kind: SpanKind.CLIENT, attributes }, async (span) => {
        const result = await client.stream(request, onDelta);
        span.setAttributes({
          "gen_ai.response.finish_reasons": [result.stopReason],
          "gen_ai.usage.input_tokens": result.usage.inputTokens,
          "gen_ai.usage.output_tokens": result.usage.outputTokens,
          ...(result.servedModel ? { "gen_ai.response.model": result.servedModel } : {}),
        });
        return result;
      });
    },
  };
}
