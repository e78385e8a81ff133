import { propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, type Span } from "@opentelemetry/api";
import type { FastifyRequest } from "fastify";
import type { HttpApp } from "./app.js";
import { tracer } from "../tracing.js";

/**
 * A server span per request (docs/operations.md, "Traces"), named `METHOD /route/:pattern`, continuing
 * the caller's trace when the request carries a W3C `traceparent`. Only the method, the route's pattern
 * and the status are recorded: the path holds ids and the query may hold a credential. Registered first,
 * so the span covers authentication too.
 */
export function traceRequests(app: HttpApp): void {
  const spans = new WeakMap<FastifyRequest, Span>();
  app.addHook("onRequest", async (request) => {
    const route = request.routeOptions.url;
    const span = tracer.startSpan(
      route ? `${request.method} ${route}` : request.method,
      { kind: SpanKind.SERVER, attributes: { "http.request.method": request.method, ...(route ? { "http.route": route } : {}) } },
      propagation.extract(ROOT_CONTEXT, request.headers),
    );
    // With tracing off every span is the same non-recording one: nothing to keep.
    if (span.isRecording()) spans.set(request, span);
  });
  app.addHook("onResponse", async (request, reply) => {
    const span = spans.get(request);
    if (!span) return;
    spans.delete(request);
    span.setAttribute("http.response.status_code", reply.statusCode);
    // Client mistakes are 4xx answers working as intended; a server span is an error only on 5xx.
    if (reply.statusCode >= 500) span.setAttributes({ "error.type": String(reply.statusCode) }).setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
  app.addHook("onRequestAbort", async (request) => {
    const span = spans.get(request);
    if (!span) return;
    spans.delete(request);
    span.setAttribute("error.type", "aborted").end();
  });
}
