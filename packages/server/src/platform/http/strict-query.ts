import type { FastifyRequest, RouteOptions } from "fastify";
import { AppError } from "../errors.js";
import type { HttpApp } from "./app.js";

interface QuerySchema {
  type?: unknown;
  properties?: Record<string, { type?: unknown }>;
  additionalProperties?: unknown;
}

/**
 * Query strings under `prefix` are as strict as bodies (issue 9, F6): a parameter a route does not
 * document is a 400, and a number must be written in decimal ("0x10" is not 16, as the coercing
 * validator would read it).
 */
export function strictQueries(app: HttpApp, prefix: string): void {
  app.addHook("onRoute", (route: RouteOptions) => {
    if (!route.url.startsWith(prefix)) return;
    const schema = (route.schema ??= {});
    const query = (schema.querystring as QuerySchema | undefined) ?? { type: "object", properties: {} };
    schema.querystring = { ...query, additionalProperties: false };
    const numeric = Object.entries(query.properties ?? {})
      .filter(([, property]) => property.type === "integer" || property.type === "number")
      .map(([name]) => name);
    if (numeric.length === 0) return;
    const existing = route.preValidation === undefined ? [] : [route.preValidation].flat();
    route.preValidation = [decimalNumbers(numeric), ...existing];
  });
}

const DECIMAL = /^-?\d+(\.\d+)?$/;

function decimalNumbers(names: string[]) {
  return async (request: FastifyRequest): Promise<void> => {
    const query = request.query as Record<string, unknown>;
    for (const name of names) {
      const value = query[name];
      if (typeof value === "string" && !DECIMAL.test(value)) throw new AppError("invalid_request", `query parameter ${name}: must be a decimal number`);
    }
  };
}
