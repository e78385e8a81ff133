import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeMcpServer, type FakeMcpServer } from "../support/fake-mcp.js";
import { startTestServer, useTestServer, type TestServer } from "../support/server.js";
import type { ApiClient } from "../support/client.js";
import { MATERIALS } from "./secrets-fixtures.js";

// A short connect deadline, so the server that never answers gives up soon.
const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true", SVC_MCP_CONNECT_TIMEOUT_MS: "1000" });
let mcp: FakeMcpServer;
beforeAll(async () => {
  mcp = await startFakeMcpServer();
});
afterAll(async () => {
  await mcp.close();
});
beforeEach(() => mcp.reset());

const TOKEN = "mcp-token-SENTINEL";

async function project(api: ApiClient) {
  const { token, org, project } = await api.userWithOrg();
  return { token, orgId: org.id as string, projectId: project.id as string, tools: `/api/v1/orgs/${org.id}/projects/${project.id}/mcp-servers/tools` };
}

type Project = Awaited<ReturnType<typeof project>>;

async function projectSecret(api: ApiClient, p: Project, material: unknown = { kind: "generic", value: TOKEN }, projectId = p.projectId): Promise<string> {
  const reply = await api.post(`/api/v1/orgs/${p.orgId}/secrets`, { owner: { kind: "project", project_id: projectId }, name: `s${Math.random()}`, material }, { token: p.token });
  expect(reply.status, reply.text).toBe(201);
  return reply.body.id;
}

const none = { type: "none" };

