import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { count, eq } from "drizzle-orm";
import { integrationEventReceipts } from "../../src/db/schema/index.js";
import { decodeId } from "../../src/platform/ids.js";
import { eventually } from "../support/agent-loop.js";
import { signDelivery, startFakeGithub, type FakeGithubApp } from "../support/fake-github.js";
import { useTestServer } from "../support/server.js";
import type { AgentProject } from "../support/agents.js";
import { expectClosedIntegration, integrationProject } from "./integrations-fixtures.js";

const github = await startFakeGithub();
const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true", SVC_GITHUB_API_URL: github.apiUrl });
afterAll(() => github.close());
beforeEach(() => github.reset());

async function appSecret(p: AgentProject, app: FakeGithubApp, material: object = {}) {
  const reply = await server.api.post(
    `/api/v1/orgs/${p.orgId}/secrets`,
    {
      owner: { kind: "project", project_id: p.projectId },
      name: `github ${Math.random()}`,
      material: { kind: "github_app_credentials", app_id: app.appId, private_key: app.privateKeyPem, webhook_secret: app.webhookSecret, ...material },
    },
    { token: p.token },
  );
  expect(reply.status, reply.text).toBe(201);
  return reply.body.id as string;
}

/** A project with a github_pr integration, and an installed app whose credentials the project owns. */
async function connectable(name = "reviews") {
  const p = await integrationProject(server.api);
  const created = await server.api.post(p.integrations, { name, integration_kind: "github_pr" }, { token: p.token });
  expect(created.status, created.text).toBe(201);
  const app = github.addApp();
  const installation = github.addInstallation(app);
  const secretId = await appSecret(p, app);
  return { p, app, installation, secretId, path: `${p.integrations}/${created.body.id}`, integration: created.body };
}

