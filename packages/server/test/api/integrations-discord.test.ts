import { eq } from "drizzle-orm";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { integrationEventReceipts } from "../../src/db/schema/index.js";
import { GATEWAY_INTENTS } from "../../src/modules/integrations/kinds/discord/gateway-connection.js";
import { createGatewayManager, type GatewayManager } from "../../src/modules/integrations/kinds/discord/gateway-manager.js";
import { decodeId } from "../../src/platform/ids.js";
import { eventually } from "../support/agent-loop.js";
import { signInteraction, startFakeDiscord, type FakeDiscordBot } from "../support/fake-discord.js";
import { useTestServer } from "../support/server.js";
import { expectClosedIntegration, integrationProject } from "./integrations-fixtures.js";

const discord = await startFakeDiscord();
const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true", SVC_DISCORD_API_URL: discord.apiUrl });
afterAll(() => discord.close());
beforeEach(() => discord.reset());

/** A project with a discord_thread integration and a generic secret holding a known bot's token. */
async function connectable(name = "chat") {
  const p = await integrationProject(server.api);
  const created = await server.api.post(p.integrations, { name, integration_kind: "discord_thread" }, { token: p.token });
  expect(created.status, created.text).toBe(201);
  const bot = discord.addBot();
  const secret = await server.api.post(
    `/api/v1/orgs/${p.orgId}/secrets`,
    { owner: { kind: "project", project_id: p.projectId }, name: `discord ${Math.random()}`, material: { kind: "generic", value: bot.token } },
    { token: p.token },
  );
  expect(secret.status, secret.text).toBe(201);
  return { p, bot, secretId: secret.body.id as string, path: `${p.integrations}/${created.body.id}`, integration: created.body };
}

describe("integrations: discord_thread setup", () => {
  it("is in the catalog with its tools, settings, subscription, handler and schedule", async () => {
    const p = await integrationProject(server.api);
    const reply = await server.api.get(`${p.base}/integration-definitions`, { token: p.token });
    expect(reply.status, reply.text).toBe(200);
    const discordKind = reply.body.data.find((d: { integration_kind: string }) => d.integration_kind === "discord_thread");
    expect(Object.keys(discordKind.capabilities).sort()).toEqual(["interaction_handler", "schedule", "settings", "subscription", "tools"]);
    expect(Object.keys(discordKind.capabilities.tools).sort()).toEqual(["post_message", "read"]);
  });

  it("discovers the bot user id and name from the token, keeps the Application ID and public key", async () => {
    const { p, bot, secretId, path } = await connectable();
    const reply = await server.api.post(
      `${path}/setup`,
      { expected_setup_revision: 1, provider_tenant_id: bot.applicationId, credential_secret_id: secretId, provider_config: { public_key: bot.publicKey } },
      { token: p.token },
    );
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({
      state: "active",
      setup_revision: 2,
      provider_tenant_id: bot.applicationId,
      provider_account_ref: bot.botUserId,
      provider_agent_display_name: bot.username,
      provider_config: { public_key: bot.publicKey },
    });
    expect(reply.body).not.toHaveProperty("bot_mention");
    expectClosedIntegration(reply.body);
    expect(reply.text).not.toContain("SENTINEL");
    expect(discord.calls).toEqual([
      { method: "GET", path: "/users/@me", authorization: `Bot ${bot.token}` },
      { method: "GET", path: "/applications/@me", authorization: `Bot ${bot.token}` },
    ]);
  });

  it("refuses another application or bot than claimed, and a token Discord refuses; nothing is saved", async () => {
    const { p, bot, secretId, path, integration } = await connectable();
    const auth = { token: p.token };
    const wrongApp = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, provider_tenant_id: "123456789012345678", credential_secret_id: secretId }, auth);
    expect(wrongApp.status, wrongApp.text).toBe(400);
    expect(wrongApp.body.issues).toEqual([{ path: "/provider_tenant_id", message: expect.stringContaining(bot.applicationId) }]);
    const wrongBot = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, provider_account_ref: "123456789012345678", credential_secret_id: secretId }, auth);
    expect(wrongBot.body.issues).toEqual([{ path: "/provider_account_ref", message: expect.stringContaining(bot.botUserId) }]);
    discord.revoke(bot.token);
    const revoked = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: secretId }, auth);
    expect(revoked.status).toBe(400);
    expect(revoked.body.issues).toEqual([{ path: "/credential_secret_id", message: expect.stringContaining("HTTP 401") }]);
    expect((await server.api.get(path, auth)).body).toEqual(integration);
  });

  it("accepts only public_key in provider_config, as 64 hex digits; anything else is 400 with an issue, before Discord is asked", async () => {
    const { p, secretId, path, integration } = await connectable();
    const setup = (provider_config: object) => server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: secretId, provider_config }, { token: p.token });
    const short = await setup({ public_key: "abcd" });
    expect(short.status, short.text).toBe(400);
    expect(short.body).toMatchObject({ code: "validation_failed", issues: [{ path: "/provider_config/public_key", message: expect.any(String) }] });
    const extra = await setup({ public_key: "a".repeat(64), token: "x" });
    expect(extra.body.issues).toEqual([{ path: "/provider_config/token", message: expect.any(String) }]);
    const notString = await setup({ public_key: 12 });
    expect(notString.body.issues).toEqual([{ path: "/provider_config/public_key", message: expect.any(String) }]);
    expect(discord.calls).toHaveLength(0);
    expect((await server.api.get(path, { token: p.token })).body).toEqual(integration);
    // No public key at all is valid: a bot with one profile and no buttons needs none (reference docs: integrations/discord).
    const none = await setup({});
    expect(none.status, none.text).toBe(200);
    expect(none.body.provider_config).toEqual({});
  });

  it("refuses a credential that is not a generic secret", async () => {
    const { p, path } = await connectable();
    const slack = await server.api.post(
      `/api/v1/orgs/${p.orgId}/secrets`,
      { owner: { kind: "project", project_id: p.projectId }, name: "slack", material: { kind: "slack_app_credentials", access_token: "x", client_id: "1", client_secret: "2", signing_secret: "3" } },
      { token: p.token },
    );
    const reply = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: slack.body.id }, { token: p.token });
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body.issues).toEqual([{ path: "/credential_secret_id", message: expect.stringContaining("generic") }]);
    expect(discord.calls).toHaveLength(0);
  });
});

