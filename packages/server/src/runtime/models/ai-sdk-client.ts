import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import type { LanguageModelV3, LanguageModelV3FinishReason, LanguageModelV3Usage, SharedV3Warning } from "@ai-sdk/provider";
import { classifyError } from "./errors.js";
import { providerOptionsFor, toProviderPrompt, toProviderTools } from "./messages.js";
import { mapStopReason } from "./stop-reasons.js";
import { StreamCollector } from "./stream-collector.js";
import {
  ModelError,
  type ModelApiFormat,
  type ModelClient,
  type ModelDelta,
  type ModelRequest,
  type ModelResult,
  type ModelUsage,
} from "./types.js";

export interface ModelClientOptions {
  /** Transport override (tests, proxies). Defaults to the global fetch. */
  fetch?: typeof fetch;
  /**
   * How long the provider may take to answer with its response headers; unset leaves only the call's
   * whole deadline (`timeoutMs`). A retryable `timeout` when it passes.
   */
  responseTimeoutMs?: number;
}

export const DEFAULT_ENDPOINT_PATHS: Record<ModelApiFormat, string> = {
  "openai-responses": "/responses",
  "openai-chat-completions": "/chat/completions",
  "anthropic-messages": "/messages",
};

/**
 * The SDK-backed `ModelClient`: one `doStream` call of the provider package's model per call (the AI SDK's
 * provider interface, below `streamText`, whose per-call validation of the whole conversation grew with
 * its length). Nothing retries here: retries are durable and belong to the agent loop. Auth and the endpoint path are applied in a fetch wrapper, so nothing is
 * read from OPENAI_* / ANTHROPIC_* environment variables and tenant credentials never mix.
 */
export function createModelClient(options: ModelClientOptions = {}): ModelClient {
  const transport = options.fetch ?? globalThis.fetch;
  return { stream: (request, onDelta) => streamModel(request, onDelta, transport, options.responseTimeoutMs) };
}

async function streamModel(request: ModelRequest, onDelta: (delta: ModelDelta) => void, transport: typeof fetch, responseTimeoutMs: number | undefined): Promise<ModelResult> {
  if (request.signal?.aborted) throw canceled(request.signal.reason);
  const deadline = AbortSignal.timeout(request.timeoutMs);
  const stopper = new AbortController();
  const unanswered = new AbortController();
  const signal = AbortSignal.any([...(request.signal ? [request.signal] : []), deadline, stopper.signal, unanswered.signal]);
  const answerWithin = responseTimeoutMs !== undefined && responseTimeoutMs < request.timeoutMs ? { ms: responseTimeoutMs, unanswered } : undefined;

  let callerError: { error: unknown } | undefined;
  const collector = new StreamCollector((delta) => {
    if (callerError) return;
    try {
      onDelta(delta);
    } catch (error) {
      callerError = { error };
      stopper.abort(error);
    }
  });
  const warnings: string[] = [];
  let failure: unknown;
  let finish: { reason: LanguageModelV3FinishReason; usage: LanguageModelV3Usage } | undefined;
  let response: { id?: string; modelId?: string } = {};

  try {
    const tools = toProviderTools(request.tools);
    const { stream } = await languageModel(request, answerWithin ? answeredWithin(transport, answerWithin.ms, unanswered) : transport).doStream({
      prompt: toProviderPrompt(request),
      ...(tools.length === 0 ? {} : { tools, toolChoice: { type: "auto" } }),
      ...(request.maxOutputTokens === undefined ? {} : { maxOutputTokens: request.maxOutputTokens }),
      providerOptions: providerOptionsFor(request, warnings),
      abortSignal: signal,
    });
    const reader = stream.getReader();
    try {
      for (let next = await reader.read(); !next.done; next = await reader.read()) {
        const part = next.value;
        switch (part.type) {
          case "stream-start":
            warnings.push(...part.warnings.map(formatWarning));
            break;
          case "response-metadata":
            response = { ...response, ...(part.id === undefined ? {} : { id: part.id }), ...(part.modelId === undefined ? {} : { modelId: part.modelId }) };
            break;
          case "text-start":
          case "reasoning-start":
            collector.contentStart(part.type === "text-start" ? "text" : "reasoning", part.id, part.providerMetadata);
            break;
          case "text-delta":
          case "reasoning-delta":
            collector.contentDelta(part.type === "text-delta" ? "text" : "reasoning", part.id, part.delta, part.providerMetadata);
            break;
          case "text-end":
          case "reasoning-end":
            collector.contentEnd(part.type === "text-end" ? "text" : "reasoning", part.id, part.providerMetadata);
            break;
          case "tool-input-start":
            collector.toolInputStart(part.id, part.toolName);
            break;
          case "tool-input-delta":
            collector.toolInputDelta(part.id, part.delta);
            break;
          case "tool-input-end":
            collector.toolInputEnd(part.id);
            break;
          case "tool-call":
            collector.toolCall(part);
            break;
          case "finish":
            finish = { reason: part.finishReason, usage: part.usage };
            break;
          case "error":
            failure = part.error;
            break;
          default:
            break;
        }
        if (failure !== undefined || callerError) break;
      }
    } finally {
      // Stops the provider's response when the loop ended early; a no-op after the last part.
      await reader.cancel().catch(() => {});
    }
  } catch (error) {
    failure ??= error;
  }

  if (callerError) throw callerError.error;
  if (request.signal?.aborted) throw canceled(request.signal.reason);
  if (unanswered.signal.aborted) throw unansweredWithin(answerWithin!.ms);
  if (deadline.aborted) throw timedOut(request.timeoutMs);
  if (failure !== undefined) throw classifyError(failure);
  if (finish === undefined) {
    throw new ModelError({ kind: "invalid_response", message: "the provider stream ended before the response was complete", retryable: true });
  }
  const stopReason = mapStopReason(finish.reason.unified, finish.reason.raw);
  return {
    parts: collector.finish(),
    stopReason,
    usage: toUsage(finish.usage),
    ...(response.id === undefined ? {} : { providerResponseId: response.id }),
    ...(response.modelId === undefined ? {} : { servedModel: response.modelId }),
    warnings,
  };
}