describe("integrations: github_pr setup", () => {
  it("verifies the app with its JWT, the installation and a token for it; derives bot_mention from the slug", async () => {
    const { p, app, installation, secretId, path } = await connectable();
    const reply = await server.api.post(
      `${path}/setup`,
      { expected_setup_revision: 1, provider_tenant_id: app.appId, provider_account_ref: installation.id, credential_secret_id: secretId },
      { token: p.token },
    );
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({
      state: "active",
      setup_revision: 2,
      provider_tenant_id: app.appId,
      provider_account_ref: installation.id,
      bot_mention: `@${app.slug}[bot]`,
      provider_config: {},
    });
    expectClosedIntegration(reply.body);
    expect(reply.text).not.toContain("SENTINEL");
    expect(github.calls.map(({ method, path, jwtIssuer }) => ({ method, path, jwtIssuer }))).toEqual([
      { method: "GET", path: "/app", jwtIssuer: app.appId },
      { method: "GET", path: `/app/installations/${installation.id}`, jwtIssuer: app.appId },
      { method: "POST", path: `/app/installations/${installation.id}/access_tokens`, jwtIssuer: app.appId },
    ]);
    // Disconnected, it keeps its identity and bot_mention (spec: Integration states).
    const off = await server.api.post(`${path}/disconnect`, {}, { token: p.token });
    expect(off.body).toMatchObject({ state: "disconnected", bot_mention: `@${app.slug}[bot]`, provider_account_ref: installation.id });
  });

  it("refuses another app, an unknown or suspended installation, a key GitHub refuses, and a missing installation id; nothing is saved", async () => {
    const { p, app, installation, secretId, path, integration } = await connectable();
    const auth = { token: p.token };
    const setup = (body: object, secret = secretId) => server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: secret, ...body }, auth);
    const wrongApp = await setup({ provider_tenant_id: "999", provider_account_ref: installation.id });
    expect(wrongApp.body.issues).toEqual([{ path: "/provider_tenant_id", message: expect.stringContaining(app.appId) }]);
    const noInstallation = await setup({});
    expect(noInstallation.body.issues).toEqual([{ path: "/provider_account_ref", message: expect.stringContaining("required") }]);
    expect(github.calls).toHaveLength(0);
    const unknown = await setup({ provider_account_ref: "424242" });
    expect(unknown.status).toBe(400);
    expect(unknown.body.issues).toEqual([{ path: "/provider_account_ref", message: expect.stringContaining("no installation 424242") }]);
    const suspended = github.addInstallation(app, { suspended: true });
    const refusedToken = await setup({ provider_account_ref: suspended.id });
    expect(refusedToken.body.issues).toEqual([{ path: "/provider_account_ref", message: expect.stringContaining("suspended") }]);
    // Another app's key under this app's id: GitHub cannot verify the JWT.
    const other = github.addApp();
    const forgedKey = await appSecret(p, app, { private_key: other.privateKeyPem });
    const badKey = await setup({ provider_account_ref: installation.id }, forgedKey);
    expect(badKey.body.issues).toEqual([{ path: "/credential_secret_id", message: expect.stringContaining("HTTP 401") }]);
    const noWebhookSecret = await appSecret(p, app, { webhook_secret: undefined });
    const unverifiable = await setup({ provider_account_ref: installation.id }, noWebhookSecret);
    expect(unverifiable.body.issues).toEqual([{ path: "/credential_secret_id", message: expect.stringContaining("webhook_secret") }]);
    const withConfig = await setup({ provider_account_ref: installation.id, provider_config: { x: 1 } });
    expect(withConfig.body.issues).toEqual([{ path: "/provider_config", message: expect.any(String) }]);
    expect((await server.api.get(path, auth)).body).toEqual(integration);
  });

  it("checks launcher settings against the catalog and the project's profiles", async () => {
    const { p, path } = await connectable();
    const launcher = { trigger: "pull_request_opened", scope_kind: "installation", scope_ref: "67890", slots: [{ key: "reviewer", agent_profile_id: "aprf_aeaqcaibaeaqcaibaeaqcaibae" }] };
    const reply = await server.api.put(path, { settings: { launcher } }, { token: p.token });
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body.issues).toEqual([{ path: "/settings/launcher/slots/0/agent_profile_id", message: "is not an agent profile of this project" }]);
    const badTrigger = await server.api.put(path, { settings: { launcher: { ...launcher, trigger: "push" } } }, { token: p.token });
    expect(badTrigger.body.issues[0].path).toBe("/settings/launcher/trigger");
    // Two slots with one key would be one agent: refused, with the profile problems in the same answer.
    const twice = { ...launcher, slots: [launcher.slots[0], { ...launcher.slots[0], agent_profile_id: "aprf_aeaqcaibaeaqcaibaeaqcaibae" }] };
    const repeated = await server.api.put(path, { settings: { launcher: twice } }, { token: p.token });
    expect(repeated.status, repeated.text).toBe(400);
    expect(repeated.body.issues).toContainEqual({ path: "/settings/launcher/slots/1/key", message: "repeats the key of slot 0; each slot needs its own key" });
    expect((await server.api.get(path, { token: p.token })).body.settings).toEqual({});
  });
});

async function connected() {
  const c = await connectable();
  const reply = await server.api.post(
    `${c.path}/setup`,
    { expected_setup_revision: 1, provider_account_ref: c.installation.id, credential_secret_id: c.secretId },
    { token: c.p.token },
  );
  expect(reply.status, reply.text).toBe(200);
  return { ...c, integrationUuid: decodeId("integration", reply.body.id as string)! };
}

async function receipts(integrationUuid: string) {
  return server.db.read.select().from(integrationEventReceipts).where(eq(integrationEventReceipts.integrationId, integrationUuid));
}

async function allReceipts(): Promise<number> {
  const [row] = await server.db.read.select({ n: count() }).from(integrationEventReceipts);
  return row!.n;
}

