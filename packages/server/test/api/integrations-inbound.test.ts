import { afterAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { integrationEventReceipts } from "../../src/db/schema/index.js";
import { decodeId } from "../../src/platform/ids.js";
import { agentProject } from "../support/agents.js";
import { startFakeSlack, type FakeBot } from "../support/fake-slack.js";
import { eventCallback, slackSignature } from "../support/slack-events.js";
import { countStatements, notificationsSettled } from "../support/statements.js";
import { useTestServer } from "../support/server.js";
import { slackSecret } from "./integrations-fixtures.js";

const slack = await startFakeSlack();
const RATE_LIMIT = 20;
// Each test posts from its own client address (X-Forwarded-For, trusted here), so the per-source limit counts them apart.
const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true", SVC_SLACK_API_URL: slack.apiUrl, SVC_TRUST_PROXY: "true", SVC_INBOUND_RATE_LIMIT: String(RATE_LIMIT) });
afterAll(() => slack.close());

const SIGNING_SECRET = "signing-SENTINEL";
const now = () => Math.floor(Date.now() / 1000);

/** Posts an Events API body from `source`, with the headers given (a Slack signature, or none). */
async function post(source: string, body: object, headers: Record<string, string> = {}) {
  const response = await fetch(`${server.url}/api/integrations/slack/events`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": source, ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, retryAfter: response.headers.get("retry-after"), body: text === "" ? undefined : (JSON.parse(text) as Record<string, unknown>) };
}

function signed(secret: string, body: object, timestamp = now()) {
  return { "x-slack-request-timestamp": String(timestamp), "x-slack-signature": slackSignature(secret, timestamp, JSON.stringify(body)) };
}

/** `count` connected Slack integrations on one workspace and one app (as many bots of one app), in one project. */
async function workspaceWithIntegrations(count: number) {
  const p = await agentProject(server.api, "http://127.0.0.1:9/v1");
  const auth = { token: p.token };
  const first = slack.addBot();
  const ids: string[] = [];
  const paths: string[] = [];
  for (let index = 0; index < count; index++) {
    const bot: FakeBot = index === 0 ? first : slack.addBot({ teamId: first.teamId, appId: first.appId });
    const created = await server.api.post(`${p.base}/integrations`, { name: `eng-${index}`, integration_kind: "slack_thread", settings: {} }, auth);
    expect(created.status, created.text).toBe(201);
    const secretId = await slackSecret(server.api, p, bot.token);
    const setup = await server.api.post(`${p.base}/integrations/${created.body.id}/setup`, { expected_setup_revision: 1, credential_secret_id: secretId }, auth);
    expect(setup.status, setup.text).toBe(200);
    ids.push(decodeId("integration", created.body.id as string)!);
    paths.push(`${p.base}/integrations/${created.body.id}`);
  }
  // Setting up an integration clears the cached signing secrets by a NOTIFY; one arriving after a test warmed
  // the cache would clear it again inside the count.
  await notificationsSettled(server);
  return { bot: first, ids, paths, auth };
}

const mention = (bot: FakeBot) => eventCallback(bot, { type: "app_mention", user: "U0PERSON1", channel: "C0CHANNEL1", text: `<@${bot.botUserId}> hi`, ts: `${now()}.000100` });

describe("integrations: the one inbound receiver", () => {
  it("refuses an unsigned request, or one signed outside the five-minute window, before any database work", async () => {
    const { bot } = await workspaceWithIntegrations(1);
    const body = mention(bot);
    const stop = countStatements(server);
    const unsigned = await post("198.51.100.1", body);
    const malformed = await post("198.51.100.1", body, { "x-slack-request-timestamp": String(now()), "x-slack-signature": "v0=not-hex" });
    const stale = await post("198.51.100.1", body, signed(SIGNING_SECRET, body, now() - 3600));
    const count = stop();
    for (const reply of [unsigned, malformed, stale]) {
      expect(reply.status).toBe(401);
      expect(reply.body).toMatchObject({ code: "unauthorized" });
    }
    expect(count.statements).toBe(0);
  });

  it("checks a forged signature naming a real workspace and app against the cached signing secrets: no database work, no decryption", async () => {
    const { bot, ids } = await workspaceWithIntegrations(4);
    const warm = mention(bot);
    // The first request for the workspace reads its candidates and decrypts their secrets once.
    expect((await post("198.51.100.2", warm, signed("another-secret", warm))).status).toBe(401);
    const forged = mention(bot);
    const stop = countStatements(server);
    const replies = [];
    for (let index = 0; index < 5; index++) replies.push(await post("198.51.100.2", forged, signed("another-secret", forged)));
    const count = stop();
    expect(replies.map((reply) => reply.status)).toEqual([401, 401, 401, 401, 401]);
    // Secrets are read (and decrypted) only through the database: no statement, no decryption.
    expect(count.statements).toBe(0);
    // A request the cached secrets verify goes on to the per-integration work: a receipt for each integration of the app.
    const genuine = mention(bot);
    expect((await post("198.51.100.2", genuine, signed(SIGNING_SECRET, genuine))).status).toBe(200);
    const stored = await server.db.read.select().from(integrationEventReceipts).where(eq(integrationEventReceipts.providerEventId, genuine.event_id));
    expect(stored.map((row) => row.integrationId).sort()).toEqual([...ids].sort());
  });

  it("keeps nothing for an integration disconnected after its secret was cached", async () => {
    const { bot, ids, paths, auth } = await workspaceWithIntegrations(1);
    const first = mention(bot);
    expect((await post("198.51.100.3", first, signed(SIGNING_SECRET, first))).status).toBe(200);
    const before = await server.db.read.select().from(integrationEventReceipts).where(eq(integrationEventReceipts.integrationId, ids[0]!));
    expect(before).toHaveLength(1);
    const disconnected = await server.api.post(`${paths[0]}/disconnect`, {}, auth);
    expect(disconnected.status, disconnected.text).toBe(200);
    const second = mention(bot);
    expect((await post("198.51.100.3", second, signed(SIGNING_SECRET, second))).status).toBe(200);
    const after = await server.db.read.select().from(integrationEventReceipts).where(eq(integrationEventReceipts.integrationId, ids[0]!));
    expect(after).toHaveLength(1);
  });

  it("answers 429 rate_limited with Retry-After once a client address sends more than the limit in a minute, before reading anything", async () => {
    const { bot } = await workspaceWithIntegrations(1);
    const body = mention(bot);
    const replies = [];
    for (let index = 0; index < RATE_LIMIT; index++) replies.push(await post("198.51.100.4", body));
    expect(new Set(replies.map((reply) => reply.status))).toEqual(new Set([401]));
    const stop = countStatements(server);
    const limited = await post("198.51.100.4", body, signed(SIGNING_SECRET, body));
    expect(stop().statements).toBe(0);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: expect.any(String), code: "rate_limited" });
    expect(Number(limited.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(limited.retryAfter)).toBeLessThanOrEqual(60);
    // Another address has its own budget, and the tenant API is not limited by it.
    const other = mention(bot);
    expect((await post("198.51.100.5", other, signed(SIGNING_SECRET, other))).status).toBe(200);
    expect((await server.api.get("/api/v1/me", { token: (await agentProject(server.api, "http://127.0.0.1:9/v1")).token })).status).toBe(200);
  });
});
