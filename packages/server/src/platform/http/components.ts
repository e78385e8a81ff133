import type { TSchema } from "typebox";

/*
 * Named schemas in the OpenAPI document (issue 23). A route schema stays one inline TypeBox tree, which is
 * what ajv validates and fast-json-stringify serializes; a schema that is a contract type of its own (a
 * resource, an id, a request, the error envelope) carries its component name in an `x-` keyword, which both
 * ignore. When the document is built, `hoistComponents` moves every named schema into
 * `components.schemas` and leaves a `$ref` where it was used. `$id` cannot carry the name: ajv refuses a
 * schema in which one `$id` appears twice, and an id or a timestamp appears many times in one response.
 */

/** The keyword that names a schema as an OpenAPI component; removed from the document. */
export const COMPONENT_KEY = "x-svc-component";

const COMPONENT_NAME = /^[A-Z][A-Za-z0-9]*$/;

/**
 * Names a schema as the OpenAPI component `name` (PascalCase; the reference's name where the reference has
 * the type). Returns a copy: the schema passed in is left unnamed, and TypeBox's hidden markers
 * (`Type.Optional`'s among them) are kept.
 */
export function component<T extends TSchema>(name: string, schema: T): T {
  if (!COMPONENT_NAME.test(name)) throw new Error(`component name ${name} is not PascalCase`);
  const copy: Record<string, unknown> = Object.defineProperties({}, Object.getOwnPropertyDescriptors(schema));
  copy[COMPONENT_KEY] = name;
  return copy as T;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };
type Operation = { operationId?: string; requestBody?: { content?: Record<string, { schema?: Json }> }; responses?: Record<string, JsonObject> };

const SCHEMAS_REF = "#/components/schemas/";
const RESPONSES_REF = "#/components/responses/";
const METHODS = new Set(["get", "put", "post", "delete", "patch", "head", "options", "trace"]);

/** The shared error responses, by status, and what each one means. */
const ERROR_RESPONSES: Record<string, { name: string; description: string; schema: string }> = {
  "400": { name: "BadRequest", description: "The request is malformed or fails validation; `issues` points at the offending fields.", schema: "Error" },
  "401": { name: "Unauthorized", description: "No valid credential was presented.", schema: "Error" },
  "403": { name: "Forbidden", description: "The credential may not do this.", schema: "Error" },
  "404": { name: "NotFound", description: "The resource does not exist or is not visible to the caller.", schema: "Error" },
  "409": { name: "Conflict", description: "The request conflicts with the resource's current state.", schema: "Error" },
  "410": { name: "Gone", description: "The resource existed but is no longer available.", schema: "Error" },
  "413": { name: "ContentTooLarge", description: "The request body is larger than this route accepts.", schema: "Error" },
  "415": { name: "UnsupportedMediaType", description: "The request body is not JSON.", schema: "Error" },
  "422": { name: "UnprocessableContent", description: "The request is well formed but cannot be carried out as asked.", schema: "Error" },
  "429": { name: "TooManyRequests", description: "Too many attempts; wait before trying again.", schema: "Error" },
  "502": { name: "BadGateway", description: "A service svc depends on for this request failed.", schema: "Error" },
  "503": { name: "ServiceUnavailable", description: "svc cannot answer now (saturated or its database is unreachable); retry later.", schema: "Error" },
  "4XX": { name: "ClientError", description: "Any other client error, with a code from the client subset.", schema: "ClientError" },
  "5XX": { name: "ServerError", description: "An unexpected server error, with a code from the server subset.", schema: "ServerError" },
};

const SUCCESS_DESCRIPTIONS: Record<string, string> = {
  "101": "Switching Protocols",
  "200": "OK",
  "201": "Created",
  "202": "Accepted",
  "204": "No Content",
};

/**
 * Rewrites a document built by @fastify/swagger: every named schema becomes one entry of
 * `components.schemas` and a `$ref` wherever it was used; a request body or a 2xx response that is an
 * unnamed object is named after its operation (`createAgent` gives `CreateAgentRequest` and
 * `CreateAgentResponse`, the reference's convention); the shared error responses become
 * `components.responses`. One name used for two different schemas fails the build of the document.
 */
