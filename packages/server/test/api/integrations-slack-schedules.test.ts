import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { cronTriggers, integrationEventReceipts } from "../../src/db/schema/index.js";
import { createScheduler, type Scheduler } from "../../src/modules/cron-triggers/scheduler.js";
import { integrationFiring } from "../../src/modules/cron-triggers/integration-target.js";
import { cronTargets } from "../../src/modules/cron-triggers/targets.js";
import { createIntegrationReceipts } from "../../src/modules/integrations/kinds/receipt-handlers.js";
import { decodeId } from "../../src/platform/ids.js";
import { startFakeSlack } from "../support/fake-slack.js";
import { collectPages } from "../support/paging.js";
import { useTestServer } from "../support/server.js";
import { createIntegration, createProfile, integrationProject, slackSecret } from "./integrations-fixtures.js";

/*
 * Integration schedules (reference docs: integrations/overview, "Start a new thread on a schedule"; slack,
 * "Scheduled threads"): a cron trigger whose target is an integration. The scheduler is driven through its
 * one entry point (`runDue(now)`) and the receipts through the processor's, as svc's loops run them.
 */

const slack = await startFakeSlack();
// The receipts are driven step by step here, so nothing handles them on its own.
const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true", SVC_SLACK_API_URL: slack.apiUrl }, { followReceipts: false });
afterAll(() => slack.close());
beforeEach(() => slack.reset());

/** Triggers a test made: deleted after it, so the next test's scheduler runs fire only its own. */
const made: Array<{ path: string; token: string }> = [];
afterEach(async () => {
  for (const { path, token } of made.splice(0)) await server.api.delete(path, { token });
});

const CHANNEL = "C0SCHED01";
const OPENING = "Standup for {{.trigger.local_date}}";
const MESSAGE = "Collect yesterday's updates ({{.trigger.name}}, {{.trigger.fired_at}})";

function scheduler(): Scheduler {
  return createScheduler({ db: server.db, handlers: cronTargets({ db: server.db, artifacts: server.app.services.artifacts }), leaseSeconds: 60 });
}

const receiptsProcessor = () => createIntegrationReceipts(server.db, server.app.services, server.config);

/** A connected Slack integration and a profile in a new project. */
async function connected() {
  const p = await integrationProject(server.api);
  const auth = { token: p.token };
  const profileId = await createProfile(server.api, p, "standup");
  const integration = await createIntegration(server.api, p, "eng");
  const bot = slack.addBot();
  const secretId = await slackSecret(server.api, p, bot.token);
  const path = `${p.integrations}/${integration.id}`;
  const setup = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: secretId }, auth);
  expect(setup.status, setup.text).toBe(200);
  slack.reset();
  const integrationUuid = decodeId("integration", integration.id as string)!;
  const receipts = () => server.db.read.select().from(integrationEventReceipts).where(eq(integrationEventReceipts.integrationId, integrationUuid));
  const agents = async () => (await collectPages(server.api, `${p.base}/agents`, auth)) as any[];
  const settings = { agent_profile_id: profileId, channel_id: CHANNEL, opening_message_template: OPENING, message_template: MESSAGE };
  const create = async (body: Record<string, unknown>) => {
    const reply = await server.api.post(`${p.base}/cron-triggers`, { name: "standup", cron: "0 9 * * *", ...body }, auth);
    if (reply.status === 201) made.push({ path: `${p.base}/cron-triggers/${reply.body.id}`, token: p.token });
    return reply;
  };
  return { p, auth, bot, path, profileId, integrationId: integration.id as string, integrationUuid, receipts, agents, settings, create };
}

/** Creates the schedule and answers it with its first slot. */
async function schedule(c: Awaited<ReturnType<typeof connected>>) {
  const created = await c.create({ target: { type: "integration", integration_id: c.integrationId, settings: c.settings } });
  expect(created.status, created.text).toBe(201);
  return { trigger: created.body, slot: new Date(created.body.next_fire_at as string) };
}

/** Makes a receipt waiting out its backoff due now, as the clock passing its retry_at would. */
async function dueNow(c: Awaited<ReturnType<typeof connected>>) {
  await server.db.write
    .update(integrationEventReceipts)
    .set({ retryAt: null, state: "pending" })
    .where(eq(integrationEventReceipts.integrationId, c.integrationUuid));
}

