import {
  APICallError,
  InvalidArgumentError,
  InvalidPromptError,
  InvalidResponseDataError,
  JSONParseError,
  NoOutputGeneratedError,
  RetryError,
  TypeValidationError,
  UnsupportedFunctionalityError,
} from "ai";
import { OutboundRefusedError } from "../../platform/net/outbound.js";
import { ModelError, type ModelErrorKind } from "./types.js";

/**
 * Turns whatever the SDK, fetch or the provider produced into a `ModelError`. The table:
 *   429 → rate_limited (retryable; OpenAI `insufficient_quota` → auth, not retryable)
 *   503, 529 → overloaded (retryable)        500, 502, 504, other 5xx, 409 → server (retryable)
 *   408 and timeouts → timeout (retryable)   connection failures → network (retryable)
 *   400 with a context-length message, 413 → context_overflow (not retryable: the loop compacts)
 *   401, 402, 403 → auth (not retryable)     other 4xx → invalid_request (not retryable)
 *   an address the SSRF guard refuses → destination_refused (not retryable; a name that does not resolve → network)
 * Aborts are classified by the caller, which knows whether its deadline or the caller's signal fired.
 */
export function classifyError(error: unknown): ModelError {
  if (error instanceof ModelError) return error;
  const refused = refusedDestination(error);
  if (refused) {
    // A name that did not resolve may resolve later; an address the policy refuses never will.
    return new ModelError({ kind: refused.transient ? "network" : "destination_refused", message: refused.message, retryable: refused.transient, cause: error });
  }
  // Not expected with maxRetries: 0, but never let a wrapper hide the provider's answer.
  if (RetryError.isInstance(error)) return classifyError(error.lastError);
  if (APICallError.isInstance(error)) return fromApiCallError(error);
  const streamError = asStreamError(error);
  if (streamError) return fromStatus(streamError.status, streamError.message, { code: streamError.code, cause: error });
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
    const timedOut = error.name === "TimeoutError";
    return new ModelError({
      kind: timedOut ? "timeout" : "canceled",
      message: timedOut ? "the model call timed out" : "the model call was canceled",
      retryable: timedOut,
      cause: error,
    });
  }
  if (
    InvalidPromptError.isInstance(error) ||
    InvalidArgumentError.isInstance(error) ||
    UnsupportedFunctionalityError.isInstance(error)
  ) {
    return new ModelError({ kind: "invalid_request", message: error.message, retryable: false, cause: error });
  }
  if (
    TypeValidationError.isInstance(error) ||
    JSONParseError.isInstance(error) ||
    InvalidResponseDataError.isInstance(error) ||
    NoOutputGeneratedError.isInstance(error)
  ) {
    return new ModelError({
      kind: "invalid_response",
      message: `the provider sent a response svc cannot read: ${error.message}`,
      retryable: true,
      cause: error,
    });
  }
  if (isNetworkError(error)) {
    return new ModelError({ kind: "network", message: `connection to the provider failed: ${messageOf(error)}`, retryable: true, cause: error });
  }
  return new ModelError({ kind: "server", message: messageOf(error), retryable: true, cause: error });
}

function fromApiCallError(error: APICallError): ModelError {
  const headers = lowerCaseKeys(error.responseHeaders ?? {});
  const requestId = headers["x-request-id"] ?? headers["request-id"];
  const details = providerErrorDetails(error.data, error.responseBody);
  const message = details.message ?? error.message;
  const retryAfterMs = parseRetryAfter(headers, Date.now());
  if (error.statusCode === undefined) {
    return new ModelError({
      kind: error.isRetryable ? "network" : "server",
      // The SDK says "Cannot connect to API: <the socket's error>"; the socket's error is what helps.
      message: error.isRetryable ? `connection to the provider failed: ${message.replace(/^Cannot connect to API: /, "")}` : message,
      retryable: true,
      ...(requestId === undefined ? {} : { providerRequestId: requestId }),
      cause: error,
    });
  }
  return fromStatus(error.statusCode, message, { code: details.code, retryAfterMs, requestId, cause: error });
}

interface StatusContext {
  code?: string | undefined;
  retryAfterMs?: number | undefined;
  requestId?: string | undefined;
  cause: unknown;
}

