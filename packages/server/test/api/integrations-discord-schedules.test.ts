import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { integrationEventReceipts } from "../../src/db/schema/index.js";
import { createScheduler, type Scheduler } from "../../src/modules/cron-triggers/scheduler.js";
import { cronTargets } from "../../src/modules/cron-triggers/targets.js";
import { createIntegrationReceipts } from "../../src/modules/integrations/kinds/receipt-handlers.js";
import { decodeId } from "../../src/platform/ids.js";
import { startFakeDiscord } from "../support/fake-discord.js";
import { collectPages } from "../support/paging.js";
import { useTestServer } from "../support/server.js";
import { connectDiscord } from "./integrations-discord-fixtures.js";
import { createProfile, integrationProject } from "./integrations-fixtures.js";

/*
 * Discord schedules (reference docs: integrations/discord, "Scheduled threads"; overview, "Start a new
 * thread on a schedule"): a cron trigger whose target is a discord_thread integration. The scheduler and
 * the receipts are driven through their entry points (`runDue`), as svc's loops run them.
 */

const discord = await startFakeDiscord();
// The receipts are driven step by step here, so nothing handles them on its own.
const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true", SVC_DISCORD_API_URL: discord.apiUrl }, { followReceipts: false });
afterAll(() => discord.close());
beforeEach(() => discord.reset());

/** Triggers a test made: deleted after it, so the next test's scheduler runs fire only its own. */
const made: Array<{ path: string; token: string }> = [];
afterEach(async () => {
  for (const { path, token } of made.splice(0)) await server.api.delete(path, { token });
});

const CHANNEL = "143456789012345678";
const OPENING = "Standup for {{.trigger.local_date}}\nPost your updates in this thread.";
const MESSAGE = "Collect yesterday's updates ({{.trigger.name}})";

const scheduler = (): Scheduler => createScheduler({ db: server.db, handlers: cronTargets({ db: server.db, artifacts: server.app.services.artifacts }), leaseSeconds: 60 });
const receiptsProcessor = () => createIntegrationReceipts(server.db, server.app.services, server.config);

/** A connected Discord integration, a profile and a schedule of it firing in CHANNEL; answers the schedule's first slot. */
async function scheduled() {
  const p = await integrationProject(server.api);
  const auth = { token: p.token };
  const profileId = await createProfile(server.api, p, "standup");
  const { path, integrationId } = await connectDiscord(server, discord, p, "chat");
  discord.reset();
  const settings = { agent_profile_id: profileId, channel_id: CHANNEL, opening_message_template: OPENING, message_template: MESSAGE };
  const create = async (target: Record<string, unknown>) => {
    const reply = await server.api.post(`${p.base}/cron-triggers`, { name: "standup", cron: "0 9 * * *", target: { type: "integration", integration_id: integrationId, ...target } }, auth);
    if (reply.status === 201) made.push({ path: `${p.base}/cron-triggers/${reply.body.id}`, token: p.token });
    return reply;
  };
  const created = await create({ settings });
  expect(created.status, created.text).toBe(201);
  const integrationUuid = decodeId("integration", integrationId)!;
  const receipts = () => server.db.read.select().from(integrationEventReceipts).where(eq(integrationEventReceipts.integrationId, integrationUuid));
  const agents = async () => (await collectPages(server.api, `${p.base}/agents`, auth)) as any[];
  const subscriptions = () => collectPages(server.api, `${path}/subscriptions`, auth);
  return { p, auth, path, profileId, settings, create, slot: new Date(created.body.next_fire_at as string), receipts, agents, subscriptions };
}

const postCalls = () => discord.calls.filter((call) => call.method === "POST").map((call) => call.path);

