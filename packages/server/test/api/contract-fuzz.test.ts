import { sql } from "drizzle-orm";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeProvider, type FakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { ERROR_STATUS } from "../../src/platform/errors.js";
import { rawRows } from "../../src/platform/db/index.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, launch } from "../support/agent-loop.js";
import { useTestServer } from "../support/server.js";
import { dereferencedDocument } from "../support/openapi.js";

/*
 * A contract fuzzer (issue 9, item 3): for every operation of the committed OpenAPI document, requests
 * derived from its schemas and then broken (wrong types, unknown members, bad ids, unstorable text,
 * strange query values) must never answer 5xx, must answer every 4xx in the error envelope, and, when
 * every one of them was refused, must leave the database as it was. New routes join by being in the
 * document. The seed is fixed per run (SVC_FUZZ_SEED overrides it) and printed with any failure.
 */

const SEED = Number(process.env["SVC_FUZZ_SEED"] ?? 20261123);
const RUNS = Number(process.env["SVC_FUZZ_RUNS"] ?? 200);

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  maxLength?: number;
  minLength?: number;
  maximum?: number;
}
interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  required?: boolean;
  schema?: Schema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
}

const document = dereferencedDocument<{
  paths: Record<string, Record<string, Operation>>;
}>();
const METHODS = ["get", "post", "put", "patch", "delete"];
const operations = Object.entries(document.paths).flatMap(([path, ops]) =>
  Object.entries(ops)
    .filter(([method]) => METHODS.includes(method))
    .map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
);

const server = useTestServer();
let provider: FakeProvider;
let fixture: AgentProject & { agentId: string; configId: string };
beforeAll(async () => {
  provider = await startFakeProvider();
  const project = await agentProject(server.api, provider.baseUrl);
  const configId = await createConfig(server.api, project, yamlConfig(project));
  fixture = { ...project, configId, agentId: await launch(server.api, project, configId, "hello") };
});
afterAll(() => provider.close());

/** Ids of the fixture by path parameter name; the rest get well-formed ids that name nothing. */
const knownIds = (): Record<string, string> => ({ orgID: fixture.orgId, projectID: fixture.projectId, agentID: fixture.agentId, agentConfigID: fixture.configId });

/** Operations whose success would tear the fixture down are only ever sent ids that name nothing. */
const destructive = (method: string, path: string) => method === "DELETE" || /\/(revoke|archive|cancel|leave|logout)$/.test(path);

const unstorable = fc.constantFrom("a\u0000b", "\ud800", "x\udc00y");
const oddText = fc.oneof(fc.string(), fc.string({ unit: "grapheme", maxLength: 40 }), unstorable, fc.constant("x".repeat(70_000)), fc.constant(""));
const oddScalar = fc.oneof(oddText, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant(-1), fc.constant(2 ** 53));
const oddValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ maxDepth: 3 }, oddScalar, fc.array(tie("value"), { maxLength: 4 }), fc.dictionary(fc.string({ maxLength: 8 }), tie("value"), { maxKeys: 4 })),
})).value;

const idLike = (prefix: string) => fc.stringMatching(/^[a-z2-7]{26}$/).map((rest) => `${prefix}_${rest}`);

/** A value that fits `schema` in shape (the generator's notion of "almost valid"). */
function plausible(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 4) return oddValue;
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches?.length) return fc.oneof(...branches.map((branch) => plausible(branch, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === "string") {
    const prefix = schema.pattern?.match(/^\^([a-z]+)_\[a-z2-7\]\{26\}\$$/)?.[1];
    // The fixture's own ids get requests past "not found" and into the code that stores things.
    const own = prefix ? Object.values(knownIds()).filter((id) => id.startsWith(`${prefix}_`)) : [];
    if (prefix) return own.length > 0 ? fc.oneof(fc.constantFrom(...own), idLike(prefix)) : idLike(prefix);
    // Schema-valid text the database may still refuse: any code unit, U+0000 and lone surrogates included.
    const maxLength = Math.min(schema.maxLength ?? 40, 40);
    return fc.oneof({ arbitrary: fc.string({ maxLength }), weight: 3 }, { arbitrary: fc.string({ unit: "binary", maxLength }), weight: 1 }, { arbitrary: unstorable, weight: 1 });
  }
  if (type === "integer") return fc.integer({ min: 0, max: Math.min(schema.maximum ?? 1000, 1000) });
  if (type === "number") return fc.double({ noNaN: true, min: 0, max: 1000 });
  if (type === "boolean") return fc.boolean();
  if (type === "array") return fc.array(plausible(schema.items, depth + 1), { maxLength: 3 });
  if (type === "object" || schema.properties) {
    const entries = Object.entries(schema.properties ?? {});
    return fc.record(Object.fromEntries(entries.map(([key, property]) => [key, plausible(property, depth + 1)])), {
      requiredKeys: (schema.required ?? []).filter((key) => entries.some(([name]) => name === key)),
    });
  }
  return oddValue;
}

/** A plausible body with one thing broken: a member's value, an extra member, a missing one, or all of it. */
function broken(schema: Schema | undefined): fc.Arbitrary<unknown> {
  const base = plausible(schema);
  const members = Object.keys(schema?.properties ?? {});
  return fc.oneof(
    oddValue,
    base,
    fc.tuple(base, fc.string({ minLength: 1, maxLength: 10 }), oddValue).map(([body, key, value]) => (isObject(body) ? { ...body, [`x_${key}`]: value } : body)),
    ...(members.length > 0
      ? [
          fc.tuple(base, fc.constantFrom(...members), oddValue).map(([body, key, value]) => (isObject(body) ? { ...body, [key]: value } : body)),
          fc.tuple(base, fc.constantFrom(...members)).map(([body, key]) => (isObject(body) ? Object.fromEntries(Object.entries(body).filter(([k]) => k !== key)) : body)),
        ]
      : []),
  );
}

const asText = (value: unknown): string => (typeof value === "string" ? value : (JSON.stringify(value) ?? ""));
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

interface FuzzRequest {
  url: string;
  body: string | undefined;
  idempotencyKey: string | undefined;
}

function requests(path: string, method: string, operation: Operation): fc.Arbitrary<FuzzRequest> {
  const parameters = operation.parameters ?? [];
  const known = knownIds();
  const pathValues = parameters
    .filter((p) => p.in === "path")
    .map((p) => {
      const prefix = p.schema?.pattern?.match(/^\^([a-z]+)_/)?.[1] ?? "x";
      const valid = !destructive(method, path) && known[p.name] ? [fc.constant(known[p.name]!)] : [];
      return fc.oneof(...valid, idLike(prefix), fc.string({ minLength: 1, maxLength: 30 })).map((value) => [p.name, value] as const);
    });
  const queryValues = parameters
    .filter((p) => p.in === "query")
    .map((p) => fc.option(fc.oneof(plausible(p.schema).map(asText), oddText, fc.constantFrom("0x10", "-1", "1e3", "true", "9".repeat(30))), { nil: undefined }).map((value) => [p.name, value] as const));
  const extraQuery = fc.option(fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), oddText), { nil: undefined });
  const schema = operation.requestBody?.content?.["application/json"]?.schema;
  const body = method === "GET" || method === "DELETE" ? fc.constant(undefined) : fc.option(broken(schema), { nil: undefined, freq: 8 });
  return fc
    .record({ path: fc.tuple(...pathValues), query: fc.tuple(...queryValues), extraQuery, body, key: fc.option(fc.string({ maxLength: 300 }), { nil: undefined, freq: 3 }) })
    .map(({ path: values, query, extraQuery: extra, body: value, key }) => {
      let url = path;
      for (const [name, id] of values) url = url.replace(`{${name}}`, encodeURIComponent(id));
      const search = new URLSearchParams();
      for (const [name, v] of query) if (v !== undefined) search.set(name, safeForUrl(v));
      if (extra) search.set(`u_${extra[0]}`, safeForUrl(extra[1]));
      const qs = search.toString();
      return { url: qs ? `${url}?${qs}` : url, body: value === undefined ? undefined : JSON.stringify(value), idempotencyKey: key && safeHeader(key) };
    });
}

