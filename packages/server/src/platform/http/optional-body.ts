import type { FastifyRequest, RouteOptions } from "fastify";
import { IsOptional } from "typebox";
import type { HttpApp } from "./app.js";

/**
 * Whether `{}` satisfies a body schema's top level: an object schema with no required member and no
 * minimum member count. Only such a body can be optional.
 */
export function acceptsEmptyObject(schema: unknown): boolean {
  if (typeof schema !== "object" || schema === null) return false;
  const s = schema as { type?: unknown; required?: unknown; minProperties?: unknown };
  const required = Array.isArray(s.required) ? s.required.length : 0;
  const minProperties = typeof s.minProperties === "number" ? s.minProperties : 0;
  return s.type === "object" && required === 0 && minProperties === 0;
}

/**
 * A route's body is optional only where the route says so, with `body: Type.Optional(schema)`: the
 * reference's openapi.yaml declares `requestBody.required: false` for a few actions (cancel,
 * promote_to_steering, a daemon token), and leaving such a body out (no Content-Type, or JSON with nothing
 * in it) means `{}`. Every other body is required, even one whose members are all optional (an update
 * with nothing in it is a mistake), and leaving it out is a 400 `validation_failed`.
 *
 * Returns the operations (`method path`, as the OpenAPI document spells them) whose body is optional.
 */
export function acceptAbsentBodies(app: HttpApp): ReadonlySet<string> {
  const optional = new Set<string>();
  app.addHook("onRoute", (route: RouteOptions) => {
    const body = route.schema?.body;
    if (!IsOptional(body)) return;
    // A broken declaration fails the boot, never a request.
    if (!acceptsEmptyObject(body)) throw new Error(`${String(route.method)} ${route.url}: an optional body's schema must accept {}`);
    for (const method of [route.method].flat()) optional.add(operationKey(method, route.url));
    const existing = route.preValidation === undefined ? [] : [route.preValidation].flat();
    route.preValidation = [absentBodyIsEmpty, ...existing];
  });
  return optional;
}

async function absentBodyIsEmpty(request: FastifyRequest): Promise<void> {
  if (request.body === undefined) request.body = {};
}

/** `post /api/v1/orgs/{orgID}`: a route as the OpenAPI document names it. */
function operationKey(method: string, url: string): string {
  return `${method.toLowerCase()} ${url.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`;
}

/** The OpenAPI side of the same rule: `@fastify/swagger` marks every request body required. */
export function markOptionalBodies(document: Record<string, unknown>, optional: ReadonlySet<string>): Record<string, unknown> {
  const paths = (document["paths"] ?? {}) as Record<string, Record<string, { requestBody?: { required?: boolean } }>>;
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      if (operation.requestBody && optional.has(operationKey(method, path))) operation.requestBody.required = false;
    }
  }
  return document;
}
