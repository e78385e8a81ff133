import type { FastifyRequest, RouteOptions } from "fastify";
import { AppError } from "../errors.js";
import type { HttpApp } from "./app.js";

/**
 * A body is optional when `{}` would satisfy its top level: an object schema with no required member and
 * no minimum member count. Such a body may be left out entirely (the reference's openapi.yaml declares
 * `requestBody.required: false` for cancel and promote_to_steering, and its SDK sends nothing there);
 * leaving it out means `{}`. Every other body stays required, and leaving it out is a 400 `validation_failed`.
 */
export function bodyIsOptional(schema: unknown): boolean {
  if (typeof schema !== "object" || schema === null) return false;
  const s = schema as { type?: unknown; required?: unknown; minProperties?: unknown };
  const required = Array.isArray(s.required) ? s.required.length : 0;
  const minProperties = typeof s.minProperties === "number" ? s.minProperties : 0;
  return s.type === "object" && required === 0 && minProperties === 0;
}

/**
 * One rule for every route: an absent body (no Content-Type, or JSON with nothing in it) reaches
 * validation as `undefined`, and routes whose body is optional see `{}` instead. Fastify's own JSON parser
 * refuses an empty body before any route hook runs, so it is wrapped here.
 */
export function acceptAbsentBodies(app: HttpApp): void {
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    const text = decodeUtf8(request.headers["content-type"], body as Buffer);
    if (text instanceof AppError) {
      done(text, undefined);
      return;
    }
    if (text.trim() === "") {
      done(null, undefined);
      return;
    }
    parseJson(request, text, done);
  });
  app.addHook("onRoute", (route: RouteOptions) => {
    if (!bodyIsOptional(route.schema?.body)) return;
    const existing = route.preValidation === undefined ? [] : [route.preValidation].flat();
    route.preValidation = [absentBodyIsEmpty, ...existing];
  });
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * JSON bodies are UTF-8 (RFC 8259): another declared charset is a 415, and bytes that are not UTF-8 a
 * 400, rather than text quietly read with replacement characters (issue 9, F6).
 */
function decodeUtf8(contentType: string | undefined, body: Buffer): string | AppError {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? "")?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
    return new AppError("unsupported_media_type", `JSON bodies must be UTF-8; got charset ${charset.slice(0, 40)}`);
  }
  try {
    return strictUtf8.decode(body);
  } catch {
    return new AppError("invalid_request", "request body is not valid UTF-8");
  }
}

async function absentBodyIsEmpty(request: FastifyRequest): Promise<void> {
  if (request.body === undefined) request.body = {};
}

/** The OpenAPI side of the same rule: `@fastify/swagger` marks every request body required. */
export function markOptionalBodies(document: Record<string, unknown>): Record<string, unknown> {
  const paths = (document["paths"] ?? {}) as Record<string, Record<string, { requestBody?: OpenApiBody }>>;
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      const body = operation.requestBody;
      if (body && bodyIsOptional(body.content?.["application/json"]?.schema)) body.required = false;
    }
  }
  return document;
}

interface OpenApiBody {
  required?: boolean;
  content?: Record<string, { schema?: unknown }>;
}