/** A connected discord_thread integration with its application's public key. */
async function connected() {
  const c = await connectable();
  const reply = await server.api.post(
    `${c.path}/setup`,
    { expected_setup_revision: 1, credential_secret_id: c.secretId, provider_config: { public_key: c.bot.publicKey } },
    { token: c.p.token },
  );
  expect(reply.status, reply.text).toBe(200);
  return c;
}

const interactionsUrl = (bot: FakeDiscordBot) => `/api/integrations/discord/${bot.applicationId}/interactions`;

describe("integrations: Discord interactions endpoint", () => {
  it("answers a signed PING with PONG", async () => {
    const { bot } = await connected();
    const body = JSON.stringify({ id: "1", application_id: bot.applicationId, type: 1, token: "t", version: 1 });
    const reply = await server.api.request("POST", interactionsUrl(bot), { raw: body, headers: signInteraction(bot, body) });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({ type: 1 });
  });

  it("refuses forged, re-signed, stale, unsigned and other-application requests with 401", async () => {
    const { bot } = await connected();
    const other = discord.addBot();
    const body = JSON.stringify({ id: "1", application_id: bot.applicationId, type: 1, token: "t", version: 1 });
    const post = (headers: Record<string, string>, raw = body, url = interactionsUrl(bot)) => server.api.request("POST", url, { raw, headers });
    const forged = await post(signInteraction(other, body));
    expect(forged.status, forged.text).toBe(401);
    expect(forged.body.code).toBe("unauthorized");
    const signed = signInteraction(bot, body);
    expect((await post(signed, body.replace('"type":1', '"type":1 '))).status).toBe(401);
    const stale = String(Math.floor(Date.now() / 1000) - 3600);
    expect((await post(signInteraction(bot, body, stale))).status).toBe(401);
    expect((await post({ "content-type": "application/json" })).status).toBe(401);
    // Signed by the right key but sent to another application's URL: no integration there holds the key.
    expect((await post(signed, body, interactionsUrl(other))).status).toBe(401);
  });

  it("refuses a signed request for a disconnected integration", async () => {
    const { p, bot, path } = await connected();
    expect((await server.api.post(`${path}/disconnect`, {}, { token: p.token })).status).toBe(200);
    const body = JSON.stringify({ id: "1", application_id: bot.applicationId, type: 1, token: "t", version: 1 });
    const reply = await server.api.request("POST", interactionsUrl(bot), { raw: body, headers: signInteraction(bot, body) });
    expect(reply.status).toBe(401);
  });

  it("answers a click on a component no handler issued with a private 'no longer available' reply", async () => {
    const { bot } = await connected();
    const body = JSON.stringify({
      id: "2",
      application_id: bot.applicationId,
      type: 3,
      token: "t",
      version: 1,
      channel_id: "123456789012345678",
      member: { user: { id: "223456789012345678" } },
      message: { id: "323456789012345678" },
      data: { custom_id: "svc:unknown", component_type: 2 },
    });
    const reply = await server.api.request("POST", interactionsUrl(bot), { raw: body, headers: signInteraction(bot, body) });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({ type: 4, data: { content: "This action is no longer available.", flags: 64 } });
  });
});

