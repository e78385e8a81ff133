import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeProvider, type FakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, eventually, launch, requestText, untilEvents } from "../support/agent-loop.js";
import { startFakeMcpServer, type FakeMcpServer } from "../support/fake-mcp.js";
import { startFakeAuthorizationServer, type FakeAuthorizationServer } from "../support/fake-oauth.js";
import type { BrowserSession } from "../support/client.js";
import { TEST_ORIGIN, useTestServer } from "../support/server.js";

// MCP OAuth for secrets (issue 24): a fake authorization server and an MCP server that takes only its tokens.
const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true", SVC_MCP_CONNECT_TIMEOUT_MS: "5000" }, { worker: true });
let provider: FakeProvider;
let mcp: FakeMcpServer;
let as: FakeAuthorizationServer;
beforeAll(async () => {
  provider = await startFakeProvider();
  mcp = await startFakeMcpServer();
  as = await startFakeAuthorizationServer();
});
afterAll(async () => {
  await provider.close();
  await mcp.close();
  await as.close();
});
beforeEach(() => {
  provider.reset();
  mcp.reset();
  as.reset();
  mcp.requireToken((token) => as.isValid(token));
  mcp.advertiseOAuth(["docs:read"], as.issuer);
});

const CALLBACK = "/api/auth/mcp-oauth/callback";

async function startFlow(project: AgentProject, body: Record<string, unknown> = {}) {
  return server.api.post(
    `/api/v1/orgs/${project.orgId}/secrets/mcp-oauth`,
    { owner: { kind: "project", project_id: project.projectId }, mcp_url: mcp.url, name: "docs oauth", ...body },
    { token: project.token },
  );
}

/** The authorization server's redirect to svc's callback once the person approved: its query string. */
async function approvedQuery(authorizationUrl: string): Promise<string> {
  const redirect = await fetch(authorizationUrl, { redirect: "manual" });
  expect(redirect.status).toBe(302);
  const location = new URL(redirect.headers.get("location")!);
  expect(`${location.origin}${location.pathname}`).toBe(`${TEST_ORIGIN}${CALLBACK}`);
  return location.search;
}

/** The person approves at the authorization server, whose redirect brings their browser to svc's callback. */
async function approve(authorizationUrl: string, session: BrowserSession) {
  return server.api.get(`${CALLBACK}${await approvedQuery(authorizationUrl)}`, { session });
}

async function secretOfFlow(project: AgentProject, flowId: string) {
  const list = await server.api.get(`/api/v1/orgs/${project.orgId}/secrets?mcp_oauth_flow_id=${flowId}`, { token: project.token });
  expect(list.status, list.text).toBe(200);
  return list.body.data as any[];
}

/** A project with an OAuth secret for the MCP server, connected through the whole flow. */
async function connected(): Promise<{ project: AgentProject; secretId: string }> {
  const project = await agentProject(server.api, provider.baseUrl);
  const started = await startFlow(project);
  expect(started.status, started.text).toBe(201);
  const callback = await approve(started.body.authorization_url, project.session);
  expect(callback.status, callback.text).toBe(200);
  const [secret] = await secretOfFlow(project, started.body.flow_id);
  return { project, secretId: secret.id };
}

const listTools = (project: AgentProject, secretId: string) =>
  server.api.post(`${project.base}/mcp-servers/tools`, { url: mcp.url, auth: { type: "oauth", secret_id: secretId } }, { token: project.token });

async function secret(project: AgentProject, secretId: string) {
  return (await server.api.get(`/api/v1/orgs/${project.orgId}/secrets/${secretId}`, { token: project.token })).body;
}