/** A URL carries bytes: unpaired surrogates cannot be encoded, so they become U+FFFD as a client would send. */
const safeForUrl = (text: string) => text.replace(/[\ud800-\udfff]/g, "\ufffd");
const safeHeader = (text: string) => text.replace(/[^\x20-\x7e]/g, "?");

const ENVELOPE_MEMBERS = new Set(["error", "code", "issues", "current_digest"]);
/**
 * Operations whose documented refusals are not all the envelope: the email verification link answers an
 * HTML page, and the device token route answers RFC 8628's `{error}` bodies (DeviceTokenError).
 */
const OUTSIDE_THE_ENVELOPE = new Set(["GET /api/auth/verify-email", "POST /api/auth/device/token"]);

async function send(method: string, request: FuzzRequest): Promise<{ status: number; body: string; contentType: string }> {
  const headers: Record<string, string> = { authorization: `Bearer ${fixture.token}` };
  if (request.body !== undefined) headers["content-type"] = "application/json";
  if (request.idempotencyKey !== undefined) headers["idempotency-key"] = request.idempotencyKey;
  const reply = await fetch(server.url + request.url, { method, headers, body: request.body });
  const contentType = reply.headers.get("content-type") ?? "";
  // An accepted event stream never ends on its own: its status is all this needs.
  if (contentType.startsWith("text/event-stream")) {
    await reply.body?.cancel();
    return { status: reply.status, body: "", contentType };
  }
  return { status: reply.status, body: await reply.text(), contentType };
}

/** Rows in every table: what a refused request must not change. */
async function rowCounts(): Promise<string> {
  const rows = await rawRows<{ counts: string }>(
    server.db.read,
    sql`SELECT string_agg(table_name || '=' || (xpath('/row/c/text()', query_to_xml(format('SELECT count(*) AS c FROM %I', table_name), false, true, '')))[1]::text, ',' ORDER BY table_name) AS counts
      FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name NOT IN ('rate_limit_buckets', '__drizzle_migrations')`,
  );
  return rows[0]!.counts;
}

describe("the contract fuzzer", () => {
  it.each(operations.map((o) => [`${o.method} ${o.path}`, o] as const))("%s: no 5xx, the envelope on every 4xx, nothing changed by a refusal", async (_name, { path, method, operation }) => {
    const before = await rowCounts();
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(requests(path, method, operation), async (request) => {
        const reply = await send(method, request);
        expect(reply.status, `${method} ${request.url}\n${request.body?.slice(0, 500)}\n${reply.body.slice(0, 500)}`).toBeLessThan(500);
        if (reply.status < 400) {
          accepted += 1;
          return;
        }
        if (OUTSIDE_THE_ENVELOPE.has(`${method} ${path}`)) return;
        expect(reply.contentType).toContain("application/json");
        const body = JSON.parse(reply.body) as Record<string, unknown>;
        expect(typeof body["error"]).toBe("string");
        expect(Object.keys(ERROR_STATUS)).toContain(body["code"]);
        for (const member of Object.keys(body)) expect(ENVELOPE_MEMBERS.has(member), `member ${member}`).toBe(true);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    if (accepted === 0) expect(await rowCounts()).toBe(before);
  }, 120_000);
});
