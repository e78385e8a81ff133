import { expect } from "vitest";
import { createGatewayManager, type GatewayManager } from "../../src/modules/integrations/kinds/discord/gateway-manager.js";
import type { AgentProject } from "../support/agents.js";
import type { ApiClient } from "../support/client.js";
import { eventually } from "../support/agent-loop.js";
import { GUILD_ID, signInteraction, type FakeDiscord, type FakeDiscordBot } from "../support/fake-discord.js";
import type { TestServer } from "../support/server.js";

const quiet = { warn: () => undefined, info: () => undefined };

/**
 * A Gateway manager as a worker runs it (main.ts). A stored message is announced on commit, and the
 * test server's receipt processor handles it then, without a maintenance tick.
 */
export function startGateways(server: TestServer, discord: FakeDiscord): GatewayManager {
  const gateways = createGatewayManager({ db: server.db, secrets: server.app.services.secrets, apiUrl: discord.apiUrl, policy: { allowPrivateNetwork: true }, leaseSeconds: 3, log: quiet });
  gateways.start();
  return gateways;
}

/**
 * A discord_thread integration `name` connected to a new bot (with its public key), whose launcher offers
 * `profiles`; through any svc's API (a test server's, or a process test's client).
 */
export async function connectDiscord(server: { api: ApiClient }, discord: FakeDiscord, p: AgentProject, name: string, profiles: string[] = []) {
  const auth = { token: p.token };
  const created = await server.api.post(`${p.base}/integrations`, { name, integration_kind: "discord_thread", settings: { launcher: { profiles } } }, auth);
  expect(created.status, created.text).toBe(201);
  const bot = discord.addBot();
  const secret = await server.api.post(
    `/api/v1/orgs/${p.orgId}/secrets`,
    { owner: { kind: "project", project_id: p.projectId }, name: `discord ${Math.random()}`, material: { kind: "generic", value: bot.token } },
    auth,
  );
  expect(secret.status, secret.text).toBe(201);
  const path = `${p.base}/integrations/${created.body.id}`;
  const setup = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: secret.body.id, provider_config: { public_key: bot.publicKey } }, auth);
  expect(setup.status, setup.text).toBe(200);
  return { bot, path, integrationId: created.body.id as string };
}

/** Waits for the bot's Gateway session, so a dispatched message reaches svc. */
export async function gatewayOpen(discord: FakeDiscord, bot: FakeDiscordBot): Promise<void> {
  await eventually(async () => discord.gateway.open(bot), (open) => open === 1, 30_000);
}

/** A message mentioning the bot in the fake's parent channel, from `asker`; answers its id (the thread's, once started). */
export function mentionBot(discord: FakeDiscord, bot: FakeDiscordBot, text: string, asker = "423456789012345678"): string {
  return discord.gateway.dispatchMessage(bot, `<@${bot.botUserId}> ${text}`, false, { author: { id: asker, username: "asker" }, mentions: [{ id: bot.botUserId, username: bot.username, bot: true }] });
}

/** Discord's signed MESSAGE_COMPONENT callback for a button click (Discord docs: "Interaction Object"), signed by `signer`'s key. */
export function clickButton(server: TestServer, bot: FakeDiscordBot, click: { channelId: string; messageId: string; customId: string; userId: string }, signer: FakeDiscordBot = bot) {
  const body = JSON.stringify({
    id: String(Date.now()),
    application_id: bot.applicationId,
    type: 3,
    token: "interaction-token",
    version: 1,
    channel_id: click.channelId,
    guild_id: GUILD_ID,
    member: { user: { id: click.userId, username: "clicker" } },
    message: { id: click.messageId, channel_id: click.channelId },
    data: { custom_id: click.customId, component_type: 2 },
  });
  return server.api.request("POST", `/api/integrations/discord/${bot.applicationId}/interactions`, { raw: body, headers: signInteraction(signer, body) });
}