describe("integration schedules: cron triggers that start a Discord thread", () => {
  it("refuses settings Discord's schedule capability does not take", async () => {
    const { settings, create } = await scheduled();
    const reply = await create({ settings: { ...settings, channel_id: "C0SLACK01", extra: 1 } });
    expect(reply.status, reply.text).toBe(400);
    expect((reply.body.issues as Array<{ path: string }>).map((issue) => issue.path).sort()).toEqual(["/target/settings/channel_id", "/target/settings/extra"]);
  });

  it("a slot posts the opening message, starts a thread on it and launches the profile there with the rendered message, once", async () => {
    const c = await scheduled();
    expect(await scheduler().runDue(c.slot)).toBe(1);
    expect(discord.calls).toEqual([]); // the firing itself calls no provider
    expect(await receiptsProcessor().runDue()).toBe(1);
    const localDate = c.slot.toISOString().slice(0, 10);
    expect(discord.posted).toEqual([expect.objectContaining({ channelId: CHANNEL, body: { content: `Standup for ${localDate}\nPost your updates in this thread.`, allowed_mentions: { parse: [] } } })]);
    const openingId = discord.posted[0]!.id;
    expect(postCalls()).toEqual([`/channels/${CHANNEL}/messages`, `/channels/${CHANNEL}/messages/${openingId}/threads`]);
    // The thread is named after the opening message's first line.
    expect(discord.calls.at(-1)!.body).toEqual({ name: `Standup for ${localDate}` });
    const launched = await c.agents();
    expect(launched).toHaveLength(1);
    expect(launched[0]).toMatchObject({ agent_profile_id: c.profileId, state: "active" });
    // A thread started from a message has the message's id.
    expect(await c.subscriptions()).toEqual([expect.objectContaining({ agent_id: launched[0].id, conversation: { thread_id: openingId } })]);
    const backlog = (await server.api.get(`${c.p.base}/agents/${launched[0].id}/inputs/backlog`, c.auth)).body.data as any[];
    expect(backlog).toEqual([expect.objectContaining({ delivery_mode: "queued", content_blocks: [{ type: "text", text: "Collect yesterday's updates (standup)" }] })]);
    expect(backlog[0]).not.toHaveProperty("actor_id"); // attributed to no person

    expect(await scheduler().runDue(c.slot)).toBe(0);
    expect(await receiptsProcessor().runDue()).toBe(0);
    expect(discord.posted).toHaveLength(1);
    expect(await c.agents()).toHaveLength(1);
  });

  it("a rate-limited thread start is retried after Discord's delay without posting the opening message again, and launches once", async () => {
    const c = await scheduled();
    expect(await scheduler().runDue(c.slot)).toBe(1);
    discord.rateLimit(1, 9, "POST", /\/threads$/);
    await receiptsProcessor().runDue();
    expect(discord.posted).toHaveLength(1);
    const [limited] = await c.receipts();
    // The opening message's id is on the receipt before the failure: the retry reuses it.
    expect(limited).toMatchObject({ state: "pending", attempts: 1, failure: expect.stringContaining("retry after 9 seconds"), payload: expect.objectContaining({ posted_message_id: discord.posted[0]!.id }) });
    expect((await server.api.get(c.path, c.auth)).body.runtime_failure).toEqual({ message: expect.stringContaining("rate limiting"), retry_at: expect.any(String) });
    expect(await c.agents()).toHaveLength(0);

    // The retry is the row's retry_at, not a sleep: bring it forward instead of waiting.
    await server.db.write.update(integrationEventReceipts).set({ retryAt: null }).where(eq(integrationEventReceipts.id, limited!.id));
    expect(await receiptsProcessor().runDue()).toBe(1);
    expect(discord.posted).toHaveLength(1);
    const openingId = discord.posted[0]!.id;
    expect(postCalls()).toEqual([`/channels/${CHANNEL}/messages`, `/channels/${CHANNEL}/messages/${openingId}/threads`, `/channels/${CHANNEL}/messages/${openingId}/threads`]);
    expect(await c.agents()).toHaveLength(1);
    expect(await c.subscriptions()).toEqual([expect.objectContaining({ conversation: { thread_id: openingId } })]);
    expect((await server.api.get(c.path, c.auth)).body.runtime_failure).toBeUndefined();
  });
});
