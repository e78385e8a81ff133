import type { FastifyRequest, RouteOptions } from "fastify";
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
 * Routes whose body is optional see `{}` where none was sent; json-body.ts hands an absent body on as
 * `undefined`.
 */
export function acceptAbsentBodies(app: HttpApp): void {
  app.addHook("onRoute", (route: RouteOptions) => {
    if (!bodyIsOptional(route.schema?.body)) return;
    const existing = route.preValidation === undefined ? [] : [route.preValidation].flat();
    route.preValidation = [absentBodyIsEmpty, ...existing];
  });
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
