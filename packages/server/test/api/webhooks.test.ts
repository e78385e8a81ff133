import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, eventually, launch, untilEvents, finalOutputs } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";
import { countStatements } from "../support/statements.js";
import { sql } from "drizzle-orm";
import { useWebhookReceiver, verified, type ReceivedWebhook } from "../support/webhook-receiver.js";

/*
 * Webhooks end to end (docs/webhooks.md): endpoints through the API, deliveries to a receiver on loopback
 * (plain http to loopback is allowed: the test server runs embedded-style with the private network allowed),
 * every request verified with the SDK's Standard Webhooks verifier.
 */
const server = useTestServer({}, { worker: true, webhooks: true });
const provider = useFakeProvider();
const receiver = useWebhookReceiver();

async function owner() {
  const { token, org, project } = await server.api.userWithOrg("Hooks");
  return { token, orgId: org.id as string, projectId: project.id as string, base: `/api/v1/orgs/${org.id}/webhook-endpoints` };
}

async function createEndpoint(who: { token: string; base: string }, body: Record<string, unknown> = {}) {
  const created = await server.api.post(who.base, { url: receiver.url, ...body }, { token: who.token });
  expect(created.status, created.text).toBe(201);
  return created.body as { id: string; secret: string; [key: string]: unknown };
}

/** The receiver's requests for one webhook-id… waited for until `count` arrived. */
async function requestsFor(webhookId: string, count = 1): Promise<ReceivedWebhook[]> {
  return eventually(
    async () => receiver.received.filter((r) => r.headers["webhook-id"] === webhookId),
    (list) => list.length >= count,
    60_000,
  );
}

