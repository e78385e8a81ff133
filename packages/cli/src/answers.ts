import { readFileSync } from "node:fs";
import { Ajv, type ValidateFunction } from "ajv";
import { createClient, type SvcClient } from "@svc/sdk";

/**
 * The contract this CLI was built with: api/openapi.json at the repository's root, three folders up from
 * src/ and dist/ alike (the CLI runs from its repository, as bin/svc.js says).
 */
const CONTRACT = new URL("../../../api/openapi.json", import.meta.url);

/** An answer the contract does not describe: a wrong address, a proxy's page, a server of another version. */
class UnexpectedAnswer extends Error {}

/** A client of svc's API whose every answer is checked against the contract before the CLI reads it. */
export function apiClient(baseUrl: string, token?: string): SvcClient {
  const base = new URL(baseUrl.replace(/\/+$/, ""));
  return createClient({ baseUrl, ...(token ? { token } : {}), fetch: checkedFetch(base.pathname.replace(/\/+$/, "")) });
}

/**
 * Fetch, then compare the answer with what the contract says the route answers, so that a command never
 * reads a field that is not there (and fails with "Cannot read properties of undefined"): one sentence
 * naming the method, the route and the status instead.
 */
function checkedFetch(basePath: string): typeof globalThis.fetch {
  return async (input, init) => {
    const method = (input instanceof Request ? input.method : (init?.method ?? "GET")).toUpperCase();
    const path = new URL(input instanceof Request ? input.url : input).pathname.slice(basePath.length);
    const route = contract().routeOf(method, path);
    if (!route) throw new Error(`svc's CLI called ${method} ${path}, which its contract does not have`);
    const response = await globalThis.fetch(input, init);
    const problem = await problemWith(route, response);
    if (problem) {
      await response.body?.cancel();
      throw new UnexpectedAnswer(`${method} ${route.template} answered HTTP ${response.status}${problem}: is --url (or SVC_URL) the address of svc, in a version this CLI knows?`);
    }
    return response;
  };
}

/** What is wrong with the answer, or undefined when the contract describes it. */
async function problemWith(route: Route, response: Response): Promise<string | undefined> {
  const documented = route.responses[String(response.status)] ?? route.responses[`${String(response.status)[0]}XX`] ?? route.responses["default"];
  if (!documented) return ", a status the route does not answer";
  // An event stream is read frame by frame, and the tail reads each frame's fields with care.
  if (response.ok && documented.stream) return undefined;
  const validate = documented.json;
  if (!validate) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(await response.clone().text());
  } catch {
    return " with a body that is not JSON";
  }
  if (validate(body)) return undefined;
  const first = validate.errors?.[0];
  return ` with a body the contract does not describe (${first?.instancePath || "/"} ${first?.message ?? "is not what it should be"})`;
}

interface Documented {
  /** Checks a JSON body; absent when the answer has no JSON body (204, a file). */
  json: ValidateFunction | undefined;
  stream: boolean;
}

interface Route {
  template: string;
  responses: Record<string, Documented>;
}

interface Contract {
  routeOf(method: string, path: string): Route | undefined;
}

let loaded: Contract | undefined;

/** Read and compiled once per process, each route's response schemas when the route is first called. */
function contract(): Contract {
  if (loaded) return loaded;
  const document = tolerant(JSON.parse(readFileSync(CONTRACT, "utf8"))) as OpenApi;
  const ajv = new Ajv({ strict: false, validateFormats: false, validateSchema: false, allErrors: false });
  ajv.addSchema(document, "contract");
  const templates = Object.keys(document.paths).map((template) => ({ template, pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+")}$`) }));
  const routes = new Map<string, Route>();
  loaded = {
    routeOf(method, path) {
      const found = templates.find((t) => t.pattern.test(path));
      const operation = found && document.paths[found.template]?.[method.toLowerCase()];
      if (!found || !operation) return undefined;
      const key = `${method} ${found.template}`;
      let route = routes.get(key);
      if (!route) routes.set(key, (route = { template: found.template, responses: compiled(ajv, document, operation.responses) }));
      return route;
    },
  };
  return loaded;
}

function compiled(ajv: Ajv, document: OpenApi, responses: Record<string, OpenApiResponse>): Record<string, Documented> {
  return Object.fromEntries(
    Object.entries(responses).map(([status, entry]) => {
      const response = entry.$ref ? document.components.responses[entry.$ref.split("/").at(-1)!]! : entry;
      const schema = response.content?.["application/json"]?.schema;
      return [status, { json: schema ? ajv.compile(schema) : undefined, stream: response.content?.["text/event-stream"] !== undefined }];
    }),
  );
}

interface OpenApiResponse {
  $ref?: string;
  content?: Record<string, { schema?: object }>;
}

interface OpenApi {
  paths: Record<string, Record<string, { responses: Record<string, OpenApiResponse> }>>;
  components: { responses: Record<string, OpenApiResponse> };
}

/**
 * The contract read as a tolerant reader reads it: the shape a command relies on (types, required fields,
 * items) is kept, what a newer server may add is let through (fields, enum members, longer strings), since
 * the spec lets both grow. `$ref`s point into the document added as "contract".
 */
const GROWS = new Set(["enum", "const", "format", "pattern", "minLength", "maxLength", "minItems", "maxItems", "uniqueItems", "minimum", "maximum", "discriminator"]);

/** Keywords whose values are maps of names to schemas: the names are kept as they are. */
const NAMED_SCHEMAS = new Set(["properties", "patternProperties", "schemas", "$defs"]);

function tolerant(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tolerant);
  if (typeof node !== "object" || node === null) return node;
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (GROWS.has(key) || (key === "additionalProperties" && value === false)) continue;
    if (key === "$ref" && typeof value === "string" && value.startsWith("#/")) kept[key] = `contract${value}`;
    else if (key === "oneOf") kept["anyOf"] = tolerant(value);
    else if (NAMED_SCHEMAS.has(key) && typeof value === "object" && value !== null) kept[key] = Object.fromEntries(Object.entries(value).map(([name, schema]) => [name, tolerant(schema)]));
    else kept[key] = tolerant(value);
  }
  return kept;
}
