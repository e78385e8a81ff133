import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { ALL_BOT_SCOPES, startFakeSlack } from "../support/fake-slack.js";
import { collectPages } from "../support/paging.js";
import { TEST_ORIGIN, useTestServer } from "../support/server.js";
import { createIntegration, createProfile, integrationProject, ISO, slackSecret } from "./integrations-fixtures.js";

const slack = await startFakeSlack();
const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true", SVC_SLACK_API_URL: slack.apiUrl, SVC_SLACK_AUTHORIZE_URL: "https://slack.test/oauth/v2/authorize" });
afterAll(() => slack.close());
beforeEach(() => slack.reset());

const app = { client_id: "3333.4444", client_secret: "app-secret-SENTINEL", signing_secret: "signing-SENTINEL" };
const INSTALL_MEMBERS = [
  "id",
  "org_id",
  "project_id",
  "agent_profile_id",
  "provider",
  "integration_kind",
  "connection_mode",
  "state",
  "provider_tenant_id",
  "provider_account_ref",
  "provider_agent_display_name",
  "created_at",
  "updated_at",
];
const callback = (query: Record<string, string>) => `/api/integrations/oauth/callback?${new URLSearchParams(query)}`;
const stateOf = (oauthUrl: string) => new URL(oauthUrl).searchParams.get("state")!;
const suffix = (id: string) => id.slice(id.indexOf("_") + 1);

async function profileProject() {
  const p = await integrationProject(server.api);
  const profile = await createProfile(server.api, p);
  return { p, profile, installs: `${p.base}/integration-installs`, setups: `${p.base}/agent-profiles/${profile}` };
}

/** A slack_thread integration offering `profiles`, connected through setup with a fresh bot and `displayName`. */
async function connected(p: Awaited<ReturnType<typeof profileProject>>["p"], name: string, profiles: string[], displayName = "") {
  const made = await createIntegration(server.api, p, name, { launcher: { profiles } });
  const bot = slack.addBot();
  const secretId = await slackSecret(server.api, p, bot.token);
  const reply = await server.api.post(
    `${p.integrations}/${made.id}/setup`,
    { expected_setup_revision: 1, credential_secret_id: secretId, provider_agent_display_name: displayName },
    { token: p.token },
  );
  expect(reply.status, reply.text).toBe(200);
  return { integration: reply.body, bot, secretId };
}

