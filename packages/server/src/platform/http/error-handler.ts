import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import type { ErrorObject } from "ajv";
import { AppError, errorBody, type ErrorCode } from "../errors.js";
import { loggableError } from "../log.js";
import { describeParameterErrors, toIssues } from "./validation.js";

/** Fastify's own error codes that are a client's mistake, and what svc calls them. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: "invalid_request",
  FST_ERR_CTP_EMPTY_JSON_BODY: "invalid_request",
  FST_ERR_CTP_BODY_TOO_LARGE: "request_too_large",
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "unsupported_media_type",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: "invalid_request",
  FST_ERR_CTP_INVALID_TYPE: "unsupported_media_type",
  FST_ERR_BAD_URL: "not_found",
  FST_ERR_ASYNC_CONSTRAINT: "invalid_request",
};

/** Maps any thrown error to the spec's envelope; anything unexpected is logged and answered as 500. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const fastifyErr = err as FastifyError & { validation?: ErrorObject[]; validationContext?: string };
  if (fastifyErr.validation) {
    const part = fastifyErr.validationContext ?? "body";
    if (part === "params") return new AppError("not_found", "resource not found");
    if (part === "body") {
      return new AppError("validation_failed", "request body failed validation", { issues: toIssues(fastifyErr.validation) });
    }
    return new AppError("invalid_request", describeParameterErrors(part, fastifyErr.validation));
  }
  if (err instanceof SyntaxError && (err as { statusCode?: number }).statusCode === 400) {
    return new AppError("invalid_request", "request body is not valid JSON");
  }
  const mapped = fastifyErr.code ? FASTIFY_CODES[fastifyErr.code] : undefined;
  if (mapped) return new AppError(mapped, clientMessage(mapped, fastifyErr.message));
  return new AppError("internal_error", "internal error");
}

function clientMessage(code: ErrorCode, message: string): string {
  if (code === "request_too_large") return "request body is too large";
  if (code === "unsupported_media_type") return "unsupported content type; send application/json";
  return message;
}

/**
 * Only what svc did not expect is an error with its stack. A failure svc answers on purpose with a 5xx
 * (a provider or server it depends on did not answer, the database is unavailable) is the world's, not
 * svc's: a warning with its code, message and cause. A client's mistake is a debug line.
 */
export function errorHandler(err: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const appError = toAppError(err);
  if (appError.code === "internal_error") {
    request.log.error({ err }, "unhandled error");
  } else if (appError.status >= 500) {
    request.log.warn({ code: appError.code, message: appError.message, cause: causeOf(appError) }, "request failed upstream");
  } else {
    request.log.debug({ code: appError.code, message: appError.message }, "request failed");
  }
  if (appError.details.retryAfterSeconds !== undefined) {
    void reply.header("retry-after", String(appError.details.retryAfterSeconds));
  }
  void reply.status(appError.status).type("application/json").send(errorBody(appError));
}

/** The messages of an error's causes, outermost first, without stacks or query parameters. */
function causeOf(err: Error): string | undefined {
  const messages: string[] = [];
  for (let cause = err.cause; cause instanceof Error && messages.length < 3; cause = cause.cause) {
    messages.push((loggableError(cause) as { message: string }).message);
  }
  return messages.length > 0 ? messages.join(": ") : undefined;
}