const EVENTS = "/api/integrations/github/events";
const comment = (installationId: string) =>
  JSON.stringify({
    action: "created",
    installation: { id: Number(installationId) },
    issue: { number: 42, pull_request: { url: "https://api.github.com/repos/acme/web/pulls/42" } },
    comment: { id: 7, body: "@svc-reviewer[bot] please review", user: { login: "octocat", type: "User" } },
    repository: { id: 123456, full_name: "acme/web" },
  });

describe("integrations: GitHub webhook endpoint", () => {
  it("answers a signed ping with 204 and stores nothing", async () => {
    const { app } = await connected();
    const before = await allReceipts();
    const body = JSON.stringify({ zen: "Keep it logically awesome.", hook_id: 1 });
    const reply = await server.api.request("POST", EVENTS, { raw: body, headers: signDelivery(app, app.webhookSecret, "ping", body) });
    expect(reply.status, reply.text).toBe(204);
    expect(await allReceipts()).toBe(before);
  });

  it("stores a signed delivery once per X-GitHub-Delivery, for the installation's integration", async () => {
    const { app, installation, integrationUuid } = await connected();
    const body = comment(installation.id);
    const headers = signDelivery(app, app.webhookSecret, "issue_comment", body);
    for (let i = 0; i < 2; i++) {
      const reply = await server.api.request("POST", EVENTS, { raw: body, headers });
      expect(reply.status, reply.text).toBe(204);
    }
    // The App-id URL form works too, and is the same delivery.
    expect((await server.api.request("POST", `/api/integrations/github/${app.appId}/events`, { raw: body, headers })).status).toBe(204);
    // Stored, then handled at once (without a launcher, a comment on an unsubscribed pull request changes nothing).
    const stored = await eventually(() => receipts(integrationUuid), (rows) => rows.length === 1 && rows[0]!.state === "processed", 30_000);
    expect(stored[0]).toMatchObject({ providerEventId: headers["x-github-delivery"], eventKind: "issue_comment", state: "processed" });
    expect(stored[0]!.payload).toEqual(JSON.parse(body));
  });

  it("refuses forged, tampered, unsigned and mis-addressed deliveries with 401 and stores nothing", async () => {
    const { app, installation } = await connected();
    const before = await allReceipts();
    const body = comment(installation.id);
    const post = (headers: Record<string, string>, raw = body, url = EVENTS) => server.api.request("POST", url, { raw, headers });
    const forged = await post(signDelivery(app, "not-the-secret", "issue_comment", body));
    expect(forged.status, forged.text).toBe(401);
    expect(forged.body.code).toBe("unauthorized");
    const signed = signDelivery(app, app.webhookSecret, "issue_comment", body);
    expect((await post(signed, body.replace("please", "PLEASE"))).status).toBe(401);
    const { "x-hub-signature-256": _dropped, ...unsigned } = signed;
    expect((await post(unsigned)).status).toBe(401);
    expect((await post({ ...signed, "x-github-hook-installation-target-id": "1" })).status).toBe(401);
    expect((await post(signed, body, "/api/integrations/github/1/events")).status).toBe(401);
    expect(await allReceipts()).toBe(before);
  });

  it("accepts a signed delivery for another installation or a disconnected integration without storing it", async () => {
    const { p, app, path, integrationUuid } = await connected();
    const otherInstallation = comment("987654");
    expect((await server.api.request("POST", EVENTS, { raw: otherInstallation, headers: signDelivery(app, app.webhookSecret, "issue_comment", otherInstallation) })).status).toBe(204);
    expect((await server.api.post(`${path}/disconnect`, {}, { token: p.token })).status).toBe(200);
    const body = comment((await server.api.get(path, { token: p.token })).body.provider_account_ref);
    expect((await server.api.request("POST", EVENTS, { raw: body, headers: signDelivery(app, app.webhookSecret, "issue_comment", body) })).status).toBe(204);
    expect(await receipts(integrationUuid)).toHaveLength(0);
  });
});
