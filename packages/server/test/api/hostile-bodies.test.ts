import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_STATUS } from "../../src/platform/errors.js";
import { PUBLIC_BODY_LIMIT } from "../../src/platform/http/app.js";
import { MAX_JSON_DEPTH } from "../../src/platform/http/json-depth.js";
import { startFakeProvider, type FakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, launch } from "../support/agent-loop.js";
import { useTestServer } from "../support/server.js";
import { dereferencedDocument } from "../support/openapi.js";

/*
 * Hostile documents (issue 21): every route that takes a body, documented or not, is sent JSON far deeper
 * than MAX_JSON_DEPTH, very wide JSON, and YAML alias bombs and deep YAML in its text members, with and
 * without a credential. Each must answer 4xx in the error envelope, never 5xx: a deep body used to overflow
 * the stack of the request checks and answer 500 (with an error log line), the sign-up, login and
 * device-code routes included. Routes join by being registered.
 */
const server = useTestServer();
let provider: FakeProvider;
let project: AgentProject;
let agentId: string;
beforeAll(async () => {
  provider = await startFakeProvider();
  project = await agentProject(server.api, provider.baseUrl);
  agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)));
});
afterAll(() => provider.close());

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
}
const document = dereferencedDocument<{
  paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: Schema }> } }>>;
}>();

const BODY_METHODS = ["POST", "PUT", "PATCH", "DELETE"];

