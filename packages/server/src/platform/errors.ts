/**
 * The error catalogue: every code svc answers with and its HTTP status. The spec's rules where it
 * states them, the reference's mapping for the rest. Clients must tolerate codes not listed here.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  validation_failed: 400,
  unauthorized: 401,
  forbidden: 403,
  csrf_check_failed: 403,
  not_found: 404,
  conflict: 409,
  file_content_conflict: 409,
  file_read_only: 409,
  expected_digest_required: 428,
  not_a_file: 409,
  idempotency_key_conflict: 409,
  state_transition_conflict: 409,
  pending_work: 409,
  not_wake_capable: 409,
  managed_work_admission_denied: 409,
  gone: 410,
  daemon_runtime_unregistered: 410,
  request_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  // The reference's 502 (BadGateway) for a third party the request depends on (an MCP server, an
  // authorization server) that did not answer; the spec lists the code but not its status.
  upstream_unavailable: 502,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
  authentication_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** A field-level problem in a submitted document; `path` is a JSON Pointer (RFC 6901). */
export interface Issue {
  path: string;
  message: string;
  line?: number;
  column?: number;
}

export interface ErrorDetails {
  issues?: Issue[];
  currentDigest?: string;
  /** Seconds a rate-limited client should wait, sent as Retry-After. */
  retryAfterSeconds?: number;
}

export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetails = {},
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "AppError";
    this.status = ERROR_STATUS[code];
  }
}

export interface ErrorBody {
  error: string;
  code: string;
  current_digest?: string;
  issues?: Issue[];
}

export function errorBody(err: AppError): ErrorBody {
  const body: ErrorBody = { error: err.message, code: err.code };
  if (err.details.currentDigest !== undefined) body.current_digest = err.details.currentDigest;
  if (err.details.issues !== undefined) body.issues = err.details.issues;
  return body;
}

export const notFound = (what = "resource") => new AppError("not_found", `${what} not found`);
export const forbidden = (message = "you do not have permission to do this") => new AppError("forbidden", message);
export const conflict = (message: string) => new AppError("conflict", message);
export const invalidRequest = (message: string) => new AppError("invalid_request", message);
export const unauthorized = (message = "missing or invalid credentials") => new AppError("unauthorized", message);
export const stateConflict = (message: string) => new AppError("state_transition_conflict", message);
/** A retried request whose Idempotency-Key was first used with a different request. */
export const idempotencyConflict = (message = "this Idempotency-Key was already used with a different request") =>
  new AppError("idempotency_key_conflict", message);
