import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { integrationEventReceipts, integrationLaunchChoices } from "../../src/db/schema/index.js";
import { createGatewayManager, type GatewayManager } from "../../src/modules/integrations/kinds/discord/gateway-manager.js";
import { createIntegrationReceipts } from "../../src/modules/integrations/kinds/receipt-handlers.js";
import { decodeId } from "../../src/platform/ids.js";
import { eventually } from "../support/agent-loop.js";
import { CHANNEL_ID, GUILD_ID, signInteraction, startFakeDiscord, type FakeDiscordBot } from "../support/fake-discord.js";
import { collectPages } from "../support/paging.js";
import { useTestServer } from "../support/server.js";
import { createProfile, integrationProject } from "./integrations-fixtures.js";

const discord = await startFakeDiscord();
const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true", SVC_DISCORD_API_URL: discord.apiUrl });
afterAll(() => discord.close());
beforeEach(() => discord.reset());

const quiet = { warn: () => undefined, info: () => undefined };
let gateways: GatewayManager | undefined;
beforeAll(() => {
  gateways = createGatewayManager({ db: server.db, secrets: server.app.services.secrets, apiUrl: discord.apiUrl, policy: { allowPrivateNetwork: true }, leaseSeconds: 3, log: quiet });
  gateways.start();
});
afterAll(() => gateways?.stop());

const ASKER = "423456789012345678";
const ROLE = "523456789012345678";

/** A connected discord_thread integration whose launcher offers `profiles` profiles, with its Gateway connection open. */
async function launcher(profiles: number) {
  const p = await integrationProject(server.api);
  const auth = { token: p.token };
  const profileIds: string[] = [];
  for (let n = 0; n < profiles; n++) profileIds.push(await createProfile(server.api, p, `helper ${n}`));
  const created = await server.api.post(p.integrations, { name: "chat", integration_kind: "discord_thread", settings: { launcher: { profiles: profileIds } } }, auth);
  expect(created.status, created.text).toBe(201);
  const bot = discord.addBot();
  const secret = await server.api.post(
    `/api/v1/orgs/${p.orgId}/secrets`,
    { owner: { kind: "project", project_id: p.projectId }, name: `discord ${Math.random()}`, material: { kind: "generic", value: bot.token } },
    auth,
  );
  const path = `${p.integrations}/${created.body.id}`;
  const setup = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: secret.body.id, provider_config: { public_key: bot.publicKey } }, auth);
  expect(setup.status, setup.text).toBe(200);
  await eventually(async () => discord.gateway.open(bot), (open) => open === 1, 30_000);
  discord.reset();
  const integrationId = decodeId("integration", created.body.id)!;
  const receipts = () => server.db.read.select().from(integrationEventReceipts).where(eq(integrationEventReceipts.integrationId, integrationId));
  // The maintenance task's entry point, as a worker runs it on each tick.
  const processor = createIntegrationReceipts(server.db, server.app.services, server.config);
  const settled = (count: number) =>
    eventually(
      async () => {
        await processor.runDue();
        return receipts();
      },
      (rows) => rows.length === count && rows.every((row) => row.state !== "pending"),
      30_000,
    );
  const agents = async () => (await collectPages(server.api, `${p.base}/agents`, auth)) as any[];
  const backlog = async (agentId: string) => ((await server.api.get(`${p.base}/agents/${agentId}/inputs/backlog`, auth)).body.data as any[]).map((input) => [input.delivery_mode, input.content_blocks[0].text]);
  return { p, auth, bot, path, profileIds, receipts, settled, agents, backlog, processor };
}

const mention = (bot: FakeDiscordBot, text: string) => discord.gateway.dispatchMessage(bot, `<@${bot.botUserId}> ${text}`, false, { author: { id: ASKER, username: "asker" }, mentions: [{ id: bot.botUserId, username: bot.username, bot: true }] });
const inThread = (bot: FakeDiscordBot, threadId: string, content: string, author: object = { id: ASKER, username: "asker" }) =>
  discord.gateway.dispatchMessage(bot, content, false, { channel_id: threadId, author });
const restCalls = () => discord.calls.map((call) => `${call.method} ${call.path}`);

