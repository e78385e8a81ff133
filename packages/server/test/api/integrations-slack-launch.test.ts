import { eq } from "drizzle-orm";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { integrationEventReceipts, integrationLaunchChoices } from "../../src/db/schema/index.js";
import { decodeId } from "../../src/platform/ids.js";
import { eventually } from "../support/agent-loop.js";
import { startFakeSlack } from "../support/fake-slack.js";
import { collectPages } from "../support/paging.js";
import { eventCallback, postSlackAction, postSlackEvent } from "../support/slack-events.js";
import { useTestServer } from "../support/server.js";
import { createIntegration, createProfile, integrationProject, slackSecret } from "./integrations-fixtures.js";

const slack = await startFakeSlack();
const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true", SVC_SLACK_API_URL: slack.apiUrl });
afterAll(() => slack.close());
beforeEach(() => slack.reset());

/** The signing secret integrations-fixtures' slackSecret stores. */
const SIGNING_SECRET = "signing-SENTINEL";
const CHANNEL = "C0LAUNCH1";

/** A connected Slack integration whose launcher offers `profiles` profiles. */
async function launcher(profiles = 1, channelId?: string) {
  const p = await integrationProject(server.api);
  const auth = { token: p.token };
  const profileIds: string[] = [];
  for (let n = 0; n < profiles; n++) profileIds.push(await createProfile(server.api, p, `helper ${n}`));
  const integration = await createIntegration(server.api, p, "eng", { launcher: { profiles: profileIds, ...(channelId ? { channel_id: channelId } : {}) } });
  const bot = slack.addBot();
  const secretId = await slackSecret(server.api, p, bot.token);
  const path = `${p.integrations}/${integration.id}`;
  const setup = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: secretId }, auth);
  expect(setup.status, setup.text).toBe(200);
  slack.reset();
  const integrationId = decodeId("integration", integration.id)!;
  const settled = (count: number) =>
    eventually(
      () => server.db.read.select().from(integrationEventReceipts).where(eq(integrationEventReceipts.integrationId, integrationId)),
      (rows) => rows.length === count && rows.every((row) => row.state !== "pending"),
      30_000,
    );
  const agents = async () => (await collectPages(server.api, `${p.base}/agents`, auth)) as any[];
  return { p, auth, bot, path, profileIds, settled, agents, integrationId };
}

const mention = (bot: { botUserId: string }, text: string, ts: string, threadTs?: string) => ({
  type: "app_mention",
  user: "U0ASKER01",
  text: `<@${bot.botUserId}> ${text}`,
  ts,
  channel: CHANNEL,
  ...(threadTs ? { thread_ts: threadTs } : {}),
});

