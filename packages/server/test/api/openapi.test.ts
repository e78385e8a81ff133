import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OPENAPI_PATH, renderOpenApi } from "../../src/platform/http/openapi.js";
import { REDOC_PATH } from "../../src/platform/http/api-docs.js";
import { useTestServer } from "../support/server.js";

const server = useTestServer();

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; responses: Record<string, unknown> };
}

const document = (): Document => server.app.http.swagger() as unknown as Document;
const operationsOf = (doc: Document) =>
  Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })));

/** Object schemas whose canonical JSON is at least this long count as a duplicate when written twice. */
const NOTABLE_SCHEMA_LENGTH = 100;

const canonical = (node: unknown): string =>
  JSON.stringify(node, (_key, value: unknown) =>
    value && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : value,
  );

/** Every object-like schema below `node` (the root itself left out), as canonical JSON with its location. */
function inlineSchemas(node: unknown, at: string, out: Array<{ at: string; json: string }>, isRoot = true): void {
  if (Array.isArray(node)) return node.forEach((item, i) => inlineSchemas(item, `${at}/${i}`, out, false));
  if (!node || typeof node !== "object") return;
  const schema = node as Record<string, unknown>;
  const objectLike = schema["type"] === "object" || "anyOf" in schema || "oneOf" in schema || "allOf" in schema;
  if (!isRoot && objectLike) out.push({ at, json: canonical(schema) });
  for (const [key, value] of Object.entries(schema)) inlineSchemas(value, `${at}/${key}`, out, false);
}

describe("the OpenAPI document", () => {
  it("is served at /api/v1/openapi.json without credentials", async () => {
    const reply = await server.api.get("/api/v1/openapi.json");
    expect(reply.status).toBe(200);
    expect(reply.body.openapi).toBe("3.1.0");
    expect(reply.body.info.version).toBe("0.1.0");
  });

  it("matches the committed api/openapi.json (run `npm run openapi` after changing a route)", () => {
    const committed = readFileSync(OPENAPI_PATH, "utf8");
    expect(renderOpenApi(server.app.http)).toBe(committed);
  });

  it("names, tags, summarizes and describes every operation", () => {
    const operations = operationsOf(document());
    expect(operations.length).toBeGreaterThan(100);
    for (const { path, method, op } of operations) {
      expect(op.operationId, `${method} ${path}`).toMatch(/^[a-z][A-Za-z]+$/);
      expect(op.tags?.length, `${method} ${path}`).toBeGreaterThan(0);
      expect(op.summary?.length, `${method} ${path} summary`).toBeGreaterThan(3);
      expect(op.summary!.length, `${method} ${path} summary`).toBeLessThanOrEqual(60);
      expect(op.description?.length, `${method} ${path} description`).toBeGreaterThan(10);
    }
    const ids = operations.map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("documents the /api/auth routes: sign-up, sign-in, sign-out, device login and approval", () => {
    const byId = new Map(operationsOf(document()).map((o) => [o.op.operationId, `${o.method} ${o.path}`]));
    expect(Object.fromEntries(["signUp", "signIn", "signOut", "startDeviceLogin", "pollDeviceLogin", "approveDeviceLogin", "denyDeviceLogin"].map((id) => [id, byId.get(id)]))).toEqual({
      signUp: "post /api/auth/signup",
      signIn: "post /api/auth/login",
      signOut: "post /api/auth/logout",
      startDeviceLogin: "post /api/auth/device/code",
      pollDeviceLogin: "post /api/auth/device/token",
      approveDeviceLogin: "post /api/auth/device/approve",
      denyDeviceLogin: "post /api/auth/device/deny",
    });
    const signIn = document().paths["/api/auth/login"]!["post"] as unknown as { requestBody: { content: Record<string, { schema: unknown }> } };
    expect(signIn.requestBody.content["application/json"]!.schema).toEqual({ $ref: "#/components/schemas/SignInRequest" });
  });

  it("names its schemas: resources, ids, requests and errors are components, referred to by $ref", () => {
    const doc = document();
    for (const name of ["Agent", "AgentID", "AgentConfig", "Secret", "SecretID", "CreateSecretRequest", "Error", "ErrorIssue", "Timestamp", "ListAgentsResponse"]) {
      expect(doc.components.schemas, name).toHaveProperty(name);
    }
    const json = JSON.stringify(doc);
    expect(json).not.toContain("x-svc-component");
    for (const ref of json.matchAll(/"\$ref":"#\/components\/(schemas|responses)\/(\w+)"/g)) {
      expect(doc.components[ref[1] as "schemas" | "responses"], ref[0]).toHaveProperty(ref[2]!);
    }
    const getSecret = doc.paths["/api/v1/orgs/{orgID}/secrets/{secretID}"]!["get"] as unknown as { responses: Record<string, unknown> };
    expect(getSecret.responses["200"]).toMatchObject({ content: { "application/json": { schema: { $ref: "#/components/schemas/Secret" } } } });
    expect(getSecret.responses["404"]).toEqual({ $ref: "#/components/responses/NotFound" });
  });

  it(`writes no object schema of ${NOTABLE_SCHEMA_LENGTH} characters or more twice: a repeated one is a named component`, () => {
    const doc = document();
    const found: Array<{ at: string; json: string }> = [];
    inlineSchemas(doc.paths, "#/paths", found);
    for (const [name, schema] of Object.entries(doc.components.schemas)) inlineSchemas(schema, `#/components/schemas/${name}`, found);
    const components = new Map(Object.entries(doc.components.schemas).map(([name, schema]) => [canonical(schema), name]));
    const seen = new Map<string, string>();
    const duplicates: string[] = [];
    for (const { at, json } of found) {
      if (json.length < NOTABLE_SCHEMA_LENGTH) continue;
      const first = seen.get(json) ?? components.get(json);
      if (first !== undefined) duplicates.push(`${at} repeats ${first}`);
      else seen.set(json, at);
    }
    expect(duplicates).toEqual([]);
  });
});

describe("the API reference page", () => {
  it("answers HTML at /api/docs that loads only same-origin assets, under a Content-Security-Policy", async () => {
    const reply = await server.api.get("/api/docs");
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toMatch(/^text\/html/);
    const csp = reply.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("connect-src 'self'");
    const html = reply.text;
    const urls = [...html.matchAll(/(?:src|href|spec-url)="([^"]*)"/g)].map((m) => m[1]!);
    expect(urls).toEqual(["/api/v1/openapi.json", REDOC_PATH]);
    expect(html).not.toMatch(/<script>(?!<\/script>)|<script(?![^>]*\bsrc=)[^>]*>/);
  });

  it("serves the renderer from svc itself", async () => {
    const reply = await server.api.get(REDOC_PATH);
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(reply.text.length).toBeGreaterThan(100_000);
    expect(reply.headers.get("cache-control")).toContain("immutable");
  });
});
