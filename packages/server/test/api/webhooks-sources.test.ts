import { randomUUID } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { machines } from "../../src/db/schema/index.js";
import { decodeId } from "../../src/platform/ids.js";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, eventually, events, finalOutputs, launch, send } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { startFakeSlack } from "../support/fake-slack.js";
import { eventCallback, postSlackEvent } from "../support/slack-events.js";
import { useTestServer } from "../support/server.js";
import { useWebhookReceiver, verified, type ReceivedWebhook } from "../support/webhook-receiver.js";
import { createIntegration, createProfile, integrationProject, slackSecret } from "./integrations-fixtures.js";

/*
 * The webhook events that no request asks for (docs/webhooks.md): an integration's provider failing, a
 * machine whose daemon went silent, a budget's thresholds crossed. Each reaches a receiver on loopback,
 * verified with the SDK's Standard Webhooks verifier, once. Maintenance runs every 300 ms here so that a
 * lapsed lease is noticed quickly.
 */
const slack = await startFakeSlack();
const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true", SVC_SLACK_API_URL: slack.apiUrl, SVC_MAINTENANCE_INTERVAL_MS: "300" }, { worker: true, webhooks: true });
const provider = useFakeProvider();
const receiver = useWebhookReceiver();
afterAll(() => slack.close());

