import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { ALL_BOT_SCOPES, startFakeSlack } from "../support/fake-slack.js";
import { TEST_ORIGIN, useTestServer } from "../support/server.js";
import { createIntegration, expectClosedIntegration, integrationProject, slackSecret } from "./integrations-fixtures.js";

const slack = await startFakeSlack();
const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true", SVC_SLACK_API_URL: slack.apiUrl, SVC_SLACK_AUTHORIZE_URL: "https://slack.test/oauth/v2/authorize" });
afterAll(() => slack.close());
beforeEach(() => slack.reset());

/** A project with a Slack integration and a bot whose credential secret the project owns. */
async function connectable(name = "eng") {
  const p = await integrationProject(server.api);
  const integration = await createIntegration(server.api, p, name);
  const bot = slack.addBot();
  const secretId = await slackSecret(server.api, p, bot.token);
  return { p, bot, secretId, path: `${p.integrations}/${integration.id}`, integration };
}

describe("integrations: setup and credentials", () => {
  it("verifies the bot with auth.test, then connects: active, identity saved, setup_revision bumped", async () => {
    const { p, bot, secretId, path } = await connectable();
    const reply = await server.api.post(
      `${path}/setup`,
      { expected_setup_revision: 1, provider_tenant_id: bot.teamId, credential_secret_id: secretId, provider_agent_display_name: "  Eng bot  ", provider_config: {} },
      { token: p.token },
    );
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({
      state: "active",
      setup_revision: 2,
      provider_tenant_id: bot.teamId,
      provider_account_ref: bot.botUserId,
      provider_agent_display_name: "Eng bot",
      credential_secret_id: secretId,
      provider_config: {},
    });
    // bot_mention is GitHub's alone (spec: Integration).
    expect(reply.body).not.toHaveProperty("bot_mention");
    expectClosedIntegration(reply.body);
    expect(reply.text).not.toContain("SENTINEL");
    expect(slack.calls).toEqual([{ method: "auth.test", token: bot.token, args: {}, status: 200 }]);
    expect((await server.api.get(path, { token: p.token })).body).toEqual(reply.body);
  });

  it("answers 409 to a stale expected_setup_revision, before asking Slack", async () => {
    const { p, secretId, path } = await connectable();
    const first = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: secretId }, { token: p.token });
    expect(first.status, first.text).toBe(200);
    slack.reset();
    const stale = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: secretId }, { token: p.token });
    expect(stale.status, stale.text).toBe(409);
    expect(stale.body.code).toBe("conflict");
    expect(slack.calls).toHaveLength(0);
    expect((await server.api.get(path, { token: p.token })).body.setup_revision).toBe(2);
  });

  it("refuses a credential of another workspace or bot than claimed, and a token Slack refuses; nothing is saved", async () => {
    const { p, bot, secretId, path, integration } = await connectable();
    const auth = { token: p.token };
    const wrongTeam = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, provider_tenant_id: "T0THEROTHER", credential_secret_id: secretId }, auth);
    expect(wrongTeam.status, wrongTeam.text).toBe(400);
    expect(wrongTeam.body).toEqual({
      error: expect.any(String),
      code: "validation_failed",
      issues: [{ path: "/provider_tenant_id", message: expect.stringContaining(bot.teamId) }],
    });
    const wrongBot = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, provider_account_ref: "U0THER", credential_secret_id: secretId }, auth);
    expect(wrongBot.status).toBe(400);
    expect(wrongBot.body.issues[0].path).toBe("/provider_account_ref");
    slack.revoke(bot.token);
    const revoked = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: secretId }, auth);
    expect(revoked.status).toBe(400);
    expect(revoked.body.issues).toEqual([{ path: "/credential_secret_id", message: expect.stringContaining("token_revoked") }]);
    const unknown = await slackSecret(server.api, p, "xoxb-unknown");
    const refused = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: unknown }, auth);
    expect(refused.body.issues[0].message).toContain("invalid_auth");
    expect((await server.api.get(path, auth)).body).toEqual(integration);
  });

  it("refuses a secret of another kind (400), one the project cannot use (404), a non-empty provider_config and an organization key", async () => {
    const { p, secretId, path, integration } = await connectable();
    const auth = { token: p.token };
    const generic = await server.api.post(`/api/v1/orgs/${p.orgId}/secrets`, { owner: { kind: "project", project_id: p.projectId }, name: "g", material: { kind: "generic", value: "xoxb-1" } }, auth);
    const wrongKind = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: generic.body.id }, auth);
    expect(wrongKind.status).toBe(400);
    expect(wrongKind.body.issues[0].path).toBe("/credential_secret_id");
    const other = await server.api.post(`/api/v1/orgs/${p.orgId}/projects`, { name: "Other" }, auth);
    const elsewhere = await slackSecret(server.api, p, "xoxb-elsewhere", other.body.id);
    const notVisible = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: elsewhere }, auth);
    expect(notVisible.status).toBe(404);
    const configured = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: secretId, provider_config: { public_key: "ab" } }, auth);
    expect(configured.status).toBe(400);
    expect(configured.body.issues[0].path).toBe("/provider_config");
    const long = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: secretId, provider_agent_display_name: "é".repeat(257) }, auth);
    expect(long.status).toBe(400);
    expect(long.body.issues[0].path).toBe("/provider_agent_display_name");
    const key = await server.api.orgKey(p.session, p.orgId, "admin");
    const byKey = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: secretId }, { token: key.token });
    expect(byKey.status).toBe(403);
    expect(slack.calls).toHaveLength(0);
    expect((await server.api.get(path, auth)).body).toEqual(integration);
  });

  it("answers Slack's rate limit as 429 with its Retry-After, and an outage as 502; nothing is saved", async () => {
    const { p, secretId, path, integration } = await connectable();
    slack.rateLimitNext("auth.test", 17);
    const limited = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: secretId }, { token: p.token });
    expect(limited.status, limited.text).toBe(429);
    expect(limited.body.code).toBe("rate_limited");
    expect(limited.headers.get("retry-after")).toBe("17");
    // Slack refuses every call inside the Retry-After window: end it before the outage.
    slack.reset();
    slack.failNext("auth.test", 503);
    const down = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: secretId }, { token: p.token });
    expect(down.status, down.text).toBe(502);
    expect(down.body.code).toBe("upstream_unavailable");
    expect((await server.api.get(path, { token: p.token })).body).toEqual(integration);
  });

  it("disconnects keeping the identity and credential, reconnects with the kept credential read live after rotation", async () => {
    const { p, bot, secretId, path } = await connectable();
    const auth = { token: p.token };
    const connected = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: secretId }, auth);
    expect(connected.status, connected.text).toBe(200);
    const off = await server.api.post(`${path}/disconnect`, undefined, auth);
    expect(off.status, off.text).toBe(200);
    expect(off.body).toEqual({ ...connected.body, state: "disconnected", setup_revision: 3, updated_at: expect.any(String) });
    const twice = await server.api.post(`${path}/disconnect`, undefined, auth);
    expect(twice.body.setup_revision).toBe(3);

    // Rotate the bot token in the same secret; the integration is not rewritten.
    const rotated = slack.addBot({ teamId: bot.teamId, botUserId: bot.botUserId, botId: bot.botId });
    const version = await server.api.post(
      `/api/v1/orgs/${p.orgId}/secrets/${secretId}/versions`,
      { material: { kind: "slack_app_credentials", access_token: rotated.token, client_id: "1.2", client_secret: "s", signing_secret: "g" } },
      auth,
    );
    expect(version.status, version.text).toBe(200);
    slack.reset();
    const stale = await server.api.post(`${path}/reconnect`, { expected_setup_revision: 2 }, auth);
    expect(stale.status).toBe(409);
    const on = await server.api.post(`${path}/reconnect`, { expected_setup_revision: 3 }, auth);
    expect(on.status, on.text).toBe(200);
    expect(on.body).toMatchObject({ state: "active", setup_revision: 4, credential_secret_id: secretId, provider_tenant_id: bot.teamId });
    expect(slack.calls.map((c) => c.token)).toEqual([rotated.token]);

    // A credential of another workspace cannot take over a connected integration.
    const stranger = slack.addBot();
    const strangerSecret = await slackSecret(server.api, p, stranger.token);
    const takeover = await server.api.post(`${path}/setup`, { expected_setup_revision: 4, credential_secret_id: strangerSecret }, auth);
    expect(takeover.status, takeover.text).toBe(409);
    expect((await server.api.get(path, auth)).body.credential_secret_id).toBe(secretId);
  });

  it("keeps the credential from being deleted while in use, and releases it when the integration is deleted", async () => {
    const { p, secretId, path } = await connectable();
    const auth = { token: p.token };
    expect((await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: secretId }, auth)).status).toBe(200);
    const inUse = await server.api.delete(`/api/v1/orgs/${p.orgId}/secrets/${secretId}`, auth);
    expect(inUse.status, inUse.text).toBe(409);
    expect((await server.api.delete(path, auth)).status).toBe(204);
    expect((await server.api.delete(`/api/v1/orgs/${p.orgId}/secrets/${secretId}`, auth)).status).toBe(204);
  });
});