const CONTEXT_OVERFLOW =
  /context_length_exceeded|prompt is too long|maximum context length|context window|context length|exceeds the context|input is too long|too many (input )?tokens/i;

function fromStatus(status: number, message: string, context: StatusContext): ModelError {
  const [kind, retryable] = kindForStatus(status, message, context.code);
  return new ModelError({
    kind,
    message: message || `provider answered HTTP ${status}`,
    retryable,
    status,
    ...(context.retryAfterMs === undefined ? {} : { retryAfterMs: context.retryAfterMs }),
    ...(context.code === undefined ? {} : { providerCode: context.code }),
    ...(context.requestId === undefined ? {} : { providerRequestId: context.requestId }),
    cause: context.cause,
  });
}

function kindForStatus(status: number, message: string, code: string | undefined): [ModelErrorKind, boolean] {
  if (status === 429) return code === "insufficient_quota" ? ["auth", false] : ["rate_limited", true];
  if (status === 503 || status === 529) return ["overloaded", true];
  if (status >= 500 || status === 409) return ["server", true];
  if (status === 408) return ["timeout", true];
  if (status === 413) return ["context_overflow", false];
  if (status === 401 || status === 402 || status === 403) return ["auth", false];
  if (status === 400 && CONTEXT_OVERFLOW.test(`${code ?? ""} ${message}`)) return ["context_overflow", false];
  return ["invalid_request", false];
}

/** `retry-after-ms` (OpenAI), else `retry-after` in seconds or as an HTTP date. */
export function parseRetryAfter(headers: Record<string, string>, now: number): number | undefined {
  const ms = headers["retry-after-ms"];
  if (ms !== undefined && ms.trim() !== "") {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return Math.round(value);
  }
  const after = headers["retry-after"];
  if (after === undefined || after.trim() === "") return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.round(seconds * 1000) : undefined;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** OpenAI `{error:{message,type,code}}` and Anthropic `{type:"error",error:{type,message}}` bodies. */
function providerErrorDetails(data: unknown, body: string | undefined): { message?: string; code?: string } {
  let value = data;
  if (value === undefined && body !== undefined) {
    try {
      value = JSON.parse(body);
    } catch {
      return {};
    }
  }
  const inner = record(record(value)?.["error"]);
  if (!inner) return {};
  const message = typeof inner["message"] === "string" ? inner["message"] : undefined;
  const rawCode = inner["code"] ?? inner["type"];
  const code = typeof rawCode === "string" || typeof rawCode === "number" ? String(rawCode) : undefined;
  return { ...(message === undefined ? {} : { message }), ...(code === undefined ? {} : { code }) };
}

const ANTHROPIC_ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

/**
 * Errors reported inside a 200 stream: Anthropic's `error` event arrives as `{type, message}`; the OpenAI
 * provider hands over `{message, code, statusCode}` built from an `error`/`response.failed` event.
 */
function asStreamError(error: unknown): { status: number; message: string; code?: string } | undefined {
  const value = record(error);
  if (!value || error instanceof Error || typeof value["message"] !== "string") return undefined;
  const message = value["message"];
  const type = typeof value["type"] === "string" ? value["type"] : undefined;
  const rawCode = value["code"];
  const code = typeof rawCode === "string" ? rawCode : type;
  if (typeof value["statusCode"] === "number") return { status: value["statusCode"], message, ...(code ? { code } : {}) };
  if (type !== undefined && ANTHROPIC_ERROR_STATUS[type] !== undefined) {
    return { status: ANTHROPIC_ERROR_STATUS[type], message, code: type };
  }
  return { status: 500, message, ...(code ? { code } : {}) };
}

const NETWORK_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** The guard's refusal, wherever the SDK or fetch wrapped it. */
function refusedDestination(error: unknown): OutboundRefusedError | undefined {
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    if (current instanceof OutboundRefusedError) return current;
    current = record(current)?.["cause"];
  }
  return undefined;
}

function isNetworkError(error: unknown): boolean {
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    const value = record(current);
    if (!value) return false;
    if (typeof value["code"] === "string" && NETWORK_CODES.has(value["code"])) return true;
    if (current instanceof TypeError && /^(terminated|fetch failed|other side closed)$/i.test(current.message)) return true;
    current = value["cause"];
  }
  return false;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined;
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([key, value]) => [key.toLowerCase(), value]));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
