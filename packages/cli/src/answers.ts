import { existsSync, readFileSync } from "node:fs";
import { createClient, type SvcClient } from "@svc/sdk";
import { shapeProblem, type Schema } from "./shape.js";

/**
 * The contract this CLI was built with: beside dist/ in the CLI svc serves (`/downloads/svc-cli.tgz`,
 * scripts/download-package.mjs puts it there), else api/openapi.json at the repository's root, three
 * folders up from src/ and dist/ alike.
 */
const CONTRACTS = [new URL("../openapi.json", import.meta.url), new URL("../../../api/openapi.json", import.meta.url)];

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
    const route = routeOf(method, path);
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
  const status = String(response.status);
  const documented = route.responses[status] ?? route.responses[`${status[0]}XX`] ?? route.responses["default"];
  if (!documented) return ", a status the route does not answer";
  const answer = "$ref" in documented ? route.document.components.responses[documented.$ref.split("/").at(-1)!]! : documented;
  // An event stream is read frame by frame, and the tail reads each frame's fields with care.
  if (response.ok && answer.content?.["text/event-stream"]) return undefined;
  const schema = answer.content?.["application/json"]?.schema;
  if (!schema) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(await response.clone().text());
  } catch {
    return " with a body that is not JSON";
  }
  const problem = shapeProblem(body, schema, route.document.resolve);
  return problem && ` with a body the contract does not describe (${problem})`;
}

interface OpenApiResponse {
  content?: Record<string, { schema?: Schema }>;
}

interface OpenApi {
  paths: Record<string, Record<string, { responses: Record<string, OpenApiResponse | { $ref: string }> } | undefined>>;
  components: { responses: Record<string, OpenApiResponse>; schemas: Record<string, Schema> };
}

interface Document extends OpenApi {
  /** A `#/components/schemas/Name` reference's schema. */
  resolve(ref: string): Schema;
}

interface Route {
  template: string;
  responses: Record<string, OpenApiResponse | { $ref: string }>;
  document: Document;
}

let loaded: { document: Document; templates: Array<{ template: string; pattern: RegExp }> } | undefined;

/** The route a request went to, from the contract read once per process. */
function routeOf(method: string, path: string): Route | undefined {
  loaded ??= load();
  const { document, templates } = loaded;
  const found = templates.find((t) => t.pattern.test(path));
  const operation = found && document.paths[found.template]?.[method.toLowerCase()];
  return found && operation ? { template: found.template, responses: operation.responses, document } : undefined;
}

function load(): NonNullable<typeof loaded> {
  const contract = JSON.parse(readFileSync(CONTRACTS.find((url) => existsSync(url)) ?? CONTRACTS[1]!, "utf8")) as OpenApi;
  const resolve = (ref: string): Schema => {
    const schema = contract.components.schemas[ref.split("/").at(-1)!];
    if (!schema) throw new Error(`api/openapi.json refers to ${ref}, which it does not define`);
    return schema;
  };
  // `{orgID}` stands for one path segment.
  const templates = Object.keys(contract.paths).map((template) => ({ template, pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+")}$`) }));
  return { document: { ...contract, resolve }, templates };
}