describe("POST /orgs/{orgID}/projects/{projectID}/mcp-servers/tools", () => {
  it("answers the server's tools as the MCP handshake gave them", async () => {
    const p = await project(server.api);
    const reply = await server.api.post(p.tools, { url: mcp.url, auth: none }, { token: p.token });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.protocol_version).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(reply.body.server_info).toEqual({ name: "fake-mcp", version: "1.0.0" });
    expect(reply.body.tools.map((t: { name: string }) => t.name)).toEqual(["greet", "explode", "picture", "wait"]);
    expect(reply.body.tools[0]).toEqual({
      name: "greet",
      title: "Greeter",
      description: "Greets a person by name.",
      input_schema: { type: "object", properties: { name: { type: "string" } }, required: ["name"], additionalProperties: false },
      annotations: { read_only_hint: true, open_world_hint: false },
    });
    expect(reply.body.tools[2]).toEqual({
      name: "picture",
      description: "Returns a picture and its facts.",
      input_schema: { type: "object", properties: {} },
      output_schema: { type: "object", properties: { width: { type: "number" }, height: { type: "number" } } },
    });
    expect(mcp.requests.map((r) => r.method)).toEqual(["initialize", "notifications/initialized", "tools/list"]);
    expect(mcp.requests.every((r) => r.authorization === undefined)).toBe(true);
  });

  it("sends a generic secret of the project as the bearer token, as an agent does", async () => {
    const p = await project(server.api);
    mcp.requireToken(TOKEN);
    const secretId = await projectSecret(server.api, p);
    const reply = await server.api.post(p.tools, { url: mcp.url, auth: { type: "bearer", secret_id: secretId } }, { token: p.token });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.tools).toHaveLength(4);
    expect(mcp.requests.find((r) => r.method === "tools/list")?.authorization).toBe(`Bearer ${TOKEN}`);
    expect(reply.text).not.toContain("SENTINEL");
  });

  it("refuses a secret the project cannot use (404) and one that is not generic (400), before any connection", async () => {
    const p = await project(server.api);
    const other = await server.api.post(`/api/v1/orgs/${p.orgId}/projects`, { name: "Other" }, { token: p.token });
    expect(other.status, other.text).toBe(201);
    const elsewhere = await projectSecret(server.api, p, undefined, other.body.id);
    const missing = await server.api.post(p.tools, { url: mcp.url, auth: { type: "bearer", secret_id: elsewhere } }, { token: p.token });
    expect(missing.status, missing.text).toBe(404);
    expect(missing.body.code).toBe("not_found");

    const aws = await projectSecret(server.api, p, MATERIALS.aws_credentials.material);
    const wrongKind = await server.api.post(p.tools, { url: mcp.url, auth: { type: "bearer", secret_id: aws } }, { token: p.token });
    expect(wrongKind.status, wrongKind.text).toBe(400);
    expect(wrongKind.body).toEqual({ code: "invalid_request", error: expect.stringContaining("generic secret") });
    const generic = await projectSecret(server.api, p);
    const notOAuth = await server.api.post(p.tools, { url: mcp.url, auth: { type: "oauth", secret_id: generic } }, { token: p.token });
    expect(notOAuth.status, notOAuth.text).toBe(400);
    expect(notOAuth.body).toEqual({ code: "invalid_request", error: expect.stringContaining("oauth_token_set secret") });
    expect(mcp.requests).toHaveLength(0);
  });

  it("answers 422 with a bearer hint when the server refuses the token and describes no OAuth", async () => {
    const p = await project(server.api);
    mcp.requireToken("the-right-one");
    const secretId = await projectSecret(server.api, p);
    for (const auth of [none, { type: "bearer", secret_id: secretId }]) {
      const reply = await server.api.post(p.tools, { url: mcp.url, auth }, { token: p.token });
      expect(reply.status, reply.text).toBe(422);
      expect(reply.body).toEqual({ code: "unprocessable", error: expect.stringContaining("401"), auth: { type: "bearer" } });
      expect(reply.text).not.toContain("SENTINEL");
    }
  });

  it("answers 422 with an oauth hint when the server advertises an authorization server", async () => {
    const p = await project(server.api);
    mcp.requireToken("the-right-one");
    mcp.advertiseOAuth(["docs:read", "docs:write"]);
    const reply = await server.api.post(p.tools, { url: mcp.url, auth: none }, { token: p.token });
    expect(reply.status, reply.text).toBe(422);
    expect(reply.body).toEqual({
      code: "unprocessable",
      error: expect.any(String),
      auth: { type: "oauth", authorization_server: new URL(mcp.url).origin, scopes: ["docs:read", "docs:write"] },
    });
  });

  it("answers 422 without a hint when the URL answers, but not as an MCP server", async () => {
    const p = await project(server.api);
    const reply = await server.api.post(p.tools, { url: `${server.url}/healthz`, auth: none }, { token: p.token });
    expect(reply.status, reply.text).toBe(422);
    expect(reply.body).toEqual({ code: "unprocessable", error: expect.stringContaining("did not answer as an MCP server") });
  });

  describe("a server that cannot be reached", () => {
    let silent: Server;
    beforeAll(async () => {
      // Takes requests and never answers them.
      silent = createServer(() => {});
      await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    });
    afterAll(async () => {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });

    it("answers 502 upstream_unavailable when it fails with a 5xx, refuses the connection or never answers", async () => {
      const p = await project(server.api);
      mcp.setDown(true);
      const closedPort = await new Promise<number>((resolve) => {
        const probe = createServer().listen(0, "127.0.0.1", () => {
          const { port } = probe.address() as AddressInfo;
          probe.close(() => resolve(port));
        });
      });
      const silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`;
      for (const url of [mcp.url, `http://127.0.0.1:${closedPort}/mcp`, silentUrl]) {
        const reply = await server.api.post(p.tools, { url, auth: none }, { token: p.token });
        expect(reply.status, `${url}: ${reply.text}`).toBe(502);
        expect(reply.body).toEqual({ code: "upstream_unavailable", error: expect.stringContaining("could not be reached") });
      }
    });
  });

  it("takes URLs as agent configs do, and only the auth types agents support", async () => {
    const p = await project(server.api);
    const invalid = [
      { url: "ftp://example.com/mcp", auth: none },
      { url: "http://user:pass@example.com/mcp", auth: none },
    ];
    for (const body of invalid) {
      const reply = await server.api.post(p.tools, body, { token: p.token });
      expect(reply.status, reply.text).toBe(400);
      expect(reply.body.code).toBe("invalid_request");
    }
    const malformed = [
      { url: "not a url", auth: none },
      { url: mcp.url, auth: { type: "sigv4", secret_id: "sec_aaaaaaaaaaaaaaaaaaaaaaaaaa" } },
      { url: mcp.url, auth: { type: "bearer" } },
      { url: mcp.url },
      { url: mcp.url, auth: none, headers: {} },
    ];
    for (const body of malformed) {
      const reply = await server.api.post(p.tools, body, { token: p.token });
      expect(reply.status, reply.text).toBe(400);
      expect(reply.body.code).toBe("validation_failed");
    }
    expect(mcp.requests).toHaveLength(0);
  });

  it("needs agent.operate in the project: 403 for a viewer, 404 for others, 401 without credentials", async () => {
    const p = await project(server.api);
    const owner = { token: p.token };
    const member = await server.api.orgMember(owner, p.orgId, "member");
    const asViewer = await server.api.put(`/api/v1/orgs/${p.orgId}/members/${member.userId}/projects/${p.projectId}`, { role: "viewer" }, owner);
    expect(asViewer.status, asViewer.text).toBe(200);
    const body = { url: mcp.url, auth: none };
    expect((await server.api.post(p.tools, body, { token: member.token })).status).toBe(403);
    const operator = await server.api.orgMember(owner, p.orgId, "member");
    await server.api.put(`/api/v1/orgs/${p.orgId}/members/${operator.userId}/projects/${p.projectId}`, { role: "operator" }, owner);
    const stranger = (await server.api.userWithOrg("Elsewhere")).token;
    const bareMember = (await server.api.orgMember(owner, p.orgId, "member")).token;
    for (const token of [stranger, bareMember]) expect((await server.api.post(p.tools, body, { token })).status).toBe(404);
    expect((await server.api.post(p.tools, body)).status).toBe(401);
    expect(mcp.requests).toHaveLength(0);
    expect((await server.api.post(p.tools, body, { token: operator.token })).status).toBe(200);
  });
});

describe("the SSRF guard", () => {
  let closed: TestServer;
  beforeAll(async () => {
    closed = await startTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "false" });
  });
  afterAll(async () => {
    await closed?.close();
  });

  it("refuses a private address with 400 naming SVC_ALLOW_PRIVATE_NETWORK, and never connects", async () => {
    const p = await project(closed.api);
    const port = new URL(mcp.url).port;
    for (const url of [mcp.url, `http://localhost:${port}/mcp`]) {
      const reply = await closed.api.post(p.tools, { url, auth: none }, { token: p.token });
      expect(reply.status, reply.text).toBe(400);
      expect(reply.body).toEqual({ code: "invalid_request", error: expect.stringContaining("SVC_ALLOW_PRIVATE_NETWORK") });
    }
    expect(mcp.requests).toHaveLength(0);
  });
});
