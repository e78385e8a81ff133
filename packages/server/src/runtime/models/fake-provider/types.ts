export type FakeFormat = "openai-chat-completions" | "openai-responses" | "anthropic-messages";

export type FakeStopReason = "end_turn" | "tool_use" | "max_tokens" | "refusal" | "content_filter";

/** svc-normalized token counts; each format writes them in its own shape (Anthropic's input excludes cache). */
export interface FakeUsage {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
}

export interface FakeToolCall {
  name: string;
  input: Record<string, unknown>;
  id?: string;
  /** Raw argument text sent instead of `JSON.stringify(input)`, to simulate malformed tool input. */
  rawArguments?: string;
}

/** One scripted answer, consumed by the next model request. */
export interface FakeReply {
  text?: string;
  /** Thinking (Anthropic) or a reasoning summary (Responses). Chat completions has no reasoning on the wire. */
  reasoning?: string;
  toolCalls?: FakeToolCall[];
  /** Defaults to `tool_use` with tool calls, else `end_turn`. `refusal` sends `text` as refusal content. */
  stopReason?: FakeStopReason;
  usage?: FakeUsage;
  /** Answer with this HTTP error instead. Default bodies follow each provider's error shape. */
  error?: { status: number; message?: string; body?: unknown; headers?: Record<string, string> };
  /** Streaming only: after the content, send the format's error event and end the stream. */
  streamError?: { message: string; type?: string };
  /** Wait before sending headers. */
  delayMs?: number;
  /** Wait between stream events. */
  chunkDelayMs?: number;
  /** `true`/`before_headers`: never answer. `mid_stream`: send headers and the first half of the events, then stall. */
  hang?: boolean | "before_headers" | "mid_stream";
  /** Model name reported back (default: the requested model). */
  model?: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** Parsed JSON body, or the raw text when it is not JSON. */
  body: unknown;
  format?: FakeFormat;
}

/** A reply with every default resolved, ready to be written in a wire format. */
export interface ResolvedTurn {
  sequence: number;
  model: string;
  text: string;
  reasoning: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  stopReason: FakeStopReason;
  usage: Required<FakeUsage>;
  streamError?: { message: string; type?: string };
  includeEncryptedReasoning: boolean;
  includeUsageInStream: boolean;
}

export interface WireEvent {
  /** SSE `event:` name (Responses and Anthropic send one; chat completions does not). */
  event?: string;
  /** JSON payload, or a literal string such as `[DONE]`. */
  data: unknown;
}

export interface WireFormat {
  stream(turn: ResolvedTurn): WireEvent[];
  json(turn: ResolvedTurn): unknown;
  errorBody(status: number, message: string): unknown;
}
