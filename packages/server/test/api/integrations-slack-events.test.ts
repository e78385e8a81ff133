import { eq } from "drizzle-orm";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { integrationEventReceipts } from "../../src/db/schema/index.js";
import { decodeId } from "../../src/platform/ids.js";
import { eventually } from "../support/agent-loop.js";
import { yamlConfig } from "../support/agents.js";
import { startFakeSlack } from "../support/fake-slack.js";
import { eventCallback, postSlackAction, postSlackEvent } from "../support/slack-events.js";
import { useTestServer } from "../support/server.js";
import { createIntegration, integrationProject, slackSecret } from "./integrations-fixtures.js";

const slack = await startFakeSlack();
const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true", SVC_SLACK_API_URL: slack.apiUrl });
afterAll(() => slack.close());
beforeEach(() => slack.reset());

/** The signing secret integrations-fixtures' slackSecret stores. */
const SIGNING_SECRET = "signing-SENTINEL";
const THREAD = { channel_id: "C0123ABC", thread_ts: "1700000000.000100" };

/** A connected Slack integration and an agent subscribed to THREAD through it. */
async function subscribedThread() {
  const p = await integrationProject(server.api);
  const auth = { token: p.token };
  const integration = await createIntegration(server.api, p, "eng");
  const bot = slack.addBot();
  const secretId = await slackSecret(server.api, p, bot.token);
  const path = `${p.integrations}/${integration.id}`;
  const setup = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: secretId }, auth);
  expect(setup.status, setup.text).toBe(200);
  const config = await server.api.post(`${p.base}/agent-configs`, { source: yamlConfig(p), source_format: "yaml" }, auth);
  const agent = await server.api.post(`${p.base}/agents`, { config: config.body.id, name: "listener" }, auth);
  expect(agent.status, agent.text).toBe(201);
  const agentId = agent.body.agent.id as string;
  const sub = await server.api.post(`${path}/subscriptions`, { agent_id: agentId, conversation: THREAD }, auth);
  expect(sub.status, sub.text).toBe(201);
  const backlog = async () => (await server.api.get(`${p.base}/agents/${agentId}/inputs/backlog`, auth)).body.data as any[];
  slack.reset();
  return { p, auth, bot, path, agentId, integrationId: decodeId("integration", integration.id)!, backlog };
}

const receipts = (integrationId: string) => server.db.read.select().from(integrationEventReceipts).where(eq(integrationEventReceipts.integrationId, integrationId));
const settled = (integrationId: string, count: number) =>
  eventually(
    () => receipts(integrationId),
    (rows) => rows.length === count && rows.every((row) => row.state !== "pending"),
    30_000,
  );

const reply = (bot: { botUserId: string }, text: string, overrides: Record<string, unknown> = {}) => ({
  type: "message",
  channel: THREAD.channel_id,
  user: "U0PERSON1",
  text,
  ts: `1700000001.${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`,
  thread_ts: THREAD.thread_ts,
  channel_type: "channel",
  ...overrides,
  ...(overrides["user"] === "bot" ? { user: bot.botUserId } : {}),
});

