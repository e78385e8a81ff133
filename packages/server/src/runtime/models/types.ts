/**
 * The one interface the agent loop uses to call a model (DESIGN.md rule 8). Nothing here depends on the
 * AI SDK: the loop builds a `ModelRequest`, receives normalized `ModelDelta`s while the model streams, and
 * gets a `ModelResult` or a classified `ModelError`. Retries are the caller's business (durable `retry_at`
 * rows); a client never retries on its own.
 */

export type ModelApiFormat = "openai-responses" | "openai-chat-completions" | "anthropic-messages";

export type ModelAuth = { kind: "bearer_token" } | { kind: "api_key_header"; headerName: string };

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/**
 * Opaque provider data that must travel back with a part on the next call for the provider to accept or
 * reuse it: an Anthropic thinking signature, an OpenAI reasoning item id and its encrypted content, item
 * ids of messages and function calls. Keyed by provider namespace (`anthropic`, `openai`). Store it as
 * JSON next to the part, and send it back only to the same provider config, model and API format.
 */
export type ProviderReplay = Record<string, JsonObject>;

/** Media given inline (`data`) or by URL. URLs are passed to the provider as they are, never fetched by svc. */
export type MediaSource = { data: Uint8Array } | { url: string };

export type UserContentPart =
  | { type: "text"; text: string }
  | { type: "image"; mediaType: string; source: MediaSource }
  | { type: "file"; mediaType: string; filename?: string; source: MediaSource };

export type AssistantContentPart =
  | { type: "text"; text: string; providerReplay?: ProviderReplay }
  | { type: "reasoning"; text: string; providerReplay?: ProviderReplay }
  /** `id` is the provider's call id, the one the matching tool result refers to. */
  | { type: "tool_call"; id: string; name: string; input: JsonObject; providerReplay?: ProviderReplay };

export type ToolOutcome = "succeeded" | "failed" | "denied" | "canceled";

export interface ToolResultPart {
  type: "tool_result";
  toolCallId: string;
  name: string;
  /** Anything but `succeeded` is sent as an error result (Anthropic `is_error: true`). */
  outcome: ToolOutcome;
  content: string;
}

export type ModelMessage =
  | { role: "user"; content: string | UserContentPart[] }
  | { role: "assistant"; content: AssistantContentPart[] }
  | { role: "tool"; content: ToolResultPart[] };

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the input object (`{"type":"object",...}`). */
  inputSchema: JsonObject;
}

export interface ModelRequest {
  apiFormat: ModelApiFormat;
  /** No trailing slash, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  /** Path under `baseUrl`; defaults to `/responses`, `/chat/completions` or `/messages` by format. */
  endpointPath?: string;
  auth: ModelAuth;
  credential: string;
  model: string;
  system?: string;
  messages: ModelMessage[];
  tools: ToolSpec[];
  maxOutputTokens?: number;
  /**
   * `none` turns reasoning off where the API can; `minimal`…`max` ask for reasoning. Pass it only for
   * models configured with `supports_reasoning`: svc's model config decides, not the SDK's model-id guess.
   */
  reasoningEffort?: string;
  /** Whole-call deadline (headers and body). */
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * Normalized stream events, in wire order. `blockIndex` counts the blocks of this response from 0 and
 * matches the public delta vocabulary (block_start / *_delta / block_stop). Text and thinking blocks may
 * be interleaved with tool_use blocks; every started block is stopped before the call resolves.
 */
export type ModelDelta =
  | { kind: "block_start"; blockIndex: number; block: { kind: "text" } | { kind: "thinking" } }
  | { kind: "text_delta"; blockIndex: number; delta: string }
  | { kind: "thinking_delta"; blockIndex: number; delta: string }
  | { kind: "tool_call_start"; blockIndex: number; toolCallId: string; toolName: string }
  | { kind: "tool_arguments_delta"; blockIndex: number; toolCallId: string; delta: string }
  | { kind: "block_stop"; blockIndex: number };

export type ModelResultPart =
  | { type: "text"; text: string; providerReplay?: ProviderReplay }
  | { type: "reasoning"; text: string; providerReplay?: ProviderReplay }
  | { type: "tool_call"; providerCallId: string; name: string; input: JsonObject; providerReplay?: ProviderReplay };

/** `error` is never returned by a client (failures reject); the loop persists it for terminal failures. */
export type ModelStopReason = "end_turn" | "tool_use" | "max_tokens" | "refusal" | "content_filter" | "error";

/**
 * Token counts as the provider reported them (0 when it reported nothing). `inputTokens` is the whole
 * prompt, cached parts included; uncached = inputTokens - cacheReadTokens - cacheWriteTokens.
 * `outputTokens` includes `reasoningTokens`.
 */
export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
}

export interface ModelResult {
  parts: ModelResultPart[];
  stopReason: Exclude<ModelStopReason, "error">;
  usage: ModelUsage;
  providerResponseId?: string;
  servedModel?: string;
  /** Provider/SDK warnings about ignored settings (for logs). */
  warnings: string[];
}

export type ModelErrorKind =
  | "rate_limited"
  | "overloaded"
  | "server"
  | "timeout"
  | "network"
  | "context_overflow"
  | "invalid_request"
  | "auth"
  /** The SSRF guard refused the provider's address (SVC_ALLOW_PRIVATE_NETWORK); no attempt can reach it. */
  | "destination_refused"
  | "canceled"
  /** The provider answered 2xx but the answer is unusable (unparsable stream, tool input that is not a JSON object, unknown stop). */
  | "invalid_response";

export interface ModelErrorInit {
  kind: ModelErrorKind;
  message: string;
  retryable: boolean;
  retryAfterMs?: number;
  status?: number;
  /** Provider error code or type, e.g. `context_length_exceeded`, `overloaded_error`. */
  providerCode?: string;
  /** `x-request-id` / `request-id` response header, for support tickets. */
  providerRequestId?: string;
  cause?: unknown;
}

export class ModelError extends Error {
  override readonly name = "ModelError";
  readonly kind: ModelErrorKind;
  readonly retryable: boolean;
  readonly retryAfterMs?: number;
  readonly status?: number;
  readonly providerCode?: string;
  readonly providerRequestId?: string;

  constructor(init: ModelErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = init.kind;
    this.retryable = init.retryable;
    if (init.retryAfterMs !== undefined) this.retryAfterMs = init.retryAfterMs;
    if (init.status !== undefined) this.status = init.status;
    if (init.providerCode !== undefined) this.providerCode = init.providerCode;
    if (init.providerRequestId !== undefined) this.providerRequestId = init.providerRequestId;
  }
}

export interface ModelClient {
  /**
   * Calls the model once, streaming. `onDelta` is called synchronously for each normalized event. Rejects
   * only with `ModelError`, except that an exception thrown by `onDelta` itself aborts the call and is
   * rethrown unchanged (it is the caller's bug, not the provider's).
   */
  stream(request: ModelRequest, onDelta: (delta: ModelDelta) => void): Promise<ModelResult>;
}