function languageModel(request: ModelRequest, transport: typeof fetch): LanguageModelV3 {
  const baseURL = request.baseUrl.replace(/\/+$/, "");
  // Auth headers are set by `wireFetch`; the placeholder keeps the SDK from reading env variables.
  const settings = { baseURL, apiKey: "svc-sets-auth-per-request", fetch: wireFetch(request, baseURL, transport) };
  switch (request.apiFormat) {
    case "openai-responses":
      return createOpenAI(settings).responses(request.model);
    case "openai-chat-completions":
      return createOpenAI(settings).chat(request.model);
    case "anthropic-messages":
      return createAnthropic(settings).messages(request.model);
  }
}

/** Applies the configured auth (and nothing else) and sends the SDK's default path to `endpointPath`. */
function wireFetch(request: ModelRequest, baseURL: string, transport: typeof fetch): typeof fetch {
  const defaultUrl = baseURL + DEFAULT_ENDPOINT_PATHS[request.apiFormat];
  const targetUrl = baseURL + (request.endpointPath ?? DEFAULT_ENDPOINT_PATHS[request.apiFormat]);
  return (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    headers.delete("authorization");
    headers.delete("x-api-key");
    if (request.auth.kind === "bearer_token") headers.set("authorization", `Bearer ${request.credential}`);
    else headers.set(request.auth.headerName, request.credential);
    return transport(url === defaultUrl ? targetUrl : url, { ...init, headers });
  };
}

function toUsage(usage: LanguageModelV3Usage): ModelUsage {
  return {
    inputTokens: usage.inputTokens.total ?? 0,
    outputTokens: usage.outputTokens.total ?? 0,
    cacheReadTokens: usage.inputTokens.cacheRead ?? 0,
    cacheWriteTokens: usage.inputTokens.cacheWrite ?? 0,
    reasoningTokens: usage.outputTokens.reasoning ?? 0,
  };
}

function formatWarning(warning: SharedV3Warning): string {
  switch (warning.type) {
    case "unsupported":
    case "compatibility":
      return `${warning.type} ${warning.feature}${warning.details ? `: ${warning.details}` : ""}`;
    case "other":
      return warning.message;
  }
}

function canceled(reason: unknown): ModelError {
  return new ModelError({ kind: "canceled", message: "the model call was canceled", retryable: false, cause: reason });
}

/** The transport, aborting the call through `unanswered` when a request's response headers take longer than `ms`. */
function answeredWithin(transport: typeof fetch, ms: number, unanswered: AbortController): typeof fetch {
  return async (input, init) => {
    const timer = setTimeout(() => unanswered.abort(new Error("the provider did not answer in time")), ms);
    try {
      return await transport(input, init);
    } finally {
      clearTimeout(timer);
    }
  };
}

function unansweredWithin(ms: number): ModelError {
  return new ModelError({ kind: "timeout", message: `the provider did not start answering within ${ms} ms (SVC_MODEL_RESPONSE_TIMEOUT_MS)`, retryable: true });
}

function timedOut(timeoutMs: number): ModelError {
  return new ModelError({ kind: "timeout", message: `the model call did not finish within ${timeoutMs} ms`, retryable: true });
}