describe("integration installs: profile-bound OAuth setup", () => {
  it("integration-oauth/setup creates a disconnected integration offering only the profile; the callback connects it and it lists as an install", async () => {
    const { p, profile, installs, setups } = await profileProject();
    const reply = await server.api.post(`${setups}/integration-oauth/setup`, { provider: "slack", ...app }, { token: p.token });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body).toEqual({
      provider: "slack",
      flow_id: expect.stringMatching(/^ioaf_[a-z2-7]{26}$/),
      oauth_url: expect.stringMatching(/^https:\/\/slack\.test\/oauth\/v2\/authorize\?/),
      redirect_uri: `${TEST_ORIGIN}/api/integrations/oauth/callback`,
      events_url: `${TEST_ORIGIN}/api/integrations/slack/events`,
      actions_url: `${TEST_ORIGIN}/api/integrations/slack/actions`,
      expires_at: expect.stringMatching(ISO),
    });
    expect(reply.text).not.toContain("SENTINEL");
    expect(new URL(reply.body.oauth_url).searchParams.get("client_id")).toBe(app.client_id);

    // Before the callback: an integration waiting for its install, and no install.
    const pending = await server.api.get(p.integrations, { token: p.token });
    expect(pending.body.data).toHaveLength(1);
    const integration = pending.body.data[0];
    expect(integration).toMatchObject({ state: "disconnected", integration_kind: "slack_thread", settings: { launcher: { profiles: [profile] } }, name: expect.stringMatching(/^slack-[0-9a-f]{8}$/) });
    expect((await server.api.get(installs, { token: p.token })).body).toEqual({ data: [], next_cursor: null });

    const bot = { token: "xoxb-profile-SENTINEL", teamId: "T0PROFILE", teamName: "Profiles", botUserId: "U0PBOT", botId: "B0PBOT", appId: "A0PAPP" };
    slack.addInstall({ clientId: app.client_id, clientSecret: app.client_secret, code: "code-p1", bot, scope: ALL_BOT_SCOPES });
    const done = await server.api.get(callback({ code: "code-p1", state: stateOf(reply.body.oauth_url) }), { session: p.session });
    expect(done.status, done.text).toBe(200);

    const listed = await server.api.get(`${installs}?oauth_flow_id=${reply.body.flow_id}`, { token: p.token });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body).toEqual({
      data: [
        {
          id: `iin_${suffix(integration.id)}`,
          org_id: p.orgId,
          project_id: p.projectId,
          agent_profile_id: profile,
          provider: "slack",
          integration_kind: "slack_thread",
          connection_mode: "events_api",
          state: "active",
          provider_tenant_id: "T0PROFILE",
          provider_account_ref: "U0PBOT",
          provider_agent_display_name: "",
          created_at: integration.created_at,
          updated_at: expect.stringMatching(ISO),
        },
      ],
      next_cursor: null,
    });
    const connectedNow = await server.api.get(`${p.integrations}/${integration.id}`, { token: p.token });
    expect(connectedNow.body).toMatchObject({ state: "active", last_oauth_flow_id: reply.body.flow_id, credential_secret_id: expect.stringMatching(/^sec_/) });
    // Another flow's id and another profile find nothing.
    for (const flow of [`ioaf_${"a".repeat(26)}`, `ioaf_${"b".repeat(26)}`]) {
      const otherFlow = await server.api.get(`${installs}?oauth_flow_id=${flow}`, { token: p.token });
      expect(otherFlow.body, flow).toEqual({ data: [], next_cursor: null });
    }
    const otherProfile = await createProfile(server.api, p);
    expect((await server.api.get(`${installs}?agent_profile_id=${otherProfile}`, { token: p.token })).body.data).toEqual([]);
  });

  it("slack-setup creates the Slack app from svc's manifest with the configuration token, and the callback completes it", async () => {
    const { p, profile, installs, setups } = await profileProject();
    slack.manifests.addConfigToken("xoxe.xoxp-config-SENTINEL");
    const reply = await server.api.post(`${setups}/slack-setup`, { app_name: "Eng Helper", app_configuration_token: "xoxe.xoxp-config-SENTINEL", return_to: "/console/profiles" }, { token: p.token });
    expect(reply.status, reply.text).toBe(201);
    const created = slack.manifests.apps.at(-1)!;
    expect(reply.body).toEqual({
      provider: "slack",
      flow_id: expect.stringMatching(/^ioaf_[a-z2-7]{26}$/),
      slack_app_id: created.appId,
      oauth_url: expect.stringMatching(/^https:\/\/slack\.test\/oauth\/v2\/authorize\?/),
      redirect_uri: `${TEST_ORIGIN}/api/integrations/oauth/callback`,
      events_url: `${TEST_ORIGIN}/api/integrations/slack/events`,
      actions_url: `${TEST_ORIGIN}/api/integrations/slack/actions`,
      expires_at: expect.stringMatching(ISO),
    });
    expect(reply.text).not.toContain("SENTINEL");
    expect(reply.text).not.toContain(created.clientSecret);
    expect(slack.calls.map((c) => [c.method, c.token])).toEqual([["apps.manifest.create", "xoxe.xoxp-config-SENTINEL"]]);
    expect(created.manifest).toEqual({
      display_information: { name: "Eng Helper" },
      features: { bot_user: { display_name: "Eng Helper", always_online: true } },
      oauth_config: { redirect_urls: [reply.body.redirect_uri], scopes: { bot: ALL_BOT_SCOPES.split(",") } },
      settings: {
        event_subscriptions: {
          request_url: reply.body.events_url,
          bot_events: ["app_mention", "message.channels", "message.groups", "message.im", "message.mpim", "tokens_revoked", "app_uninstalled"],
        },
        interactivity: { is_enabled: true, request_url: reply.body.actions_url },
        org_deploy_enabled: false,
        socket_mode_enabled: false,
        token_rotation_enabled: false,
      },
    });
    const consent = new URL(reply.body.oauth_url).searchParams;
    expect(consent.get("client_id")).toBe(created.clientId);
    expect(consent.get("scope")).toBe(ALL_BOT_SCOPES);

    const bot = slack.addBot();
    slack.addInstall({ clientId: created.clientId, clientSecret: created.clientSecret, code: "code-s1", bot, scope: ALL_BOT_SCOPES });
    const done = await server.api.get(callback({ code: "code-s1", state: stateOf(reply.body.oauth_url) }), { session: p.session });
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe("/console/profiles?integration_oauth=success");
    expect(slack.calls.find((c) => c.method === "oauth.v2.access")!.args).toMatchObject({ client_id: created.clientId, client_secret: created.clientSecret });

    const listed = await server.api.get(`${installs}?agent_profile_id=${profile}`, { token: p.token });
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0]).toMatchObject({ agent_profile_id: profile, state: "active", provider_tenant_id: bot.teamId, provider_account_ref: bot.botUserId, provider_agent_display_name: "Eng Helper" });
    const integration = (await server.api.get(`${p.integrations}/${listed.body.data[0].id.replace("iin_", "itg_")}`, { token: p.token })).body;
    const secret = await server.api.get(`/api/v1/orgs/${p.orgId}/secrets/${integration.credential_secret_id}`, { token: p.token });
    expect(secret.body).toMatchObject({ kind: "slack_app_credentials", payload_keys: ["access_token", "client_id", "client_secret", "signing_secret"] });
  });
});