/** The signing secret integrations-fixtures' slackSecret stores. */
const SIGNING_SECRET = "signing-SENTINEL";
const USAGE = { inputTokens: 1000, outputTokens: 200, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
const CALL_TOKENS = 1200;

async function createEndpoint(who: { token: string; orgId: string }, body: Record<string, unknown>) {
  const created = await server.api.post(`/api/v1/orgs/${who.orgId}/webhook-endpoints`, { url: receiver.url, ...body }, { token: who.token });
  expect(created.status, created.text).toBe(201);
  return created.body as { id: string; secret: string };
}

/** Requests of one type whose body mentions `id`, waited for until `count` arrived. */
const arrived = (type: string, id: string, count = 1): Promise<ReceivedWebhook[]> =>
  eventually(async () => receiver.ofType(type).filter((r) => r.body.includes(id)), (list) => list.length >= count, 30_000);

describe("webhooks from svc's own observations", () => {
  it("send integration.failed when an integration's provider starts failing", async () => {
    const p = await integrationProject(server.api);
    const auth = { token: p.token };
    const profileId = await createProfile(server.api, p, "helper");
    const integration = await createIntegration(server.api, p, "eng", { launcher: { profiles: [profileId] } });
    const bot = slack.addBot();
    const secretId = await slackSecret(server.api, p, bot.token);
    const path = `${p.integrations}/${integration.id}`;
    const setup = await server.api.post(`${path}/setup`, { expected_setup_revision: 1, credential_secret_id: secretId }, auth);
    expect(setup.status, setup.text).toBe(200);
    const endpoint = await createEndpoint(p, { event_types: ["integration.failed"] });
    const otherProject = await server.api.post(`/api/v1/orgs/${p.orgId}/projects`, { name: "elsewhere" }, auth);
    const elsewhere = await createEndpoint(p, { event_types: ["integration.failed"], project_ids: [otherProject.body.id] });

    slack.reset();
    slack.failNext("reactions.add", 500);
    const mention = { type: "app_mention", user: "U0ASKER01", text: `<@${bot.botUserId}> go`, ts: "1700000400.000100", channel: "C0HOOKS01" };
    await postSlackEvent(server.url, SIGNING_SECRET, eventCallback(bot, mention));
    await eventually(() => server.api.get(path, auth), (reply) => reply.body.runtime_failure !== undefined, 30_000);
    const [request] = await arrived("integration.failed", integration.id);
    const event = await verified(endpoint.secret, request!);
    expect(event.data).toEqual({
      integration_id: integration.id,
      project_id: p.projectId,
      kind: "slack_thread",
      name: "eng",
      message: expect.stringContaining("reactions.add"),
    });
    const listed = await server.api.get(`/api/v1/orgs/${p.orgId}/webhook-endpoints/${elsewhere.id}/deliveries`, auth);
    expect(listed.body.data).toEqual([]);
  });

  it("send machine.offline once when a machine's daemon lease lapses without a word", async () => {
    const { token, org, project } = await server.api.userWithOrg("Lapse");
    const who = { token, orgId: org.id as string };
    const auth = { token };
    const endpoint = await createEndpoint(who, { event_types: ["machine.offline"] });
    const machine = (await server.api.post(`/api/v1/orgs/${who.orgId}/machines/connect`, { display_name: "desk", project_ids: [project.id] }, auth)).body.machine;
    const daemonToken = (await server.api.post(`/api/v1/orgs/${who.orgId}/machines/${machine.id}/daemon-tokens`, { name: "hooks" }, auth)).body.token;
    const registered = await server.api.post("/api/v1/daemon/runtimes", { daemon_instance_id: randomUUID(), daemon_version: "test", processes: [] }, { token: daemonToken });
    expect(registered.status, registered.text).toBe(201);
    expect(receiver.ofType("machine.offline").filter((r) => r.body.includes(machine.id))).toEqual([]);

    // Two minutes without a heartbeat, by the database clock: the lease is moved into the past.
    const machineId = decodeId("machine", machine.id)!;
    await server.db.tx((tx) => tx.update(machines).set({ leaseExpiresAt: sql`statement_timestamp() - interval '1 second'` }).where(eq(machines.id, machineId)));
    const [request] = await arrived("machine.offline", machine.id);
    const event = await verified(endpoint.secret, request!);
    expect(event.data).toEqual({ machine_id: machine.id, name: "desk", reason: "its daemon stopped sending heartbeats" });
    // Later maintenance runs find the lapse announced: one delivery, not one per run.
    const announced = async () => (await server.db.read.select({ lease: machines.offlineAnnouncedLease }).from(machines).where(eq(machines.id, machineId)))[0]?.lease;
    expect(await announced()).not.toBeNull();
    const delivered = await eventually(
      async () => (await server.api.get(`/api/v1/orgs/${who.orgId}/webhook-endpoints/${endpoint.id}/deliveries`, auth)).body.data as any[],
      (list) => list.length === 1 && list[0].status === "succeeded",
    );
    expect(delivered).toHaveLength(1);
  });

  it("send budget.warning and budget.exceeded as a budget crosses its thresholds, each once", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const auth = { token: project.token };
    const endpoint = await createEndpoint(project, { event_types: ["budget.warning", "budget.exceeded"], project_ids: [project.projectId] });
    const budget = (
      await server.api.post(
        `/api/v1/orgs/${project.orgId}/budgets`,
        { name: "watch", scope: { kind: "project", id: project.projectId }, period: "month", limit_tokens: 2 * CALL_TOKENS, action: "notify", notify_at_percent: [50] },
        auth,
      )
    ).body;
    provider.script(...[1, 2, 3].map((n) => ({ text: `answer ${n}`, usage: USAGE })));
    const config = await createConfig(server.api, project, yamlConfig(project));
    const agentId = await launch(server.api, project, config, "1");
    for (const n of [2, 3]) {
      await eventually(() => events(server.api, project, agentId), (list) => finalOutputs(list).length >= n - 1);
      await send(server.api, project, agentId, String(n));
    }
    await eventually(() => events(server.api, project, agentId), (list) => finalOutputs(list).length >= 3);

    const [warning] = await arrived("budget.warning", budget.id);
    const [exceeded] = await arrived("budget.exceeded", budget.id);
    const common = {
      budget_id: budget.id,
      scope: { kind: "project", id: project.projectId },
      period_end: budget.period_end,
      limit_micro_usd: null,
      limit_tokens: 2 * CALL_TOKENS,
      spent_micro_usd: 0,
      agent_id: agentId,
    };
    expect((await verified(endpoint.secret, warning!)).data).toEqual({ ...common, percent: 50, spent_tokens: CALL_TOKENS });
    expect((await verified(endpoint.secret, exceeded!)).data).toEqual({ ...common, percent: 100, spent_tokens: 2 * CALL_TOKENS });
    // The third call's claim saw the limit already announced: nothing more.
    const delivered = await eventually(
      async () => (await server.api.get(`/api/v1/orgs/${project.orgId}/webhook-endpoints/${endpoint.id}/deliveries`, auth)).body.data as any[],
      (list) => list.length === 2 && list.every((d) => d.status === "succeeded"),
    );
    expect(delivered.map((d) => d.event_type).sort()).toEqual(["budget.exceeded", "budget.warning"]);
  });
});
