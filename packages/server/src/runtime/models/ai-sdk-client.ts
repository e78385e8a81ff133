import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { streamText, type CallWarning, type LanguageModel, type LanguageModelUsage } from "ai";
import { classifyError } from "./errors.js";
import { providerOptionsFor, toSdkMessages, toSdkTools } from "./messages.js";
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
}

export const DEFAULT_ENDPOINT_PATHS: Record<ModelApiFormat, string> = {
  "openai-responses": "/responses",
  "openai-chat-completions": "/chat/completions",
  "anthropic-messages": "/messages",
};

/**
 * The SDK-backed `ModelClient`. One `streamText` step per call with `maxRetries: 0`: retries are durable
 * and belong to the agent loop. Auth and the endpoint path are applied in a fetch wrapper, so nothing is
 * read from OPENAI_* / ANTHROPIC_* environment variables and tenant credentials never mix.
 */
export function createModelClient(options: ModelClientOptions = {}): ModelClient {
  // The SDK prints warnings with console.warn unless told otherwise; svc returns them in the result.
  if (globalThis.AI_SDK_LOG_WARNINGS === undefined) globalThis.AI_SDK_LOG_WARNINGS = false;
  const transport = options.fetch ?? globalThis.fetch;
  return { stream: (request, onDelta) => streamModel(request, onDelta, transport) };
}

async function streamModel(request: ModelRequest, onDelta: (delta: ModelDelta) => void, transport: typeof fetch): Promise<ModelResult> {
  if (request.signal?.aborted) throw canceled(request.signal.reason);
  const deadline = AbortSignal.timeout(request.timeoutMs);
  const stopper = new AbortController();
  const signal = AbortSignal.any(request.signal ? [request.signal, deadline, stopper.signal] : [deadline, stopper.signal]);

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
  let finish: { reason: Parameters<typeof mapStopReason>[0]; raw: string | undefined; usage: LanguageModelUsage } | undefined;
  let response: { id?: string; modelId?: string } = {};

  try {
    const result = streamText({
      model: languageModel(request, transport),
      ...(request.system === undefined ? {} : { system: request.system }),
      messages: toSdkMessages(request.messages, request.apiFormat),
      ...(request.tools.length === 0 ? {} : { tools: toSdkTools(request.tools) }),
      ...(request.maxOutputTokens === undefined ? {} : { maxOutputTokens: request.maxOutputTokens }),
      providerOptions: providerOptionsFor(request, warnings),
      maxRetries: 0,
      abortSignal: signal,
      // Media URLs go to the provider untouched; svc's server never fetches user-supplied URLs.
      experimental_download: async (files) => files.map(() => null),
      experimental_include: { requestBody: false },
      onError: () => {},
    });
    for await (const part of result.fullStream) {
      if (callerError) break;
      switch (part.type) {
        case "start-step":
          warnings.push(...part.warnings.map(formatWarning));
          break;
        case "text-start":
        case "reasoning-start":
          collector.contentStart(part.type === "text-start" ? "text" : "reasoning", part.id, part.providerMetadata);
          break;
        case "text-delta":
        case "reasoning-delta":
          collector.contentDelta(part.type === "text-delta" ? "text" : "reasoning", part.id, part.text, part.providerMetadata);
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
        case "finish-step":
          response = { id: part.response.id, modelId: part.response.modelId };
          break;
        case "finish":
          finish = { reason: part.finishReason, raw: part.rawFinishReason, usage: part.totalUsage };
          break;
        case "error":
          failure = part.error;
          break;
        default:
          break;
      }
      if (failure !== undefined) break;
    }
  } catch (error) {
    failure ??= error;
  }

  if (callerError) throw callerError.error;
  if (request.signal?.aborted) throw canceled(request.signal.reason);
  if (deadline.aborted) throw timedOut(request.timeoutMs);
  if (failure !== undefined) throw classifyError(failure);
  if (finish === undefined) {
    throw new ModelError({ kind: "invalid_response", message: "the provider stream ended before the response was complete", retryable: true });
  }
  const stopReason = mapStopReason(finish.reason, finish.raw);
  return {
    parts: collector.finish(),
    stopReason,
    usage: toUsage(finish.usage),
    ...(response.id === undefined ? {} : { providerResponseId: response.id }),
    ...(response.modelId === undefined ? {} : { servedModel: response.modelId }),
    warnings,
  };
}

function languageModel(request: ModelRequest, transport: typeof fetch): LanguageModel {
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

function toUsage(usage: LanguageModelUsage): ModelUsage {
  return {
    inputTokens: usage.inputTokens ?? 0,
    outputTokens: usage.outputTokens ?? 0,
    cacheReadTokens: usage.inputTokenDetails.cacheReadTokens ?? 0,
    cacheWriteTokens: usage.inputTokenDetails.cacheWriteTokens ?? 0,
    reasoningTokens: usage.outputTokenDetails.reasoningTokens ?? 0,
  };
}

function formatWarning(warning: CallWarning): string {
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

function timedOut(timeoutMs: number): ModelError {
  return new ModelError({ kind: "timeout", message: `the model call did not finish within ${timeoutMs} ms`, retryable: true });
}