describe("integrations: the Slack OAuth install", () => {
  const app = { client_id: "1111.2222", client_secret: "app-secret-SENTINEL", signing_secret: "signing-SENTINEL" };

  async function started(returnTo?: string) {
    const { p, path, integration } = await connectable();
    const reply = await server.api.post(`${path}/oauth/setup`, { ...app, ...(returnTo ? { return_to: returnTo } : {}) }, { token: p.token });
    expect(reply.status, reply.text).toBe(201);
    const state = new URL(reply.body.oauth_url).searchParams.get("state")!;
    return { p, path, integration, setup: reply.body, state };
  }

  const callback = (query: Record<string, string>) => `/api/integrations/oauth/callback?${new URLSearchParams(query)}`;

  it("answers the consent URL and Slack's URLs, then the callback trades the code and connects the integration", async () => {
    const { p, path, setup, state } = await started();
    expect(setup).toEqual({
      provider: "slack",
      flow_id: expect.stringMatching(/^ioaf_[a-z2-7]{26}$/),
      oauth_url: expect.stringMatching(/^https:\/\/slack\.test\/oauth\/v2\/authorize\?/),
      redirect_uri: `${TEST_ORIGIN}/api/integrations/oauth/callback`,
      events_url: `${TEST_ORIGIN}/api/integrations/slack/events`,
      actions_url: `${TEST_ORIGIN}/api/integrations/slack/actions`,
      expires_at: expect.any(String),
    });
    const consent = new URL(setup.oauth_url).searchParams;
    expect(consent.get("client_id")).toBe(app.client_id);
    expect(consent.get("redirect_uri")).toBe(setup.redirect_uri);
    expect(consent.get("scope")).toBe(ALL_BOT_SCOPES);
    expect(JSON.stringify(setup)).not.toContain("SENTINEL");

    const bot = { token: "xoxb-installed-SENTINEL", teamId: "T0INSTALL", teamName: "Installers", botUserId: "U0BOT", botId: "B0BOT", appId: "A0APP" };
    slack.addInstall({ clientId: app.client_id, clientSecret: app.client_secret, code: "code-1", bot, scope: ALL_BOT_SCOPES });
    const done = await server.api.get(callback({ code: "code-1", state }), { session: p.session });
    expect(done.status, done.text).toBe(200);
    expect(done.headers.get("content-type")).toContain("text/html");
    expect(slack.calls.map((c) => c.method)).toEqual(["oauth.v2.access", "auth.test"]);
    expect(slack.calls[0]!.args).toEqual({ client_id: app.client_id, client_secret: app.client_secret, code: "code-1", redirect_uri: setup.redirect_uri });

    const integration = (await server.api.get(path, { token: p.token })).body;
    expect(integration).toMatchObject({ state: "active", setup_revision: 2, last_oauth_flow_id: setup.flow_id, provider_tenant_id: "T0INSTALL", provider_account_ref: "U0BOT" });
    const secret = await server.api.get(`/api/v1/orgs/${p.orgId}/secrets/${integration.credential_secret_id}`, { token: p.token });
    expect(secret.body).toMatchObject({ kind: "slack_app_credentials", owner: { kind: "project", project_id: p.projectId } });
    expect(secret.body.payload_keys).toEqual(["access_token", "client_id", "client_secret", "signing_secret"]);

    // The state is good once.
    const replay = await server.api.get(callback({ code: "code-1", state }), { session: p.session });
    expect(replay.status).toBe(400);
    expect((await server.api.get(path, { token: p.token })).body.setup_revision).toBe(2);
  });

  it("refuses a forged state, another user's browser, and a caller without a browser session", async () => {
    const { p, path, integration, state } = await started();
    slack.addInstall({ clientId: app.client_id, clientSecret: app.client_secret, code: "code-2", bot: slack.addBot(), scope: ALL_BOT_SCOPES });
    const forged = await server.api.get(callback({ code: "code-2", state: `${state.split(".")[0]}.${"0".repeat(64)}` }), { session: p.session });
    expect(forged.status).toBe(400);
    const intruder = await server.api.signup();
    const otherUser = await server.api.get(callback({ code: "code-2", state }), { session: intruder });
    expect(otherUser.status).toBe(403);
    const byToken = await server.api.get(callback({ code: "code-2", state }), { token: p.token });
    expect(byToken.status).toBe(403);
    expect(slack.calls.filter((c) => c.method === "oauth.v2.access")).toHaveLength(0);
    expect((await server.api.get(path, { token: p.token })).body).toEqual(integration);
  });

  it("sends the browser back to return_to with the outcome, and saves nothing when Slack refuses the code or the user declines", async () => {
    const { p, path, integration, state } = await started("/console/integrations?tab=slack");
    const declined = await server.api.get(callback({ error: "access_denied", state }), { session: p.session });
    expect(declined.status).toBe(303);
    expect(declined.headers.get("location")).toBe("/console/integrations?tab=slack&integration_oauth_error=access_denied");
    const badCode = await server.api.get(callback({ code: "never-issued", state }), { session: p.session });
    expect(badCode.status).toBe(303);
    expect(badCode.headers.get("location")).toContain("integration_oauth_error=install_refused");
    expect((await server.api.get(path, { token: p.token })).body).toEqual(integration);
    const bot = slack.addBot();
    slack.addInstall({ clientId: app.client_id, clientSecret: app.client_secret, code: "code-3", bot, scope: ALL_BOT_SCOPES });
    const ok = await server.api.get(callback({ code: "code-3", state }), { session: p.session });
    expect(ok.headers.get("location")).toBe("/console/integrations?tab=slack&integration_oauth=success");
  });

  it("takes any return_to and sends the browser back only to a path on svc's origin, otherwise to /", async () => {
    for (const foreign of ["//evil.example", "https://evil.example/steal", "/\\evil.example", "javascript:alert(1)", "relative/path"]) {
      const { p, state } = await started(foreign);
      const back = await server.api.get(callback({ error: "access_denied", state }), { session: p.session });
      expect(back.status, foreign).toBe(303);
      expect(back.headers.get("location"), foreign).toBe("/?integration_oauth_error=access_denied");
    }
  });
});