describe("integration installs: list and delete", () => {
  it("lists connected Slack integrations offering a profile, newest first, filtered, sorted and paged", async () => {
    const { p, profile: a, installs } = await profileProject();
    const b = await createProfile(server.api, p);
    const one = await connected(p, "one", [a], "Bravo bot");
    const two = await connected(p, "two", [a, b], "Alpha bot");
    await connected(p, "none", [], "No launcher");
    await createIntegration(server.api, p, "waiting", { launcher: { profiles: [b] } });
    const iin = (x: { integration: { id: string } }) => `iin_${suffix(x.integration.id)}`;
    const auth = { token: p.token };

    const all = await collectPages(server.api, `${installs}?limit=1`, auth, (reply) => expect(reply.body.data.length).toBeLessThanOrEqual(1));
    expect(all.map((x) => [x.id, x.agent_profile_id])).toEqual([
      [iin(two), a],
      [iin(one), a],
    ]);
    for (const item of all) expect(Object.keys(item).sort()).toEqual([...INSTALL_MEMBERS].sort());
    const forB = await server.api.get(`${installs}?agent_profile_id=${b}`, auth);
    expect(forB.body.data.map((x: { id: string; agent_profile_id: string }) => [x.id, x.agent_profile_id])).toEqual([[iin(two), b]]);
    const byName = await collectPages(server.api, `${installs}?sort=name&limit=1`, auth);
    expect(byName.map((x) => x.provider_agent_display_name)).toEqual(["Alpha bot", "Bravo bot"]);
    const named = await server.api.get(`${installs}?name=bravo*`, auth);
    expect(named.body.data.map((x: { id: string }) => x.id)).toEqual([iin(one)]);

    // A disconnected integration is a disabled install.
    expect((await server.api.post(`${p.integrations}/${one.integration.id}/disconnect`, undefined, auth)).status).toBe(200);
    const after = await server.api.get(`${installs}?name=bravo*`, auth);
    expect(after.body.data[0]).toMatchObject({ id: iin(one), state: "disabled", provider_tenant_id: one.bot.teamId });
  });

  it("delete removes the integration behind the install and releases its credential; profiles stay; a non-install is 404", async () => {
    const { p, profile, installs } = await profileProject();
    const auth = { token: p.token };
    const { integration, secretId } = await connected(p, "eng", [profile]);
    const bare = await connected(p, "bare", []);
    const install = `${installs}/iin_${suffix(integration.id)}`;

    const viewer = await server.api.orgMember(auth, p.orgId);
    const role = await server.api.put(`/api/v1/orgs/${p.orgId}/members/${viewer.userId}/projects/${p.projectId}`, { role: "viewer" }, auth);
    expect(role.status, role.text).toBe(200);
    expect((await server.api.get(installs, { token: viewer.token })).body.data).toHaveLength(1);
    expect((await server.api.delete(install, { token: viewer.token })).status).toBe(403);

    const notInstall = await server.api.delete(`${installs}/iin_${suffix(bare.integration.id)}`, auth);
    expect(notInstall.status).toBe(404);
    expect(notInstall.body.code).toBe("not_found");
    expect((await server.api.get(`${p.integrations}/${bare.integration.id}`, auth)).status).toBe(200);

    const deleted = await server.api.delete(install, auth);
    expect(deleted.status, deleted.text).toBe(204);
    expect((await server.api.get(`${p.integrations}/${integration.id}`, auth)).status).toBe(404);
    expect((await server.api.get(installs, auth)).body.data).toEqual([]);
    expect((await server.api.get(`${p.base}/agent-profiles/${profile}`, auth)).status).toBe(200);
    // Nothing references the credential any more, so it can go; Slack was not asked to revoke anything.
    expect((await server.api.delete(`/api/v1/orgs/${p.orgId}/secrets/${secretId}`, auth)).status).toBe(204);
    expect(slack.calls.map((c) => c.method).filter((m) => m !== "auth.test")).toEqual([]);
    expect((await server.api.delete(install, auth)).status).toBe(404);
    expect((await server.api.delete(`${installs}/itg_${suffix(integration.id)}`, auth)).status).toBe(404);
  });
});

