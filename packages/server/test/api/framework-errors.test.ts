import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeProvider, type FakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { loggableError } from "../../src/platform/log.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, launch } from "../support/agent-loop.js";
import { useTestServer } from "../support/server.js";

/*
 * Refusals that happen before or around the routes (issue 9, F5 and F9): each carries the error envelope
 * and its code's status, echoes nothing, and every answer says no-store and nosniff.
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

/** A raw request, for what fetch would refuse to send (bad percent-encoding, a huge URL). */
function raw(path: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path, method: "GET", headers: { authorization: `Bearer ${project.token}` } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

function expectEnvelope(reply: { status: number; body: string }, status: number, code: string) {
  expect(reply.status, reply.body).toBe(status);
  const body = JSON.parse(reply.body) as { error: string; code: string };
  expect(body.code).toBe(code);
  expect(Object.keys(body).sort()).toEqual(["code", "error"]);
}

describe("framework refusals", () => {
  it("answers a path id over 100 characters with the documented 404, echoing nothing", async () => {
    const long = `agt_${"a".repeat(300)}`;
    const reply = await raw(`${project.base}/agents/${long}`);
    expectEnvelope(reply, 404, "not_found");
    expect(reply.body).not.toContain(long);
  });

  it("answers bad percent-encoding with 400 invalid_request", async () => {
    expectEnvelope(await raw(`${project.base}/agents/%E0%A4%A`), 400, "invalid_request");
  });

  it("answers a 60 KB query with the envelope, not a bare status line", async () => {
    const reply = await raw(`${project.base}/agents?name=${"x".repeat(60_000)}`);
    expectEnvelope(reply, 413, "request_too_large");
    expect(reply.headers["x-content-type-options"]).toBe("nosniff");
  });
});

describe("every answer", () => {
  it("says no-store and nosniff, on success and on error", async () => {
    for (const path of [`${project.base}/agents/${agentId}`, `${project.base}/agents/agt_${"a".repeat(26)}`, "/healthz"]) {
      const reply = await server.api.get(path, { token: project.token });
      expect(reply.headers.get("cache-control"), path).toBe("no-store");
      expect(reply.headers.get("x-content-type-options"), path).toBe("nosniff");
    }
  });
});

describe("a stream resumed past the newest event", () => {
  it("is refused with 400 rather than left waiting", async () => {
    const reply = await server.api.get(`${project.base}/agents/${agentId}/events/stream`, { token: project.token, headers: { "last-event-id": "99" } });
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body.code).toBe("invalid_request");
  });
});

describe("strict input (F6)", () => {
  const send = (body: Buffer, contentType: string) =>
    fetch(`${server.url}${project.base}/agents/${agentId}/inputs`, { method: "POST", headers: { "content-type": contentType, authorization: `Bearer ${project.token}` }, body });

  it("refuses a query parameter the route does not document, and numbers not in decimal", async () => {
    const unknown = await server.api.get(`${project.base}/agents?colour=red`, { token: project.token });
    expect(unknown.status, unknown.text).toBe(400);
    expect(unknown.body.code).toBe("invalid_request");
    const hex = await server.api.get(`${project.base}/agents?limit=0x10`, { token: project.token });
    expect(hex.status, hex.text).toBe(400);
    expect((await server.api.get(`${project.base}/agents?limit=16`, { token: project.token })).status).toBe(200);
  });

  it("refuses a body that is not UTF-8, and a declared charset other than UTF-8", async () => {
    const text = (t: string) => `{"content_blocks":[{"type":"text","text":"${t}"}]}`;
    const invalid = Buffer.concat([Buffer.from(text("a").slice(0, -4)), Buffer.from([0xff, 0xfe]), Buffer.from('"}]}')]);
    const notUtf8 = await send(invalid, "application/json");
    expect(notUtf8.status).toBe(400);
    expect(((await notUtf8.json()) as { code: string }).code).toBe("invalid_request");
    const utf16 = await send(Buffer.from(text("hi"), "utf16le"), "application/json; charset=utf-16");
    expect(utf16.status).toBe(415);
    expect(((await utf16.json()) as { code: string }).code).toBe("unsupported_media_type");
    expect((await send(Buffer.from(text("héllo")), "application/json; charset=UTF-8")).status).toBe(201);
  });
});

describe("logged errors", () => {
  it("keep a failed query's SQL and drop its parameters and the cause's detail", () => {
    const cause = Object.assign(new Error('duplicate key value violates unique constraint "x"'), { code: "23505", detail: "Key (name)=(planted-secret) already exists." });
    const err = new Error("Failed query: insert into t values ($1)\nparams: planted-secret", { cause });
    const logged = JSON.stringify(loggableError(err));
    expect(logged).toContain("Failed query: insert into t values ($1)");
    expect(logged).toContain("23505");
    expect(logged).not.toContain("planted-secret");
  });
});