describe("integrations: the Discord Gateway", () => {
  const quiet = { warn: () => undefined, info: () => undefined };
  const managers: GatewayManager[] = [];
  /** A gateway manager as a svc worker runs one, on the test server's database; a short lease so scans come every second. */
  function manager(): GatewayManager {
    const made = createGatewayManager({ db: server.db, secrets: server.app.services.secrets, apiUrl: discord.apiUrl, policy: { allowPrivateNetwork: true }, leaseSeconds: 3, log: quiet });
    managers.push(made);
    made.start();
    return made;
  }
  afterAll(async () => {
    for (const made of managers) await made.stop();
  });
  const receiptIds = async (integrationId: string) =>
    (await server.db.read.select().from(integrationEventReceipts).where(eq(integrationEventReceipts.integrationId, decodeId("integration", integrationId)!))).map((row) => row.providerEventId);
  const identifies = (token: string) => discord.gateway.identifies.filter((identify) => identify.token === token);
  const resumes = (token: string) => discord.gateway.resumes.filter((resume) => resume.token === token);

  it("holds one connection between two managers, stores messages once, and resumes a drop without losing a message", async () => {
    const { bot, integration } = await connected();
    const first = manager();
    const second = manager();
    await eventually(async () => discord.gateway.open(bot), (open) => open === 1, 30_000);
    expect(identifies(bot.token)).toEqual([{ token: bot.token, intents: GATEWAY_INTENTS }]);
    expect([...first.held(), ...second.held()].filter((id) => id === decodeId("integration", integration.id))).toHaveLength(1);

    const seen = discord.gateway.dispatchMessage(bot, "hello");
    await eventually(() => receiptIds(integration.id), (ids) => ids.length === 1, 30_000);
    // A message lost on the wire when the connection drops is replayed on RESUME and stored.
    const lost = discord.gateway.dispatchMessage(bot, "sent while dropping", true);
    discord.gateway.drop();
    const ids = await eventually(() => receiptIds(integration.id), (found) => found.length === 2, 30_000);
    expect(ids.sort()).toEqual([seen, lost].sort());
    // Resumed from the sequence number stored with the last message.
    expect(resumes(bot.token)).toEqual([{ token: bot.token, session_id: expect.any(String), seq: 2 }]);
    expect(identifies(bot.token)).toHaveLength(1);
    await eventually(async () => discord.gateway.open(bot), (open) => open === 1, 30_000);
    // Several scans later, still one connection between them.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(discord.gateway.open(bot)).toBe(1);
    expect(identifies(bot.token)).toHaveLength(1);

    // The holder stops (a shutdown): it releases the lease and the other manager resumes the same session.
    const holder = first.held().includes(decodeId("integration", integration.id)!) ? first : second;
    await holder.stop();
    await eventually(async () => resumes(bot.token).length, (count) => count === 2, 30_000);
    await eventually(async () => discord.gateway.open(bot), (open) => open === 1, 30_000);
    expect(identifies(bot.token)).toHaveLength(1);
    const after = discord.gateway.dispatchMessage(bot, "after the takeover");
    await eventually(() => receiptIds(integration.id), (found) => found.includes(after), 30_000);
    expect(await receiptIds(integration.id)).toHaveLength(3);
  });

  it("closes the connection when the integration is disconnected, and when it is deleted", async () => {
    const one = await connected();
    const two = await connected();
    manager();
    await eventually(async () => discord.gateway.open(one.bot) + discord.gateway.open(two.bot), (open) => open === 2, 30_000);
    expect((await server.api.post(`${one.path}/disconnect`, {}, { token: one.p.token })).status).toBe(200);
    await eventually(async () => discord.gateway.open(one.bot), (open) => open === 0, 30_000);
    expect((await server.api.delete(two.path, { token: two.p.token })).status).toBe(204);
    await eventually(async () => discord.gateway.open(two.bot), (open) => open === 0, 30_000);
    // Scans go on; neither connects again.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(discord.gateway.open(one.bot) + discord.gateway.open(two.bot)).toBe(0);
    expect(identifies(one.bot.token)).toHaveLength(1);
  });

  it("shows why Discord refused the Gateway as the integration's runtime_failure, and waits before trying again", async () => {
    const { p, bot, path } = await connected();
    manager();
    await eventually(async () => discord.gateway.open(bot), (open) => open === 1, 30_000);
    discord.revoke(bot.token);
    discord.gateway.drop();
    const detail = await eventually(
      async () => (await server.api.get(path, { token: p.token })).body,
      (body) => body.runtime_failure !== undefined,
      30_000,
    );
    expect(detail.runtime_failure).toEqual({ message: expect.stringContaining("4004"), retry_at: expect.any(String) });
    expect(Date.parse(detail.runtime_failure.retry_at)).toBeGreaterThan(Date.now() + 60_000);
    // The list does not show it (spec: only Get integration).
    const listed = await server.api.get(p.integrations, { token: p.token });
    expect(listed.body.data[0]).not.toHaveProperty("runtime_failure");
    const attempts = resumes(bot.token).length + identifies(bot.token).length;
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(resumes(bot.token).length + identifies(bot.token).length).toBe(attempts);
  });
});