describe("POST /orgs/{orgID}/secrets/mcp-oauth", () => {
  it("discovers, registers, authorizes with PKCE and stores the tokens as an oauth_token_set secret found by its flow", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const started = await startFlow(project, { metadata: { team: "docs" } });
    expect(started.status, started.text).toBe(201);
    expect(started.body).toEqual({ flow_id: expect.stringMatching(/^moaf_[a-z2-7]{26}$/), authorization_url: expect.any(String), expires_at: expect.any(String) });
    expect(new Date(started.body.expires_at).getTime()).toBeGreaterThan(Date.now());
    const authorize = new URL(started.body.authorization_url);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${as.issuer}/authorize`);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      response_type: "code",
      code_challenge_method: "S256",
      redirect_uri: `${TEST_ORIGIN}${CALLBACK}`,
      resource: mcp.url,
      scope: "docs:read",
      state: expect.stringMatching(new RegExp(`^${started.body.flow_id}\\.[0-9a-f]{64}$`)),
    });
    expect(as.counts.register).toBe(1);
    expect(await secretOfFlow(project, started.body.flow_id)).toEqual([]);

    const callback = await approve(started.body.authorization_url, project.session);
    expect(callback.status, callback.text).toBe(200);
    expect(callback.text).toContain("MCP server connected");
    expect(as.counts.code).toBe(1);
    expect(as.lastResource()).toBe(mcp.url);
    const found = await secretOfFlow(project, started.body.flow_id);
    expect(found).toEqual([
      expect.objectContaining({
        name: "docs oauth",
        kind: "oauth_token_set",
        owner: { kind: "project", project_id: project.projectId },
        metadata: { team: "docs", mcp_url: mcp.url },
        current_version_number: 1,
        payload_keys: ["access_token", "access_token_expires_in_seconds", "mcp_url", "refresh", "scopes", "token_type"],
      }),
    ]);
    expect(callback.text).toContain(found[0].id);

    // Listing the server's tools with the secret works as is: the token is fresh, nothing is refreshed.
    const tools = await listTools(project, found[0].id);
    expect(tools.status, tools.text).toBe(200);
    expect(tools.body.tools).toHaveLength(4);
    expect(as.counts.refresh).toBe(0);
  });

  it("uses the callback once, and only with a state svc signed", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const started = await startFlow(project);
    const redirect = await fetch(started.body.authorization_url, { redirect: "manual" });
    const search = new URL(redirect.headers.get("location")!).search;
    const forged = new URLSearchParams(search);
    forged.set("state", `${started.body.flow_id}.${"0".repeat(64)}`);
    const refused = await server.api.get(`${CALLBACK}?${forged}`, { session: project.session });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain("not issued by svc");

    expect((await server.api.get(`${CALLBACK}${search}`, { session: project.session })).status).toBe(200);
    const replay = await server.api.get(`${CALLBACK}${search}`, { session: project.session });
    expect(replay.status).toBe(400);
    expect(replay.text).toContain("already used");
    expect(await secretOfFlow(project, started.body.flow_id)).toHaveLength(1);
    expect(as.counts.code).toBe(1);
  });

  it("stores the tokens only for the user who started the flow, in that user's browser session", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const started = await startFlow(project);
    const search = await approvedQuery(started.body.authorization_url);

    // An attacker's link opened by someone else: no session is 401, another user's session is 403.
    const anonymous = await server.api.get(`${CALLBACK}${search}`);
    expect(anonymous.status, anonymous.text).toBe(401);
    const victim = await server.api.signup();
    const foreign = await server.api.get(`${CALLBACK}${search}`, { session: victim });
    expect(foreign.status, foreign.text).toBe(403);
    expect(foreign.body.code).toBe("forbidden");
    const bearer = await server.api.get(`${CALLBACK}${search}`, { token: project.token });
    expect(bearer.status, bearer.text).toBe(403);
    expect(await secretOfFlow(project, started.body.flow_id)).toEqual([]);
    expect(as.counts.code).toBe(0);

    // The flow is still the starter's to finish.
    const own = await server.api.get(`${CALLBACK}${search}`, { session: project.session });
    expect(own.status, own.text).toBe(200);
    expect(await secretOfFlow(project, started.body.flow_id)).toHaveLength(1);
  });

  it("is started by a person only: an organization API key cannot finish the flow in a browser", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const key = await server.api.orgKey(project.session, project.orgId, "admin");
    const refused = await server.api.post(
      `/api/v1/orgs/${project.orgId}/secrets/mcp-oauth`,
      { owner: { kind: "org" }, mcp_url: mcp.url, name: "by key" },
      { token: key.token },
    );
    expect(refused.status, refused.text).toBe(403);
    expect(as.counts.register).toBe(0);
  });

  it("sends the browser back to return_to with the outcome, a denial included", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const started = await startFlow(project, { return_to: "/settings/secrets" });
    expect(started.status, started.text).toBe(201);
    const callback = await approve(started.body.authorization_url, project.session);
    expect(callback.status).toBe(303);
    const back = new URL(callback.headers.get("location")!);
    expect(`${back.origin}${back.pathname}`).toBe(`${TEST_ORIGIN}/settings/secrets`);
    const [stored] = await secretOfFlow(project, started.body.flow_id);
    expect(Object.fromEntries(back.searchParams)).toEqual({ mcp_oauth_flow_id: started.body.flow_id, status: "connected", secret_id: stored.id });

    as.deny(true);
    const denied = await startFlow(project, { name: "denied", return_to: `${TEST_ORIGIN}/back` });
    const refused = await approve(denied.body.authorization_url, project.session);
    const outcome = new URL(refused.headers.get("location")!).searchParams;
    expect(outcome.get("status")).toBe("failed");
    expect(outcome.get("error")).toContain("access_denied");
    expect(await secretOfFlow(project, denied.body.flow_id)).toEqual([]);
  });

  it("refuses what it cannot do before any redirect: a taken name, a foreign return_to, a reserved key, a server without OAuth", async () => {
    const { project } = await connected();
    const taken = await startFlow(project);
    expect(taken.status, taken.text).toBe(409);
    const foreign = await startFlow(project, { name: "x", return_to: "https://evil.example/steal" });
    expect(foreign.status, foreign.text).toBe(400);
    const reserved = await startFlow(project, { name: "x", metadata: { mcp_url: "https://elsewhere" } });
    expect(reserved.status, reserved.text).toBe(400);
    expect(reserved.body.code).toBe("validation_failed");
    mcp.reset();
    const plain = await startFlow(project, { name: "x" });
    expect(plain.status, plain.text).toBe(422);
    expect(plain.body.code).toBe("unprocessable");
    mcp.setDown(true);
    for (const mcpUrl of [mcp.url, "http://127.0.0.1:1/mcp"]) {
      const down = await startFlow(project, { name: "x", mcp_url: mcpUrl });
      expect(down.status, down.text).toBe(502);
      expect(down.body.code).toBe("upstream_unavailable");
    }
  });
});

describe("refreshing an MCP OAuth secret", () => {
  it("refreshes a token near its expiry before listing tools, and stores the new tokens as the next version", async () => {
    as.setAccessTokenSeconds(30);
    const { project, secretId } = await connected();
    const tools = await listTools(project, secretId);
    expect(tools.status, tools.text).toBe(200);
    expect(as.counts.refresh).toBe(1);
    expect((await secret(project, secretId)).current_version_number).toBe(2);
  });

  it("refreshes once for uses that need it at the same time, without losing the tokens", async () => {
    as.setAccessTokenSeconds(30);
    const { project, secretId } = await connected();
    // The stored token is near its expiry; the one a refresh brings is not.
    as.setAccessTokenSeconds(3600);
    const replies = await Promise.all([listTools(project, secretId), listTools(project, secretId), listTools(project, secretId)]);
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(as.counts.refresh).toBe(1);
    expect((await secret(project, secretId)).current_version_number).toBe(2);
  });

  it("refreshes a token the server refuses, once, and a failed refresh is a 422 naming the secret", async () => {
    const { project, secretId } = await connected();
    as.revokeAccessTokens();
    const refreshed = await listTools(project, secretId);
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(as.counts.refresh).toBe(1);

    as.revokeAccessTokens();
    as.failRefresh(true);
    const failed = await listTools(project, secretId);
    expect(failed.status, failed.text).toBe(422);
    expect(failed.body.error).toContain(`"docs oauth" (${secretId}) could not refresh`);
    expect(as.counts.refresh).toBe(2);
  });
});

describe("an agent using an OAuth-protected MCP server", () => {
  const config = (project: AgentProject, secretId: string) =>
    yamlConfig(project, `mcp:\n  docs:\n    url: ${mcp.url}\n    auth: {type: oauth, secret_id: ${secretId}}\n`);

  async function permissionAsked(project: AgentProject, agentId: string) {
    const [permission] = await eventually(
      async () => (await server.api.get(`${project.base}/agents/${agentId}/interactions`, { token: project.token })).body.data ?? [],
      (list: any[]) => list.length === 1,
    );
    return permission;
  }

  async function allow(project: AgentProject, agentId: string, interactionId: string) {
    const reply = await server.api.post(`${project.base}/agents/${agentId}/interactions/${interactionId}/resolve`, { answers: [{ option_indices: [0] }] }, { token: project.token });
    expect(reply.status, reply.text).toBe(200);
  }

  const toolResults = (list: any[]) => list.filter((e) => e.event_kind === "tool_result");

  it("calls a tool after its token expired, refreshed without a person", async () => {
    const { project, secretId } = await connected();
    provider.script({ toolCalls: [{ name: "mcp__docs__greet", input: { name: "Ada" } }] }, { text: "I greeted Ada." });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, config(project, secretId)), "greet Ada");
    // The call waits for permission: meanwhile every token svc holds stops working.
    const permission = await permissionAsked(project, agentId);
    as.revokeAccessTokens();
    await allow(project, agentId, permission.id);
    const list = await untilEvents(server.api, project, agentId, (e) => e.some((x) => x.event_kind === "model_output" && x.stop_reason !== "tool_use"));
    expect(toolResults(list)).toEqual([expect.objectContaining({ outcome: "succeeded", content_blocks: [{ type: "text", text: "Hello, Ada!" }] })]);
    expect(as.counts.refresh).toBe(1);
    expect(mcp.calls()).toHaveLength(1);
    expect(as.isValid(mcp.calls()[0]!.authorization!.slice("Bearer ".length))).toBe(true);
    expect((await secret(project, secretId)).current_version_number).toBe(2);
  });

  it("tells the model which secret failed when the refresh is refused, without retrying in a loop", async () => {
    const { project, secretId } = await connected();
    provider.script({ toolCalls: [{ name: "mcp__docs__greet", input: { name: "Bo" } }] }, { text: "could not greet" });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, config(project, secretId)), "greet Bo");
    const permission = await permissionAsked(project, agentId);
    as.revokeAccessTokens();
    as.failRefresh(true);
    await allow(project, agentId, permission.id);
    const list = await untilEvents(server.api, project, agentId, (e) => e.some((x) => x.event_kind === "model_output" && x.stop_reason !== "tool_use"));
    const [result] = toolResults(list);
    expect(result.outcome).toBe("failed");
    expect(result.content_blocks[0].text).toContain(`the OAuth secret "docs oauth" (${secretId}) could not refresh its access token`);
    expect(requestText(provider, 1)).toContain("could not refresh its access token");
    expect(as.counts.refresh).toBe(1);
    expect(mcp.calls()).toHaveLength(0);
  });
});
