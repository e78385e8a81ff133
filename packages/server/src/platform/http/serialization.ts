import { SerializerSelector } from "@fastify/fast-json-stringify-compiler";
import type { FastifySerializerCompiler } from "fastify";

// Fastify's own default: fast-json-stringify with no shared schemas (svc registers none) and default options.
const compileSerializer = SerializerSelector()(undefined, {});
const compiled = new WeakMap<object, (data: unknown) => string>();

/**
 * Fastify's response serializer, compiled once per response schema and process instead of once per route,
 * status and app: svc's routes share their views' schemas, and every app built in one process (one per test
 * file in the suite, whose workers run many files) reuses them. Compiling them was most of building the app
 * (about 1.3 s of CPU per build, measured here). A serializer depends on its schema alone, so sharing it
 * changes no response.
 */
export const serializerCompiler: FastifySerializerCompiler<unknown> = (route) => {
  const schema = route.schema as object;
  let serialize = compiled.get(schema);
  if (!serialize) {
    serialize = compileSerializer({ ...route, httpStatus: String(route.httpStatus) });
    compiled.set(schema, serialize);
  }
  return serialize;
};