describe("integrations: signed Slack events", () => {
  it("answers Slack's URL verification challenge only when the signature verifies", async () => {
    await subscribedThread();
    const handshake = { token: "deprecated", challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P", type: "url_verification" };
    const signed = await postSlackEvent(server.url, SIGNING_SECRET, handshake);
    expect(signed.status, signed.text).toBe(200);
    expect(signed.body).toEqual({ challenge: handshake.challenge });
    const forged = await postSlackEvent(server.url, "another-secret", handshake);
    expect(forged.status).toBe(401);
    expect(forged.body).toMatchObject({ code: "unauthorized" });
    expect(forged.text).not.toContain(handshake.challenge);
  });

  it("turns a person's reply in a subscribed thread into one steering input, attributed to an integration actor, once per event id", async () => {
    const { p, auth, bot, agentId, integrationId, backlog } = await subscribedThread();
    const event = eventCallback(bot, reply(bot, "please also check the staging logs"));
    const first = await postSlackEvent(server.url, SIGNING_SECRET, event);
    expect(first.status, first.text).toBe(200);
    await settled(integrationId, 1);
    // Slack redelivers when it thinks svc was slow: the same event id adds nothing.
    const again = await postSlackEvent(server.url, SIGNING_SECRET, event, { retryNum: 1 });
    expect(again.status).toBe(200);
    await settled(integrationId, 1);
    const inputs = await backlog();
    expect(inputs).toHaveLength(1);
    expect(inputs[0]).toMatchObject({
      agent_id: agentId,
      delivery_mode: "steering",
      input_kind: "content",
      content_blocks: [{ type: "text", text: "please also check the staging logs" }],
    });
    const actors = await server.api.get(`${p.base}/actors?provider=integration`, auth);
    expect(actors.body.data).toEqual([
      expect.objectContaining({ id: inputs[0].actor_id, provider: "integration", provider_tenant_id: bot.teamId, provider_user_id: "U0PERSON1" }),
    ]);
    expect((await receipts(integrationId))[0]).toMatchObject({ state: "processed", attempts: 1, eventKind: "message" });
  });

  it("ignores bot messages, the bot's own replies, edits, and messages in other threads", async () => {
    const { bot, integrationId, backlog } = await subscribedThread();
    const ignored = [
      reply(bot, "from another bot", { bot_id: "B0OTHER", subtype: "bot_message" }),
      reply(bot, "svc's own post", { bot_id: bot.botId }),
      reply(bot, "edited", { subtype: "message_changed" }),
    ];
    for (const event of ignored) expect((await postSlackEvent(server.url, SIGNING_SECRET, eventCallback(bot, event))).status).toBe(200);
    expect(await receipts(integrationId)).toEqual([]);
    // Kept (a person's reply) but without effect: the bot user itself, and a thread nobody subscribed to.
    await postSlackEvent(server.url, SIGNING_SECRET, eventCallback(bot, reply(bot, "as the bot user", { user: "bot" })));
    await postSlackEvent(server.url, SIGNING_SECRET, eventCallback(bot, reply(bot, "elsewhere", { thread_ts: "1700000000.999999" })));
    await settled(integrationId, 2);
    expect(await backlog()).toEqual([]);
  });

  it("refuses a bad signature and a replayed timestamp with 401, and changes nothing", async () => {
    const { bot, integrationId, backlog } = await subscribedThread();
    const event = eventCallback(bot, reply(bot, "forged"));
    const forged = await postSlackEvent(server.url, "not-the-signing-secret", event);
    expect(forged.status).toBe(401);
    const tampered = await postSlackEvent(server.url, SIGNING_SECRET, event, { signature: `v0=${"0".repeat(64)}` });
    expect(tampered.status).toBe(401);
    // A genuine signature, six minutes old: outside Slack's five-minute window.
    const replayed = await postSlackEvent(server.url, SIGNING_SECRET, event, { timestamp: Math.floor(Date.now() / 1000) - 6 * 60 });
    expect(replayed.status).toBe(401);
    const early = await postSlackEvent(server.url, SIGNING_SECRET, event, { timestamp: Math.floor(Date.now() / 1000) + 6 * 60 });
    expect(early.status).toBe(401);
    const forgedAction = await postSlackAction(server.url, "not-the-signing-secret", {
      type: "block_actions",
      team: { id: bot.teamId },
      api_app_id: bot.appId,
      user: { id: "U0PERSON1" },
      actions: [{ action_id: "x", action_ts: "1700000002.000001" }],
    });
    expect(forgedAction.status).toBe(401);
    // A body nested deeper than any request body may be is refused before it is parsed, signed or not.
    const deep = { ...event, event: { ...(event.event as object), blocks: JSON.parse(`${"[".repeat(300)}${"]".repeat(300)}`) } };
    const nested = await postSlackEvent(server.url, SIGNING_SECRET, deep);
    expect([nested.status, nested.body?.["code"]]).toEqual([400, "invalid_request"]);
    expect(await receipts(integrationId)).toEqual([]);
    expect(await backlog()).toEqual([]);
    expect(slack.calls).toEqual([]);
  });

  it("keeps nothing for a disconnected integration", async () => {
    const { auth, bot, path, integrationId, backlog } = await subscribedThread();
    expect((await server.api.post(`${path}/disconnect`, {}, auth)).status).toBe(200);
    const sent = await postSlackEvent(server.url, SIGNING_SECRET, eventCallback(bot, reply(bot, "anyone there?")));
    expect(sent.status).toBe(200);
    expect(await receipts(integrationId)).toEqual([]);
    expect(await backlog()).toEqual([]);
  });
});