describe("integrations: Discord mentions launch agents, thread messages steer them", () => {
  it("launches the one offered profile in a new thread on the mention, acknowledges it, and steers it with thread replies; bots never", async () => {
    const { p, auth, bot, path, profileIds, settled, agents, backlog } = await launcher(1);
    const mentionId = mention(bot, "summarize yesterday's incidents");
    await settled(1);
    const launched = await agents();
    expect(launched).toHaveLength(1);
    expect(launched[0]).toMatchObject({ agent_profile_id: profileIds[0], state: "active" });
    // A thread started from a message has the message's id.
    expect(await collectPages(server.api, `${path}/subscriptions`, auth)).toEqual([expect.objectContaining({ agent_id: launched[0].id, conversation: { thread_id: mentionId } })]);
    expect(await backlog(launched[0].id)).toEqual([["queued", "summarize yesterday's incidents"]]);
    const actors = await server.api.get(`${p.base}/actors?provider=integration`, auth);
    expect(actors.body.data).toEqual([expect.objectContaining({ provider_tenant_id: GUILD_ID, provider_user_id: ASKER })]);
    expect(restCalls()).toEqual([
      `GET /channels/${CHANNEL_ID}`,
      `POST /channels/${CHANNEL_ID}/messages/${mentionId}/threads`,
      `PUT /channels/${CHANNEL_ID}/messages/${mentionId}/reactions/👀/@me`,
    ]);

    discord.reset();
    inThread(bot, mentionId, "more detail please");
    // The bot's own message, another bot's, and a mention in the launched thread: only the mention steers, no second launch.
    inThread(bot, mentionId, "working on it", { id: bot.botUserId, username: bot.username, bot: true });
    inThread(bot, mentionId, "beep", { id: "623456789012345678", username: "other-bot", bot: true });
    inThread(bot, mentionId, `<@${bot.botUserId}> also check the logs`);
    await settled(5);
    expect(await agents()).toHaveLength(1);
    expect(await backlog(launched[0].id)).toEqual([
      ["steering", "more detail please"],
      ["steering", "also check the logs"],
      ["queued", "summarize yesterday's incidents"],
    ]);
    // Steering needs no Discord call.
    expect(restCalls()).toEqual([]);
  });

  it("ignores messages that mention neither the bot nor its role, and mentions without a launcher, without calling Discord", async () => {
    const one = await launcher(1);
    discord.gateway.dispatchMessage(one.bot, "just chatting", false, { author: { id: ASKER, username: "asker" } });
    await one.settled(1);
    const none = await launcher(0);
    mention(none.bot, "hello");
    await none.settled(1);
    expect([...(await one.agents()), ...(await none.agents())]).toEqual([]);
    expect(restCalls()).toEqual([]);
  });

  it("offers several profiles in a select menu on a role mention; the first pick launches once, later picks and forged clicks launch nothing", async () => {
    const { bot, profileIds, settled, agents } = await launcher(2);
    discord.roles.set(GUILD_ID, [
      { id: "723456789012345678", name: "svc-bot" },
      { id: ROLE, name: "svc", tags: { bot_id: bot.botUserId } },
    ]);
    const mentionId = discord.gateway.dispatchMessage(bot, `<@&${ROLE}> triage this`, false, { author: { id: ASKER, username: "asker" }, mention_roles: [ROLE] });
    await settled(1);
    expect(await agents()).toEqual([]);
    expect(discord.posted).toHaveLength(1);
    const menuMessage = discord.posted[0]!;
    expect(menuMessage.channelId).toBe(mentionId);
    const menu = (menuMessage.body["components"] as any[])[0].components[0];
    expect(menu).toMatchObject({ type: 3, custom_id: expect.stringMatching(/^svc_launch:/) });
    expect(menu.options.map((option: any) => option.label)).toEqual(["helper 0", "helper 1"]);
    expect(restCalls()).toContain(`PUT /channels/${CHANNEL_ID}/messages/${mentionId}/reactions/👀/@me`);

    const click = (user: string, value: string, signer: FakeDiscordBot = bot) => {
      const body = JSON.stringify({
        id: String(Date.now()),
        application_id: bot.applicationId,
        type: 3,
        token: "interaction-token",
        version: 1,
        channel_id: mentionId,
        guild_id: GUILD_ID,
        member: { user: { id: user, username: "picker" } },
        message: { id: menuMessage.id, channel_id: mentionId },
        data: { custom_id: menu.custom_id, component_type: 3, values: [value] },
      });
      return server.api.request("POST", `/api/integrations/discord/${bot.applicationId}/interactions`, { raw: body, headers: signInteraction(signer, body) });
    };
    const forged = await click("823456789012345678", menu.options[0].value, discord.addBot());
    expect(forged.status).toBe(401);
    expect(await agents()).toEqual([]);
    const picked = await click("823456789012345678", menu.options[1].value);
    expect(picked.status, picked.text).toBe(200);
    expect(picked.body).toEqual({ type: 7, data: { content: "Started by <@823456789012345678>.", components: [] } });
    const late = await click("923456789012345678", menu.options[0].value);
    expect(late.body).toEqual({ type: 4, data: { content: "This menu was already answered or has expired.", flags: 64 } });
    const launched = await agents();
    expect(launched).toHaveLength(1);
    expect(launched[0].agent_profile_id).toBe(profileIds[1]);
  });

  it("keeps a mention Discord rate limits for a durable retry after Discord's retry_after, then launches once", async () => {
    const { bot, receipts, settled, agents, processor } = await launcher(1);
    discord.rateLimit(1, 7);
    const mentionId = mention(bot, "later");
    const [limited] = await eventually(
      async () => {
        await processor.runDue();
        return receipts();
      },
      (rows) => rows.length === 1 && rows[0]!.attempts === 1 && rows[0]!.failure !== null,
      30_000,
    );
    expect(limited).toMatchObject({ state: "pending", failure: expect.stringContaining("retry after 7 seconds") });
    expect(await agents()).toEqual([]);
    // The retry is a row's retry_at, not a sleep: bring it forward instead of waiting.
    await server.db.tx((tx) => tx.update(integrationEventReceipts).set({ retryAt: new Date(Date.now() - 1000) }).where(eq(integrationEventReceipts.id, limited!.id)));
    await settled(1);
    expect(await agents()).toHaveLength(1);
    expect(restCalls().filter((call) => call.startsWith("POST"))).toEqual([`POST /channels/${CHANNEL_ID}/messages/${mentionId}/threads`]);
  });

  it("launches in the thread a mention is in, and a retry after a refused reaction neither launches again nor steers the agent with its own mention", async () => {
    const { bot, path, auth, receipts, settled, agents, backlog, processor } = await launcher(1);
    const thread = "133456789012345678";
    discord.threads.add(thread);
    discord.rateLimit(1, 5, "PUT");
    discord.gateway.dispatchMessage(bot, `<@${bot.botUserId}> look here`, false, { channel_id: thread, author: { id: ASKER, username: "asker" }, mentions: [{ id: bot.botUserId }] });
    const [limited] = await eventually(
      async () => {
        await processor.runDue();
        return receipts();
      },
      (rows) => rows.length === 1 && rows[0]!.attempts === 1 && rows[0]!.failure !== null,
      30_000,
    );
    expect(limited!.state).toBe("pending");
    await server.db.tx((tx) => tx.update(integrationEventReceipts).set({ retryAt: new Date(Date.now() - 1000) }).where(eq(integrationEventReceipts.id, limited!.id)));
    await settled(1);
    const launched = await agents();
    expect(launched).toHaveLength(1);
    expect(await collectPages(server.api, `${path}/subscriptions`, auth)).toEqual([expect.objectContaining({ conversation: { thread_id: thread } })]);
    expect(await backlog(launched[0].id)).toEqual([["queued", "look here"]]);
    expect(restCalls().filter((call) => !call.startsWith("GET"))).toEqual([
      `PUT /channels/${thread}/messages/${limited!.providerEventId}/reactions/👀/@me`,
      `PUT /channels/${thread}/messages/${limited!.providerEventId}/reactions/👀/@me`,
    ]);
  });

  it("posts no second profile menu for a mention in a thread whose menu is still open; once it has expired, a mention gets a new one", async () => {
    const { bot, settled, agents } = await launcher(2);
    const thread = "143456789012345678";
    discord.threads.add(thread);
    const mentionHere = (text: string) => discord.gateway.dispatchMessage(bot, `<@${bot.botUserId}> ${text}`, false, { channel_id: thread, author: { id: ASKER, username: "asker" }, mentions: [{ id: bot.botUserId }] });
    mentionHere("triage this");
    await settled(1);
    expect(discord.posted.map((message) => message.channelId)).toEqual([thread]);
    const second = mentionHere("are you there?");
    await settled(2);
    // The open menu still decides; the second mention is acknowledged, and nothing new is posted.
    expect(discord.posted).toHaveLength(1);
    expect(restCalls()).toContain(`PUT /channels/${thread}/messages/${second}/reactions/👀/@me`);
    expect(await agents()).toEqual([]);

    await server.db.tx((tx) => tx.update(integrationLaunchChoices).set({ expiresAt: new Date(Date.now() - 1000) }).where(sql`${integrationLaunchChoices.conversation} ->> 'thread_id' = ${thread}`));
    mentionHere("now?");
    await settled(3);
    expect(discord.posted).toHaveLength(2);
    expect(discord.posted[1]!.channelId).toBe(thread);
  });
});
