import type { Socket } from "node:net";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { AppError, errorBody } from "../errors.js";
import type { HttpApp } from "./app.js";

/*
 * What reaches a client before or around the routes (issue 9, F5 and F9): the framework's own refusals
 * carry the error envelope and the status of its code, and every response says it must not be cached or
 * sniffed. Nothing from the request is echoed back.
 */

/** Path parameters up to this long reach the routes, whose id patterns answer 404 for a bad one. */
export const MAX_PARAM_LENGTH = 2048;

/** Fastify's refusals before routing (`frameworkErrors`): a malformed URL, an over-long parameter. */
export function frameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const appError =
    error.code === "FST_ERR_MAX_PARAM_LENGTH"
      ? new AppError("not_found", "resource not found")
      : new AppError("invalid_request", error.code === "FST_ERR_BAD_URL" ? "the URL is not valid (bad percent-encoding)" : "the request is not valid");
  void reply.status(appError.status).type("application/json").send(errorBody(appError));
}

/**
 * Node's HTTP parser refuses some requests before Fastify sees them (headers or a URL over the size
 * limit, malformed syntax); it would answer with a bare status line. This answers with the envelope.
 */
export function clientError(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) return void socket.destroy();
  const appError =
    error.code === "HPE_HEADER_OVERFLOW"
      ? new AppError("request_too_large", "the request's URL or headers are too large")
      : new AppError("invalid_request", "the request could not be parsed as HTTP");
  const body = JSON.stringify(errorBody(appError));
  socket.end(
    `HTTP/1.1 ${appError.status} ${appError.status === 413 ? "Content Too Large" : "Bad Request"}\r\n` +
      `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `cache-control: no-store\r\nx-content-type-options: nosniff\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** Answers are per caller and may hold secrets' metadata: no cache keeps them, no browser sniffs them. */
export function secureResponses(app: HttpApp): void {
  app.addHook("onSend", async (_request, reply) => {
    void reply.header("x-content-type-options", "nosniff");
    if (!reply.hasHeader("cache-control")) void reply.header("cache-control", "no-store");
  });
}