describe("integrations: Slack mentions launch agents", () => {
  it("launches the one offered profile in the mention's thread: subscription, opening input by the asker, a reaction; once per event", async () => {
    const { p, auth, bot, path, profileIds, settled, agents } = await launcher();
    const event = eventCallback(bot, mention(bot, "summarize yesterday's incidents", "1700000100.000200"));
    expect((await postSlackEvent(server.url, SIGNING_SECRET, event)).status).toBe(200);
    await settled(1);
    expect((await postSlackEvent(server.url, SIGNING_SECRET, event, { retryNum: 1 })).status).toBe(200);
    await settled(1);
    const launched = await agents();
    expect(launched).toHaveLength(1);
    expect(launched[0]).toMatchObject({ agent_profile_id: profileIds[0], state: "active" });
    const agentId = launched[0].id as string;
    const subscriptions = await collectPages(server.api, `${path}/subscriptions`, auth);
    expect(subscriptions).toEqual([expect.objectContaining({ agent_id: agentId, conversation: { channel_id: CHANNEL, thread_ts: "1700000100.000200" } })]);
    const backlog = (await server.api.get(`${p.base}/agents/${agentId}/inputs/backlog`, auth)).body.data as any[];
    expect(backlog).toEqual([expect.objectContaining({ delivery_mode: "queued", content_blocks: [{ type: "text", text: "summarize yesterday's incidents" }] })]);
    const actor = await server.api.get(`${p.base}/actors?provider=integration`, auth);
    expect(actor.body.data).toEqual([expect.objectContaining({ id: backlog[0].actor_id, provider_tenant_id: bot.teamId, provider_user_id: "U0ASKER01" })]);
    expect(slack.thread.reactions).toEqual([{ channel: CHANNEL, timestamp: "1700000100.000200", name: "eyes", user: bot.botUserId }]);
  });

  it("launches no replacement in a thread it launched: a later mention there, and replies, steer that agent once each", async () => {
    const { p, auth, bot, settled, agents } = await launcher();
    await postSlackEvent(server.url, SIGNING_SECRET, eventCallback(bot, mention(bot, "start", "1700000200.000100")));
    await settled(1);
    const [agent] = await agents();
    const again = mention(bot, "again", "1700000200.000300", "1700000200.000100");
    await postSlackEvent(server.url, SIGNING_SECRET, eventCallback(bot, again));
    // Slack sends the same mention a second time as a message event: it must not steer twice.
    await postSlackEvent(server.url, SIGNING_SECRET, eventCallback(bot, { ...again, type: "message" }));
    const reply = { type: "message", user: "U0ASKER01", text: "more detail please", ts: "1700000200.000400", thread_ts: "1700000200.000100", channel: CHANNEL };
    await postSlackEvent(server.url, SIGNING_SECRET, eventCallback(bot, reply));
    await settled(4);
    expect(await agents()).toHaveLength(1);
    const backlog = (await server.api.get(`${p.base}/agents/${agent.id}/inputs/backlog`, auth)).body.data as any[];
    expect(backlog.map((input) => [input.delivery_mode, input.content_blocks[0].text])).toEqual([
      ["steering", "again"],
      ["steering", "more detail please"],
      ["queued", "start"],
    ]);
    // Only the launching mention was acknowledged.
    expect(slack.thread.reactions.map((reaction) => reaction.timestamp)).toEqual(["1700000200.000100"]);
  });

  it("launches nothing outside the launcher's channel, and nothing without a launcher", async () => {
    const scoped = await launcher(1, "C0ELSEWHERE");
    await postSlackEvent(server.url, SIGNING_SECRET, eventCallback(scoped.bot, mention(scoped.bot, "hello", "1700000300.000100")));
    await scoped.settled(1);
    expect(await scoped.agents()).toEqual([]);
    const none = await launcher(0);
    await postSlackEvent(server.url, SIGNING_SECRET, eventCallback(none.bot, mention(none.bot, "hello", "1700000300.000200")));
    await none.settled(1);
    expect(await none.agents()).toEqual([]);
    expect(slack.thread.reactions).toEqual([]);
  });

  it("keeps a mention for a retry while Slack answers 500, shows runtime_failure on Get integration only, and clears it on success", async () => {
    const { auth, bot, path, agents } = await launcher();
    slack.failNext("reactions.add", 500);
    await postSlackEvent(server.url, SIGNING_SECRET, eventCallback(bot, mention(bot, "go", "1700000400.000100")));
    const failing = await eventually(
      () => server.api.get(path, auth),
      (reply) => reply.body.runtime_failure !== undefined,
      30_000,
    );
    expect(failing.body.runtime_failure).toEqual({ message: expect.stringContaining("reactions.add"), retry_at: expect.any(String) });
    // Only Get integration shows it (spec: Integration, runtime_failure).
    const listed = await server.api.get(`${path.slice(0, path.lastIndexOf("/"))}`, auth);
    expect(listed.body.data[0]).not.toHaveProperty("runtime_failure");
    expect(await agents()).toHaveLength(1);
    expect(slack.thread.reactions).toEqual([]);
    // Time passes (the retry is due), and the next event's processing takes the retry along.
    await server.db.tx((tx) => tx.update(integrationEventReceipts).set({ retryAt: new Date(Date.now() - 1000) }).where(eq(integrationEventReceipts.state, "pending")));
    const elsewhere = { type: "message", user: "U0ASKER01", text: "unrelated", ts: "1700000400.000900", thread_ts: "1700000400.000800", channel: CHANNEL };
    await postSlackEvent(server.url, SIGNING_SECRET, eventCallback(bot, elsewhere));
    const cleared = await eventually(
      () => server.api.get(path, auth),
      (reply) => reply.body.runtime_failure === undefined && slack.thread.reactions.length === 1,
      30_000,
    );
    expect(cleared.status).toBe(200);
    expect(await agents()).toHaveLength(1);
    expect(slack.thread.reactions).toEqual([{ channel: CHANNEL, timestamp: "1700000400.000100", name: "eyes", user: bot.botUserId }]);
  });

  it("honours Slack's Retry-After: a rate-limited reaction is retried no earlier than Slack asked", async () => {
    const { auth, bot, path, integrationId } = await launcher();
    slack.rateLimitNext("reactions.add", 600);
    const before = Date.now();
    await postSlackEvent(server.url, SIGNING_SECRET, eventCallback(bot, mention(bot, "go", "1700000450.000100")));
    const limited = await eventually(
      () => server.api.get(path, auth),
      (reply) => reply.body.runtime_failure !== undefined,
      30_000,
    );
    expect(limited.body.runtime_failure.message).toContain("rate limiting reactions.add");
    // Ten minutes by the database clock (the test's clock is the same machine's; a minute of slack either way).
    const retryAt = Date.parse(limited.body.runtime_failure.retry_at);
    expect(retryAt).toBeGreaterThan(before + 9 * 60_000);
    expect(retryAt).toBeLessThan(Date.now() + 11 * 60_000);
    // The receipt waits for that time: a durable retry, not a sleep.
    const [receipt] = await server.db.read.select().from(integrationEventReceipts).where(eq(integrationEventReceipts.integrationId, integrationId));
    expect(receipt).toMatchObject({ state: "pending", attempts: 1 });
    // Written by the same transaction's next statement, so within a second of the shown retry_at.
    expect(Math.abs(receipt!.retryAt!.getTime() - retryAt)).toBeLessThan(1000);
    expect(slack.thread.reactions).toEqual([]);
  });

  it("offers several profiles in a chooser; the first click launches its profile, later clicks and expired menus launch nothing", async () => {
    const { auth, bot, path, profileIds, settled, agents } = await launcher(2);
    await postSlackEvent(server.url, SIGNING_SECRET, eventCallback(bot, mention(bot, "triage this", "1700000500.000100")));
    await settled(1);
    expect(await agents()).toEqual([]);
    expect(slack.thread.posted).toHaveLength(1);
    const menu = slack.thread.posted[0]!;
    expect(menu).toMatchObject({ channel: CHANNEL, thread_ts: "1700000500.000100", user: bot.botUserId });
    const buttons = (menu.blocks as any[]).find((block) => block.type === "actions").elements as any[];
    expect(buttons.map((button) => button.text.text)).toEqual(["helper 0", "helper 1"]);
    const click = (button: any, user: string, actionTs: string) =>
      postSlackAction(server.url, SIGNING_SECRET, {
        type: "block_actions",
        team: { id: bot.teamId },
        api_app_id: bot.appId,
        user: { id: user },
        container: { type: "message", channel_id: CHANNEL, message_ts: menu.ts, thread_ts: menu.thread_ts },
        channel: { id: CHANNEL },
        actions: [{ type: "button", action_id: button.action_id, value: button.value, action_ts: actionTs }],
      });
    expect((await click(buttons[1], "U0PICKER1", "1700000501.000001")).status).toBe(200);
    await settled(2);
    // Another person's later pick of the other profile is too late.
    expect((await click(buttons[0], "U0PICKER2", "1700000502.000001")).status).toBe(200);
    await settled(3);
    const launched = await agents();
    expect(launched).toHaveLength(1);
    expect(launched[0].agent_profile_id).toBe(profileIds[1]);
    expect(await collectPages(server.api, `${path}/subscriptions`, auth)).toEqual([
      expect.objectContaining({ agent_id: launched[0].id, conversation: { channel_id: CHANNEL, thread_ts: "1700000500.000100" } }),
    ]);

    // A second menu, expired before anyone picks.
    await postSlackEvent(server.url, SIGNING_SECRET, eventCallback(bot, mention(bot, "another", "1700000600.000100")));
    await settled(4);
    const second = slack.thread.posted[1]!;
    const late = ((second.blocks as any[]).find((block) => block.type === "actions").elements as any[])[0];
    await server.db.tx((tx) => tx.update(integrationLaunchChoices).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(integrationLaunchChoices.postedTs, second.ts)));
    expect((await click(late, "U0PICKER1", "1700000601.000001")).status).toBe(200);
    await settled(5);
    expect(await agents()).toHaveLength(1);
  });
});