describe("integration schedules: cron triggers that start a Slack thread", () => {
  it("saves an integration target as given, its settings carrying the message template", async () => {
    const c = await connected();
    const { trigger } = await schedule(c);
    expect(trigger).toMatchObject({
      target: { type: "integration", integration_id: c.integrationId, settings: c.settings },
      message_template: MESSAGE,
      enabled: true,
    });
    const same = await c.create({ target: { type: "integration", integration_id: c.integrationId, settings: c.settings }, message_template: MESSAGE });
    expect(same.status, same.text).toBe(201);
    const got = await server.api.get(`${c.p.base}/cron-triggers/${trigger.id}`, c.auth);
    expect(got.body.target).toEqual({ type: "integration", integration_id: c.integrationId, settings: c.settings });
    const patched = await server.api.patch(`${c.p.base}/cron-triggers/${trigger.id}`, { message_template: "Today: {{.trigger.local_date}}" }, c.auth);
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ message_template: "Today: {{.trigger.local_date}}", target: { settings: { ...c.settings, message_template: "Today: {{.trigger.local_date}}" } } });
  });

  it("refuses settings the schedule capability does not take, unknown template variables, a foreign profile and a mismatched template", async () => {
    const c = await connected();
    const target = (settings: Record<string, unknown>) => ({ target: { type: "integration", integration_id: c.integrationId, settings } });
    const issues = async (body: Record<string, unknown>) => {
      const reply = await c.create(body);
      expect(reply.status, reply.text).toBe(400);
      expect(reply.body.code).toBe("validation_failed");
      return (reply.body.issues as Array<{ path: string }>).map((issue) => issue.path).sort();
    };
    const { channel_id: _channel, ...noChannel } = c.settings;
    expect(await issues(target(noChannel))).toEqual(["/target/settings/channel_id"]);
    expect(await issues(target({ ...c.settings, channel_id: "D0DIRECT1", extra: 1 }))).toEqual(["/target/settings/channel_id", "/target/settings/extra"]);
    expect(await issues(target({ ...c.settings, opening_message_template: "x".repeat(2001) }))).toEqual(["/target/settings/opening_message_template"]);
    expect(await issues(target({ ...c.settings, opening_message_template: "{{.trigger.secret}}" }))).toEqual(["/target/settings/opening_message_template"]);
    expect(await issues(target({ ...c.settings, message_template: "{{.env.HOME}}" }))).toEqual(["/target/settings/message_template"]);
    const other = await integrationProject(server.api);
    expect(await issues(target({ ...c.settings, agent_profile_id: await createProfile(server.api, other) }))).toEqual(["/target/settings/agent_profile_id"]);
    expect(await issues({ ...target(c.settings), message_template: "another" })).toEqual(["/message_template"]);
    expect(await issues({ target: { type: "profile", agent_profile_id: c.profileId } })).toEqual(["/message_template"]);
    const elsewhere = await server.api.post(
      `${other.base}/cron-triggers`,
      { name: "x", cron: "0 9 * * *", target: { type: "integration", integration_id: c.integrationId, settings: c.settings } },
      { token: other.token },
    );
    expect(elsewhere.status, elsewhere.text).toBe(404);
  });

  it("a slot posts one opening message and launches the profile in its thread with the rendered message; the slot fires once", async () => {
    const c = await connected();
    const { trigger, slot } = await schedule(c);
    expect(await scheduler().runDue(slot)).toBe(1);
    expect(slack.thread.posted).toEqual([]); // the firing itself calls no provider
    expect(await receiptsProcessor().runDue()).toBe(1);
    const localDate = slot.toISOString().slice(0, 10);
    expect(slack.thread.posted).toEqual([expect.objectContaining({ channel: CHANNEL, thread_ts: undefined, text: `Standup for ${localDate}`, user: c.bot.botUserId })]);
    const threadTs = slack.thread.posted[0]!.ts;
    const launched = await c.agents();
    expect(launched).toHaveLength(1);
    expect(launched[0]).toMatchObject({ agent_profile_id: c.profileId, state: "active" });
    const agentId = launched[0].id as string;
    const subscriptions = await collectPages(server.api, `${c.path}/subscriptions`, c.auth);
    expect(subscriptions).toEqual([expect.objectContaining({ agent_id: agentId, conversation: { channel_id: CHANNEL, thread_ts: threadTs } })]);
    const backlog = (await server.api.get(`${c.p.base}/agents/${agentId}/inputs/backlog`, c.auth)).body.data as any[];
    expect(backlog).toEqual([
      expect.objectContaining({ delivery_mode: "queued", content_blocks: [{ type: "text", text: `Collect yesterday's updates (standup, ${slot.toISOString()})` }] }),
    ]);
    expect(backlog[0]).not.toHaveProperty("actor_id"); // attributed to no person

    // Another scheduler finds the slot fired; the same slot fired again (a firing that raced) adds no receipt.
    expect(await scheduler().runDue(slot)).toBe(0);
    const [row] = await server.db.read.select().from(cronTriggers).where(eq(cronTriggers.id, decodeId("cronTrigger", trigger.id as string)!));
    await server.db.tx((tx) => integrationFiring.fire(tx, { trigger: row!, slot, message: "again" }));
    expect(await c.receipts()).toHaveLength(1);
    expect(await receiptsProcessor().runDue()).toBe(0);
    expect(slack.thread.posted).toHaveLength(1);
    expect(await c.agents()).toHaveLength(1);
  });

  it("a Slack failure on the opening post is retried; once posted, a retry reuses the thread and launches once", async () => {
    const c = await connected();
    const { slot } = await schedule(c);
    expect(await scheduler().runDue(slot)).toBe(1);
    slack.failNext("chat.postMessage", 500);
    await receiptsProcessor().runDue();
    expect(slack.thread.posted).toEqual([]);
    const [failed] = await c.receipts();
    expect(failed).toMatchObject({ state: "pending", attempts: 1, failure: expect.stringContaining("Slack") });
    expect(failed!.retryAt).not.toBeNull();
    expect((await server.api.get(c.path, c.auth)).body.runtime_failure).toEqual({ message: expect.any(String), retry_at: expect.any(String) });
    expect(await c.agents()).toHaveLength(0);

    await dueNow(c);
    expect(await receiptsProcessor().runDue()).toBe(1);
    expect(slack.thread.posted).toHaveLength(1);
    const [processed] = await c.receipts();
    expect(processed).toMatchObject({ state: "processed", payload: expect.objectContaining({ posted_ts: slack.thread.posted[0]!.ts }) });
    expect(await c.agents()).toHaveLength(1);
    expect((await server.api.get(c.path, c.auth)).body.runtime_failure).toBeUndefined();

    // Handled again (a process that died before recording the outcome): the saved ts, no second post or agent.
    await dueNow(c);
    expect(await receiptsProcessor().runDue()).toBe(1);
    expect(slack.thread.posted).toHaveLength(1);
    const subscriptions = await collectPages(server.api, `${c.path}/subscriptions`, c.auth);
    expect(subscriptions).toEqual([expect.objectContaining({ conversation: { channel_id: CHANNEL, thread_ts: slack.thread.posted[0]!.ts } })]);
    expect(await c.agents()).toHaveLength(1);
  });

  it("a disconnected integration's occurrence is skipped with a visible failure, the next one runs after a reconnect; deleting the integration deletes its schedules", async () => {
    const c = await connected();
    const { trigger, slot } = await schedule(c);
    const disconnected = await server.api.post(`${c.path}/disconnect`, {}, c.auth);
    expect(disconnected.status, disconnected.text).toBe(200);
    expect(await scheduler().runDue(slot)).toBe(0);
    const skipped = await server.api.get(`${c.p.base}/cron-triggers/${trigger.id}`, c.auth);
    const nextSlot = new Date(slot.getTime() + 24 * 3_600_000);
    expect(skipped.body).toMatchObject({
      enabled: true,
      last_fired_at: null,
      next_fire_at: nextSlot.toISOString(),
      failure_report: { will_retry: false, message: expect.stringContaining("not connected") },
    });
    expect(await c.receipts()).toHaveLength(0);

    const reconnected = await server.api.post(`${c.path}/reconnect`, { expected_setup_revision: disconnected.body.setup_revision }, c.auth);
    expect(reconnected.status, reconnected.text).toBe(200);
    expect(await scheduler().runDue(nextSlot)).toBe(1);
    expect(await c.receipts()).toHaveLength(1);
    expect((await server.api.get(`${c.p.base}/cron-triggers/${trigger.id}`, c.auth)).body).toMatchObject({ failure_report: null, last_fired_at: nextSlot.toISOString() });
    const deleted = await server.api.delete(c.path, c.auth);
    expect(deleted.status, deleted.text).toBe(204);
    expect((await server.api.get(`${c.p.base}/cron-triggers/${trigger.id}`, c.auth)).status).toBe(404);
  });
});