describe("integration installs: errors", () => {
  it("refuses a bad profile, a caller without permission and a caller that is not a user, saving nothing", async () => {
    const { p, installs } = await profileProject();
    const auth = { token: p.token };
    const missing = `${p.base}/agent-profiles/aprf_${"b".repeat(26)}`;
    slack.manifests.addConfigToken("xoxe-config-errors");
    const slackBody = { app_name: "Helper", app_configuration_token: "xoxe-config-errors" };
    for (const [path, body] of [
      [`${missing}/integration-oauth/setup`, app],
      [`${missing}/slack-setup`, slackBody],
    ] as const) {
      const reply = await server.api.post(path, body, auth);
      expect(reply.status, reply.text).toBe(404);
      expect(reply.body.code).toBe("not_found");
    }
    // A profile of another project is not this project's.
    const other = await profileProject();
    const foreign = await server.api.post(`${p.base}/agent-profiles/${other.profile}/integration-oauth/setup`, app, auth);
    expect(foreign.status).toBe(404);
    const outsider = await server.api.get(installs, { token: other.p.token });
    expect(outsider.status).toBe(404);

    const setups = `${p.base}/agent-profiles/${await createProfile(server.api, p)}`;
    const viewer = await server.api.orgMember(auth, p.orgId);
    await server.api.put(`/api/v1/orgs/${p.orgId}/members/${viewer.userId}/projects/${p.projectId}`, { role: "viewer" }, auth);
    expect((await server.api.post(`${setups}/integration-oauth/setup`, app, { token: viewer.token })).status).toBe(403);
    expect((await server.api.post(`${setups}/slack-setup`, slackBody, { token: viewer.token })).status).toBe(403);
    const key = await server.api.orgKey(p.session, p.orgId, "admin");
    expect((await server.api.post(`${setups}/integration-oauth/setup`, app, { token: key.token })).status).toBe(403);
    expect((await server.api.post(`${setups}/slack-setup`, slackBody, { token: key.token })).status).toBe(403);
    expect((await server.api.post(`${setups}/slack-setup`, slackBody)).status).toBe(401);
    expect(slack.calls).toEqual([]);
    expect((await server.api.get(p.integrations, auth)).body.data).toEqual([]);
  });

  it("answers 400 for bad bodies (validation_failed with issues) and bad queries", async () => {
    const { p, installs, setups } = await profileProject();
    const auth = { token: p.token };
    const cases: Array<[string, object, string]> = [
      ["integration-oauth/setup", { ...app, extra: 1 }, "/extra"],
      ["integration-oauth/setup", { client_id: "1", signing_secret: "s" }, "/client_secret"],
      ["integration-oauth/setup", { ...app, provider: "discord" }, "/provider"],
      ["integration-oauth/setup", { ...app, client_id: "" }, "/client_id"],
      ["slack-setup", { app_name: "x".repeat(36), app_configuration_token: "t" }, "/app_name"],
      ["slack-setup", { app_name: "Helper" }, "/app_configuration_token"],
      ["slack-setup", { app_name: "Helper", app_configuration_token: "xoxe\r\nX-Injected: 1" }, "/app_configuration_token"],
      ["slack-setup", { app_name: "Helper", app_configuration_token: "t", icon: { data_base64: "AA==" } }, "/icon"],
    ];
    for (const [route, body, path] of cases) {
      const reply = await server.api.post(`${setups}/${route}`, body, auth);
      expect(reply.status, `${route} ${JSON.stringify(body)}`).toBe(400);
      expect(reply.body.code).toBe("validation_failed");
      expect(reply.body.issues.map((issue: { path: string }) => issue.path)).toContain(path);
    }
    for (const query of ["agent_profile_id=aprf_x", "oauth_flow_id=nope", "limit=0", "sort=kind", "unknown=1"]) {
      const reply = await server.api.get(`${installs}?${query}`, auth);
      expect(reply.status, query).toBe(400);
      // Query parameters are invalid_request, naming the parameter (platform/http/validation.ts).
      expect(reply.body.code, `${query} ${reply.text}`).toBe("invalid_request");
    }
    expect(slack.calls).toEqual([]);
    expect((await server.api.get(p.integrations, auth)).body.data).toEqual([]);
  });

  it("slack-setup reports Slack refusing the token or the name as 400, an outage as 502 and a rate limit as 429, saving nothing", async () => {
    const { p, setups } = await profileProject();
    const auth = { token: p.token };
    slack.manifests.addConfigToken("xoxe-config-good");
    const badToken = await server.api.post(`${setups}/slack-setup`, { app_name: "Helper", app_configuration_token: "xoxe-expired" }, auth);
    expect(badToken.status).toBe(400);
    expect(badToken.body).toMatchObject({ code: "validation_failed", issues: [{ path: "/app_configuration_token", message: expect.stringContaining("invalid_auth") }] });
    const badName = await server.api.post(`${setups}/slack-setup`, { app_name: "My Slack bot", app_configuration_token: "xoxe-config-good" }, auth);
    expect(badName.status).toBe(400);
    expect(badName.body).toMatchObject({ code: "validation_failed", issues: [{ path: "/app_name", message: expect.stringContaining("invalid_manifest") }] });
    slack.manifests.refuseNext([{ message: "Couldn't verify the request URL", pointer: "/settings/event_subscriptions/request_url" }]);
    const unverified = await server.api.post(`${setups}/slack-setup`, { app_name: "Helper", app_configuration_token: "xoxe-config-good" }, auth);
    expect(unverified.status).toBe(400);
    expect(unverified.body.issues).toEqual([
      { path: "", message: "Slack refused the app (invalid_manifest): Couldn't verify the request URL at /settings/event_subscriptions/request_url" },
    ]);
    slack.failNext("apps.manifest.create", 503);
    const outage = await server.api.post(`${setups}/slack-setup`, { app_name: "Helper", app_configuration_token: "xoxe-config-good" }, auth);
    expect(outage.status).toBe(502);
    slack.rateLimitNext("apps.manifest.create", 7);
    const limited = await server.api.post(`${setups}/slack-setup`, { app_name: "Helper", app_configuration_token: "xoxe-config-good" }, auth);
    expect(limited.status).toBe(429);
    expect(slack.calls.map((c) => c.method)).toEqual(Array(5).fill("apps.manifest.create"));
    expect((await server.api.get(p.integrations, auth)).body.data).toEqual([]);
  });
});