export function hoistComponents(document: Record<string, unknown>): Record<string, unknown> {
  const found = new Map<string, { schema: JsonObject; canonical: string }>();
  // A use may differ from the named schema in its description alone (@fastify/swagger moves a query
  // parameter's description out of its schema): the component keeps a description, the use says its own.
  const register = (name: string, schema: JsonObject): Json => {
    const { description, ...shape } = schema;
    const canonical = JSON.stringify(sortKeys(shape));
    const ref: JsonObject = { $ref: `${SCHEMAS_REF}${name}` };
    const existing = found.get(name);
    if (!existing) {
      found.set(name, { schema, canonical });
      return ref;
    }
    if (existing.canonical !== canonical) {
      throw new Error(`OpenAPI component ${name} names two different schemas:\n${existing.canonical}\n${canonical}`);
    }
    if (description === undefined || description === existing.schema["description"]) return ref;
    if (existing.schema["description"] === undefined) {
      existing.schema = schema;
      return ref;
    }
    return { ...ref, description };
  };
  const hoist = (node: Json): Json => {
    if (Array.isArray(node)) return node.map(hoist);
    if (node === null || typeof node !== "object") return node;
    const out: JsonObject = {};
    for (const [key, value] of Object.entries(node)) if (key !== COMPONENT_KEY) out[key] = hoist(value);
    const name = node[COMPONENT_KEY];
    return typeof name === "string" ? register(name, out) : out;
  };
  // An unnamed body used by two operations (one page type for two lists) keeps the first operation's name.
  const namedAfterOperation = new Map<string, Json>();
  const nameTopLevel = (schema: Json | undefined, name: string): Json | undefined => {
    const hoisted = schema === undefined ? undefined : hoist(schema);
    if (hoisted === undefined || hoisted === null || typeof hoisted !== "object" || Array.isArray(hoisted)) return hoisted;
    const isObject = hoisted["type"] === "object" || "anyOf" in hoisted || "oneOf" in hoisted;
    if ("$ref" in hoisted || !isObject) return hoisted;
    const canonical = JSON.stringify(sortKeys(hoisted));
    const ref = namedAfterOperation.get(canonical) ?? register(name, hoisted);
    namedAfterOperation.set(canonical, ref);
    return ref;
  };

  const paths = (document["paths"] ?? {}) as Record<string, Record<string, Operation>>;
  for (const item of Object.values(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!METHODS.has(method)) continue;
      const base = pascal(operation.operationId ?? "");
      for (const media of Object.values(operation.requestBody?.content ?? {})) media.schema = nameTopLevel(media.schema, `${base}Request`);
      const successes = Object.keys(operation.responses ?? {}).filter((status) => status.startsWith("2"));
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const suffix = successes.indexOf(status) > 0 ? status : "";
        for (const media of Object.values((response["content"] ?? {}) as Record<string, { schema?: Json }>)) {
          media.schema = status.startsWith("2") ? nameTopLevel(media.schema, `${base}${suffix}Response`) : media.schema && hoist(media.schema);
        }
      }
      operation.responses = shareResponses(operation.responses ?? {});
      Object.assign(operation, hoist(operation as unknown as JsonObject) as JsonObject);
    }
  }
  const components = (document["components"] ?? {}) as Record<string, unknown>;
  const schemas = { ...((components["schemas"] ?? {}) as Record<string, Json>) };
  for (const [name, { schema }] of found) schemas[name] = schema;
  components["schemas"] = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  components["responses"] = Object.fromEntries(
    Object.values(ERROR_RESPONSES).map(({ name, description, schema }) => [
      name,
      { description, content: { "application/json": { schema: { $ref: `${SCHEMAS_REF}${schema}` } } } },
    ]),
  );
  document["components"] = components;
  return document;
}

/** An error response that is exactly the shared one becomes a `$ref`; a 2xx gets its status text. */
function shareResponses(responses: Record<string, JsonObject>): Record<string, JsonObject> {
  const out: Record<string, JsonObject> = {};
  for (const [status, response] of Object.entries(responses)) {
    const shared = ERROR_RESPONSES[status];
    const content = response["content"] as Record<string, { schema?: JsonObject }> | undefined;
    const keys = Object.keys(content ?? {});
    const onlyJson = keys.length === 1 && keys[0] === "application/json";
    const ref = onlyJson ? content?.["application/json"]?.schema?.["$ref"] : undefined;
    if (shared && ref === `${SCHEMAS_REF}${shared.schema}`) {
      out[status] = { $ref: `${RESPONSES_REF}${shared.name}` };
    } else if (response["description"] === "Default Response" && SUCCESS_DESCRIPTIONS[status]) {
      out[status] = { ...response, description: SUCCESS_DESCRIPTIONS[status] };
    } else {
      out[status] = response;
    }
  }
  return out;
}

function pascal(operationId: string): string {
  return operationId.charAt(0).toUpperCase() + operationId.slice(1);
}

function sortKeys(node: Json): Json {
  if (Array.isArray(node)) return node.map(sortKeys);
  if (node === null || typeof node !== "object") return node;
  return Object.fromEntries(Object.keys(node).sort().map((key) => [key, sortKeys(node[key]!)]));
}