async function deliveries(who: { token: string; base: string }, endpointId: string): Promise<any[]> {
  const reply = await server.api.get(`${who.base}/${endpointId}/deliveries`, { token: who.token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.data;
}

describe("the sender at rest", () => {
  it("asks the database nothing while no delivery is pending: an empty queue is not one due now", async () => {
    // It once read "no pending delivery" as "one due now" and asked again at once, hundreds of times a second.
    const pending = async () =>
      ((await server.db.read.execute(sql`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending'`)) as unknown as { rows: Array<{ n: number }> }).rows[0]!.n;
    await eventually(pending, (n) => n === 0);
    const count = countStatements(server);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    // The worker's and maintenance's own polls take a few; the spin took thousands.
    expect(count().statements).toBeLessThan(40);
  });
});

describe("webhook endpoints", () => {
  it("are created with a whsec_ secret shown once, listed in pages, updated and deleted", async () => {
    const who = await owner();
    const first = await createEndpoint(who, { description: "ops", event_types: ["agent.waiting"], project_ids: [who.projectId] });
    expect(first.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(first).toMatchObject({ url: receiver.url, description: "ops", event_types: ["agent.waiting"], project_ids: [who.projectId], disabled: false, disabled_reason: null });
    expect(first.id).toMatch(/^whe_[a-z2-7]{26}$/);
    await createEndpoint(who);
    const got = await server.api.get(`${who.base}/${first.id}`, { token: who.token });
    expect(got.status).toBe(200);
    expect(got.body.secret).toBeUndefined();
    const page = await server.api.get(`${who.base}?limit=1`, { token: who.token });
    expect(page.body.data).toHaveLength(1);
    expect(page.body.next_cursor).not.toBeNull();
    const rest = await server.api.get(`${who.base}?limit=1&cursor=${page.body.next_cursor}`, { token: who.token });
    expect(rest.body.data[0].id).toBe(first.id);
    expect(rest.body.next_cursor).toBeNull();

    const patched = await server.api.patch(`${who.base}/${first.id}`, { event_types: [], disabled: true, description: "all" }, { token: who.token });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ event_types: [], disabled: true, description: "all" });
    const testWhileDisabled = await server.api.post(`${who.base}/${first.id}/test`, undefined, { token: who.token });
    expect(testWhileDisabled.status).toBe(409);

    const removed = await server.api.delete(`${who.base}/${first.id}`, { token: who.token });
    expect(removed.status).toBe(204);
    expect((await server.api.get(`${who.base}/${first.id}`, { token: who.token })).status).toBe(404);
  });

  it("require https, except plain http to a private address while the private network is allowed; a foreign project is a 400", async () => {
    const who = await owner();
    for (const url of ["http://example.com/hook", "ftp://127.0.0.1/hook", "not a url", "https://user:pw@example.com/hook"]) {
      const refused = await server.api.post(who.base, { url }, { token: who.token });
      expect(refused.status, url).toBe(400);
      expect(refused.body.code).toBe("validation_failed");
      expect(refused.body.issues[0].path).toBe("/url");
    }
    const other = await owner();
    const foreign = await server.api.post(who.base, { url: receiver.url, project_ids: [other.projectId] }, { token: who.token });
    expect(foreign.status).toBe(400);
    expect(foreign.body.issues[0].path).toBe("/project_ids/0");
    const unknownType = await server.api.post(who.base, { url: receiver.url, event_types: ["agent.dreaming"] }, { token: who.token });
    expect(unknownType.status).toBe(400);
  });

  it("are managed by org owners and admins only", async () => {
    const who = await owner();
    const endpoint = await createEndpoint(who);
    const member = await server.api.orgMember({ token: who.token }, who.orgId, "member");
    expect((await server.api.get(who.base, { token: member.token })).status).toBe(403);
    expect((await server.api.post(who.base, { url: receiver.url }, { token: member.token })).status).toBe(403);
    expect((await server.api.post(`${who.base}/${endpoint.id}/rotate-secret`, undefined, { token: member.token })).status).toBe(403);
    const admin = await server.api.orgMember({ token: who.token }, who.orgId, "admin");
    expect((await server.api.get(`${who.base}/${endpoint.id}`, { token: admin.token })).status).toBe(200);
  });
});

describe("deliveries", () => {
  it("send webhook.test signed per Standard Webhooks, and record it as succeeded", async () => {
    const who = await owner();
    const endpoint = await createEndpoint(who);
    const sent = await server.api.post(`${who.base}/${endpoint.id}/test`, undefined, { token: who.token });
    expect(sent.status, sent.text).toBe(202);
    expect(sent.body).toMatchObject({ event_type: "webhook.test", status: "pending", attempts: 0, endpoint_id: endpoint.id });
    const [request] = await requestsFor(sent.body.webhook_id);
    expect(request!.headers["content-type"]).toBe("application/json");
    expect(request!.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const event = await verified(endpoint.secret, request!);
    expect(event).toMatchObject({ type: "webhook.test", data: { endpoint_id: endpoint.id, org_id: who.orgId } });
    expect(Number.isNaN(Date.parse(event.timestamp))).toBe(false);
    const [delivery] = await eventually(() => deliveries(who, endpoint.id), (list) => list[0]?.status === "succeeded");
    expect(delivery).toMatchObject({ id: sent.body.id, status: "succeeded", attempts: 1, last_status_code: 204, last_error: null, next_attempt_at: null });
  });

  it("retry after a 500 with the same webhook-id, and succeed", async () => {
    const who = await owner();
    const endpoint = await createEndpoint(who);
    receiver.answerNext(500);
    const sent = await server.api.post(`${who.base}/${endpoint.id}/test`, undefined, { token: who.token });
    const [failed] = await requestsFor(sent.body.webhook_id);
    expect(failed!.answered).toBe(500);
    const [afterFailure] = await eventually(() => deliveries(who, endpoint.id), (list) => list[0]?.attempts === 1 && list[0]?.last_status_code === 500);
    expect(afterFailure).toMatchObject({ status: "pending", last_error: "answered 500" });
    expect(afterFailure.next_attempt_at).not.toBeNull();
    // The first retry comes after about 5 seconds.
    const both = await requestsFor(sent.body.webhook_id, 2);
    expect(both.map((r) => r.answered)).toEqual([500, 204]);
    expect(both[1]!.body).toBe(both[0]!.body);
    await verified(endpoint.secret, both[1]!);
    const [delivery] = await eventually(() => deliveries(who, endpoint.id), (list) => list[0]?.status === "succeeded");
    expect(delivery).toMatchObject({ attempts: 2, last_status_code: 204 });
  });

  it("carry both signatures for a day after rotate-secret, and a redelivery keeps the webhook-id", async () => {
    const who = await owner();
    const endpoint = await createEndpoint(who);
    const rotated = await server.api.post(`${who.base}/${endpoint.id}/rotate-secret`, undefined, { token: who.token });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    const overlapHours = (Date.parse(rotated.body.previous_secret_expires_at) - Date.now()) / 3_600_000;
    expect(overlapHours).toBeGreaterThan(23);
    expect(overlapHours).toBeLessThanOrEqual(24);

    const sent = await server.api.post(`${who.base}/${endpoint.id}/test`, undefined, { token: who.token });
    const [request] = await requestsFor(sent.body.webhook_id);
    expect((request!.headers["webhook-signature"] as string).split(" ")).toHaveLength(2);
    await verified(rotated.body.secret, request!);
    await verified(endpoint.secret, request!);

    const again = await server.api.post(`${who.base}/${endpoint.id}/deliveries/${sent.body.id}/redeliver`, undefined, { token: who.token });
    expect(again.status, again.text).toBe(202);
    expect(again.body.id).not.toBe(sent.body.id);
    expect(again.body.webhook_id).toBe(sent.body.webhook_id);
    const both = await requestsFor(sent.body.webhook_id, 2);
    expect(both[1]!.body).toBe(both[0]!.body);
    await eventually(() => deliveries(who, endpoint.id), (list) => list.length === 2 && list.every((d) => d.status === "succeeded"));
    const missing = await server.api.post(`${who.base}/${endpoint.id}/deliveries/whd_${"a".repeat(26)}/redeliver`, undefined, { token: who.token });
    expect(missing.status).toBe(404);
  });
});

describe("agent events", () => {
  const toolsYaml = `tools:\n  lookup:\n    type: custom\n    description: Looks a thing up\n    permission:\n      mode: always_ask\n    input_schema:\n      type: object\n      properties:\n        q: { type: string }\n      required: [q]\n`;

  it("send agent.waiting when an approval opens, and agent.idle when the agent is done; an endpoint gets only its types and projects", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const who = { token: project.token, base: `/api/v1/orgs/${project.orgId}/webhook-endpoints` };
    const waiting = await createEndpoint(who, { event_types: ["agent.waiting"], project_ids: [project.projectId] });
    const everything = await createEndpoint(who);
    const otherProject = await server.api.post(`/api/v1/orgs/${project.orgId}/projects`, { name: "elsewhere" }, { token: project.token });
    expect(otherProject.status, otherProject.text).toBe(201);
    const elsewhere = await createEndpoint(who, { project_ids: [otherProject.body.id] });

    provider.script({ toolCalls: [{ name: "lookup", input: { q: "one" } }] }, { text: "done" });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project, toolsYaml)), "go");
    const opened = await eventually(
      async () => (await server.api.get(`${project.base}/agents/${agentId}/interactions`, { token: project.token })).body.data as any[],
      (list) => list.length === 1,
    );
    const announced = await eventually(async () => receiver.ofType("agent.waiting").filter((r) => r.body.includes(agentId)), (list) => list.length === 2);
    const byEndpoint = await Promise.all(announced.map(async (r) => {
      try {
        return { endpoint: "waiting", event: await verified(waiting.secret, r) };
      } catch {
        return { endpoint: "everything", event: await verified(everything.secret, r) };
      }
    }));
    expect(byEndpoint.map((b) => b.endpoint).sort()).toEqual(["everything", "waiting"]);
    expect(byEndpoint[0]!.event.data).toEqual({ agent_id: agentId, project_id: project.projectId, interaction: opened[0] });
    expect((byEndpoint[0]!.event.data as any).interaction.request.questions[0].options.map((o: any) => o.label)).toEqual(["Allow", "Deny"]);

    const resolved = await server.api.post(`${project.base}/agents/${agentId}/interactions/${opened[0].id}/resolve`, { answers: [{ option_indices: [1] }] }, { token: project.token });
    expect(resolved.status, resolved.text).toBe(200);
    await untilEvents(server.api, project, agentId, (list) => finalOutputs(list).length === 1);
    const idle = await eventually(async () => receiver.ofType("agent.idle").filter((r) => r.body.includes(agentId)), (list) => list.length === 1);
    const event = await verified(everything.secret, idle[0]!);
    expect(event.data).toMatchObject({ agent_id: agentId, project_id: project.projectId });
    expect((event.data as any).turn_id).toMatch(/^trn_/);
    // The other endpoints never wanted it: one by type, one by project.
    expect(await deliveries(who, waiting.id)).toHaveLength(1);
    expect(await deliveries(who, elsewhere.id)).toHaveLength(0);
  });

  it("send agent.failed when a turn ends with an error svc does not retry", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const who = { token: project.token, base: `/api/v1/orgs/${project.orgId}/webhook-endpoints` };
    const endpoint = await createEndpoint(who, { event_types: ["agent.failed"] });
    provider.script({ error: { status: 400, message: "bad request body" } });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)), "go");
    const [request] = await eventually(async () => receiver.ofType("agent.failed").filter((r) => r.body.includes(agentId)), (list) => list.length === 1);
    const event = await verified(endpoint.secret, request!);
    expect(event.data).toMatchObject({ agent_id: agentId, project_id: project.projectId });
    expect((event.data as any).error.message).toContain("bad request body");
    expect((event.data as any).turn_id).toMatch(/^trn_/);
  });

  it("send machine.offline when a machine's daemon ends its runtime, to endpoints without projects", async () => {
    const who = await owner();
    const auth = { token: who.token };
    const endpoint = await createEndpoint(who, { event_types: ["machine.offline"] });
    const scoped = await createEndpoint(who, { event_types: ["machine.offline"], project_ids: [who.projectId] });
    const machine = (await server.api.post(`/api/v1/orgs/${who.orgId}/machines/connect`, { display_name: "laptop", project_ids: [who.projectId] }, auth)).body.machine;
    const daemonToken = (await server.api.post(`/api/v1/orgs/${who.orgId}/machines/${machine.id}/daemon-tokens`, { name: "hooks" }, auth)).body.token;
    const registered = await server.api.post("/api/v1/daemon/runtimes", { daemon_instance_id: randomUUID(), daemon_version: "test", processes: [] }, { token: daemonToken });
    expect(registered.status, registered.text).toBe(201);
    const ended = await server.api.post(`/api/v1/daemon/runtimes/${registered.body.runtime.id}/end`, undefined, { token: daemonToken });
    expect(ended.status, ended.text).toBe(200);
    const [request] = await eventually(async () => receiver.ofType("machine.offline").filter((r) => r.body.includes(machine.id)), (list) => list.length === 1);
    const event = await verified(endpoint.secret, request!);
    expect(event.data).toEqual({ machine_id: machine.id, name: "laptop", reason: "the daemon ended its runtime" });
    expect(await deliveries(who, scoped.id)).toHaveLength(0);
  });
});