/** Every registered route that may carry a body, read from Fastify's route tree (`printRoutes`). */
function bodyRoutes(): Array<{ method: string; path: string }> {
  const routes: Array<{ method: string; path: string }> = [];
  const prefixes: string[] = [];
  for (const line of server.app.http.printRoutes({ commonPrefix: false }).split("\n")) {
    const match = /^([│ ]*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?/.exec(line);
    if (!match) continue;
    const level = match[1]!.length / 4;
    prefixes.length = level;
    const path = (prefixes[level - 1] ?? "") + match[2]!;
    prefixes.push(path);
    for (const method of (match[3] ?? "").split(", ")) if (BODY_METHODS.includes(method)) routes.push({ method, path });
  }
  return routes;
}

/** Routes whose success would tear the fixture down; they only ever get ids that name nothing. */
const destructive = (method: string, path: string) => method === "DELETE" || /\/(revoke|archive|cancel|leave|logout)$/.test(path);

/** Route parameters: the fixture's org and project where nothing can be torn down, ids that name nothing elsewhere. */
function urlOf(method: string, path: string): string {
  const own: Record<string, string> = destructive(method, path) ? {} : { orgID: project.orgId, projectID: project.projectId };
  return path.replace(/:(\w+)/g, (_all, name: string) => own[name] ?? `x_${"a".repeat(26)}`);
}

const deep = (levels: number) => "[".repeat(levels) + "]".repeat(levels);
const wide = (keys: number, key: (i: number) => string) => JSON.stringify(Object.fromEntries(Array.from({ length: keys }, (_, i) => [key(i), 0])));
const aliasBomb = ["a: &a [x, x, x, x, x, x, x, x, x, x]", ...Array.from({ length: 8 }, (_, i) => {
  const [prev, next] = [String.fromCharCode(97 + i), String.fromCharCode(98 + i)];
  return `${next}: &${next} [${Array(10).fill(`*${prev}`).join(", ")}]`;
})].join("\n");

/** Each payload is built once; a function of the route's documented body schema where it fills text members. */
const payloads: Record<string, (schema: Schema | undefined) => string> = {
  "a 100,000-deep array": (() => {
    const text = deep(100_000);
    return () => text;
  })(),
  "a 5,000-deep object": (() => {
    const text = '{"a":'.repeat(5_000) + "0" + "}".repeat(5_000);
    return () => text;
  })(),
  "a 20,000-deep array in an extra member": (() => {
    const text = `{"x_extra":${deep(20_000)}}`;
    return () => text;
  })(),
  "an object with 10,000 members": (() => {
    const text = wide(10_000, (i) => i.toString(36));
    return () => text;
  })(),
  "an object with 10,000 unstorable member names": (() => {
    const text = wide(10_000, (i) => `${i.toString(36)}\u0000`);
    return () => text;
  })(),
  "an array of 20,000 strings in an extra member": (() => {
    const text = `{"x_extra":[${Array(20_000).fill('"x"').join(",")}]}`;
    return () => text;
  })(),
  "a YAML alias bomb in every text member": (schema) => textMembers(schema, aliasBomb),
  "deep YAML in every text member": (schema) => textMembers(schema, "- ".repeat(50_000) + "x"),
};

function textMembers(schema: Schema | undefined, text: string): string {
  const names = Object.entries(schema?.properties ?? {}).filter(([, member]) => [member.type].flat().includes("string"));
  return JSON.stringify(Object.fromEntries(names.length > 0 ? names.map(([name]) => [name, text]) : [["x_text", text]]));
}

function schemaOf(method: string, path: string): Schema | undefined {
  const documented = path.replace(/:(\w+)/g, "{$1}");
  return document.paths[documented]?.[method.toLowerCase()]?.requestBody?.content?.["application/json"]?.schema;
}

describe("hostile request bodies", () => {
  it("reach every route that takes a body, the public ones included", () => {
    const routes = bodyRoutes().map((r) => `${r.method} ${r.path}`);
    expect(routes).toEqual(expect.arrayContaining(["POST /api/auth/signup", "POST /api/auth/login", "POST /api/auth/device/code", "PUT /api/v1/orgs/:orgID/model-provider-configs/:modelProviderConfigID"]));
    expect(routes.length).toBeGreaterThan(60);
  });

  it.each(Object.entries(payloads))("%s: 4xx in the envelope on every route, with and without a credential", async (_name, payload) => {
    const failures: string[] = [];
    for (const { method, path } of bodyRoutes()) {
      const body = payload(schemaOf(method, path));
      for (const token of [project.token, undefined]) {
        const headers: Record<string, string> = { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) };
        const reply = await fetch(server.url + urlOf(method, path), { method, headers, body });
        const text = await reply.text();
        const code = reply.headers.get("content-type")?.includes("application/json") ? (JSON.parse(text) as { code?: string }).code : undefined;
        const refused = reply.status >= 400 && reply.status < 500 && code !== undefined && code in ERROR_STATUS && text.length < 16_384;
        if (!refused) failures.push(`${method} ${path} (${token ? "credential" : "none"}): ${reply.status} ${text.slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it(`refuses a body nested more than ${MAX_JSON_DEPTH} levels as invalid_request, before validation`, async () => {
    const cancel = `${project.base}/agents/${agentId}/cancel`;
    const nested = (levels: number) => `{"actor":${"[".repeat(levels - 1)}${"]".repeat(levels - 1)}}`;
    const atBound = await server.api.post(cancel, undefined, { token: project.token, raw: nested(MAX_JSON_DEPTH) });
    expect(atBound.status).toBe(400);
    expect(atBound.body.code).toBe("validation_failed");
    const over = await server.api.post(cancel, undefined, { token: project.token, raw: nested(MAX_JSON_DEPTH + 1) });
    expect(over.status).toBe(400);
    expect(over.body).toEqual({ code: "invalid_request", error: `request body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep` });
  });

  it("counts brackets in strings and escapes as text, not as nesting", async () => {
    const brackets = "[{".repeat(5_000) + '\\"[' + "\\\\" + "{".repeat(300);
    const reply = await server.api.request("POST", `${project.base}/agents/${agentId}/cancel`, { token: project.token, raw: `{"x_${brackets}":"${brackets}"}` });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe("validation_failed");
  });

  it("keeps a 400 short when a body breaks its schema a hundred thousand times, and takes only small bodies on public routes", async () => {
    const body = wide(100_000, (i) => i.toString(36));
    const reply = await server.api.request("POST", `${project.base}/agents/${agentId}/cancel`, { token: project.token, raw: body });
    expect(reply.status).toBe(400);
    expect(reply.body.issues).toHaveLength(50);
    expect(reply.body.issues[0]).toEqual({ path: "/0", message: "unknown field" });
    // Anyone may call these, and their rate limits come after parsing: a large body is refused unread.
    const small = wide(1_500, (i) => i.toString(36));
    expect(Buffer.byteLength(small)).toBeLessThan(PUBLIC_BODY_LIMIT);
    for (const path of ["/api/auth/signup", "/api/auth/login", "/api/auth/device/code", "/api/auth/device/token"]) {
      const large = await server.api.request("POST", path, { raw: body });
      expect({ path, status: large.status, code: large.body.code }).toEqual({ path, status: 413, code: "request_too_large" });
      const open = await server.api.request("POST", path, { raw: small });
      expect({ path, status: open.status, issues: open.body.issues?.length }).toEqual({ path, status: 400, issues: 50 });
    }
  });

  it("refuses a deep or wide query string with a 400", async () => {
    const nestedName = `${project.base}/agents?${"name[a]".repeat(1_000)}=x`;
    expect((await server.api.get(nestedName, { token: project.token })).status).toBe(400);
    const repeated = `${project.base}/agents?${Array(2_000).fill("name=x").join("&")}`;
    expect((await server.api.get(repeated, { token: project.token })).status).toBe(400);
  });
});
