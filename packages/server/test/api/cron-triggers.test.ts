import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startFakeProvider, type FakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { createScheduler, type Scheduler } from "../../src/modules/cron-triggers/scheduler.js";
import { cronTargets } from "../../src/modules/cron-triggers/targets.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, launch } from "../support/agent-loop.js";
import { useTestServer } from "../support/server.js";
import { ISO } from "./models-fixtures.js";
import { sql } from "drizzle-orm";
import { decodeId } from "../../src/platform/ids.js";

/*
 * Cron triggers through HTTP, and the scheduler's one entry point (`runDue(now)`) called with the instants
 * a test needs: no test waits for a clock. This server runs no worker, so a fired input stays in the
 * agent's backlog where it can be counted.
 */

const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true" });
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await fake?.close();
});

const CRON_ID = /^cron_[a-z2-7]{26}$/;

function scheduler(): Scheduler {
  return createScheduler({ db: server.db, handlers: cronTargets({ db: server.db, artifacts: server.app.services.artifacts }), leaseSeconds: 60 });
}

async function agentWithProject(): Promise<{ p: AgentProject; agentId: string; configId: string }> {
  const p = await agentProject(server.api, fake.baseUrl);
  const configId = await createConfig(server.api, p, yamlConfig(p));
  return { p, agentId: await launch(server.api, p, configId), configId };
}

/** Triggers a test made: deleted after it, so the next test's scheduler runs fire only its own. */
const made: Array<{ p: AgentProject; id: string }> = [];
afterEach(async () => {
  for (const { p, id } of made.splice(0)) await server.api.delete(`${p.base}/cron-triggers/${id}`, { token: p.token });
});

async function createTrigger(p: AgentProject, body: Record<string, unknown>, key?: string) {
  const reply = await server.api.post(`${p.base}/cron-triggers`, body, { token: p.token, headers: key ? { "idempotency-key": key } : {} });
  if (reply.status === 201) made.push({ p, id: reply.body.id });
  return reply;
}

async function getTrigger(p: AgentProject, id: string) {
  const reply = await server.api.get(`${p.base}/cron-triggers/${id}`, { token: p.token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
}

/** The texts of the agent's waiting inputs, oldest first. */
async function backlogTexts(p: AgentProject, agentId: string): Promise<string[]> {
  const reply = await server.api.get(`${p.base}/agents/${agentId}/inputs/backlog`, { token: p.token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.data.map((input: { content_blocks: Array<{ text: string }> }) => input.content_blocks.map((b) => b.text).join(""));
}

describe("cron triggers", () => {
  it("creates, reads, lists, updates and deletes a trigger; next_fire_at is the schedule's next instant", async () => {
    const { p, agentId } = await agentWithProject();
    const created = await createTrigger(p, { name: "Daily", target: { type: "agent", agent_id: agentId }, cron: "0 9 * * *", message_template: "Good morning" });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(CRON_ID),
      org_id: p.orgId,
      project_id: p.projectId,
      name: "Daily",
      target: { type: "agent", agent_id: agentId },
      cron: "0 9 * * *",
      timezone: "UTC",
      message_template: "Good morning",
      enabled: true,
      last_fired_at: null,
      next_fire_at: expect.stringMatching(ISO),
      failure_report: null,
      created_at: expect.stringMatching(ISO),
      updated_at: created.body.created_at,
    });
    // The next 09:00 UTC after the creation.
    const createdAt = new Date(created.body.created_at);
    const expected = new Date(Date.UTC(createdAt.getUTCFullYear(), createdAt.getUTCMonth(), createdAt.getUTCDate(), 9));
    if (expected <= createdAt) expected.setUTCDate(expected.getUTCDate() + 1);
    expect(created.body.next_fire_at).toBe(expected.toISOString());

    const path = `${p.base}/cron-triggers/${created.body.id}`;
    expect(await getTrigger(p, created.body.id)).toEqual(created.body);
    const listed = await server.api.get(`${p.base}/cron-triggers?agent_id=${agentId}`, { token: p.token });
    expect(listed.body).toEqual({ data: [created.body], next_cursor: null });
    const none = await server.api.get(`${p.base}/cron-triggers?agent_profile_id=aprf_${"a".repeat(26)}`, { token: p.token });
    expect(none.body).toEqual({ data: [], next_cursor: null });

    const disabled = await server.api.patch(path, { enabled: false, name: "Daily report" }, { token: p.token });
    expect(disabled.status, disabled.text).toBe(200);
    expect(disabled.body).toMatchObject({ enabled: false, next_fire_at: null, name: "Daily report" });
    const enabled = await server.api.patch(path, { enabled: true, cron: "30 8 * * 1-5", timezone: "Europe/Berlin" }, { token: p.token });
    expect(enabled.body).toMatchObject({ enabled: true, cron: "30 8 * * 1-5", timezone: "Europe/Berlin", next_fire_at: expect.stringMatching(ISO) });
    // 08:30 in Berlin is 07:30 or 06:30 UTC, on a weekday.
    const next = new Date(enabled.body.next_fire_at);
    expect([6, 7]).toContain(next.getUTCHours());
    expect(next.getUTCMinutes()).toBe(30);
    expect(await server.api.patch(path, { target: { type: "agent", agent_id: agentId } }, { token: p.token })).toMatchObject({ status: 400 });

    expect((await server.api.delete(path, { token: p.token })).status).toBe(204);
    expect((await server.api.get(path, { token: p.token })).status).toBe(404);
    expect((await server.api.delete(path, { token: p.token })).status).toBe(404);
  });

  it("refuses a bad schedule, timezone or template with the issue at its field", async () => {
    const { p, agentId } = await agentWithProject();
    const base = { name: "Bad", target: { type: "agent", agent_id: agentId }, message_template: "hi" };
    const issuesOf = async (body: Record<string, unknown>) => {
      const reply = await createTrigger(p, { ...base, ...body });
      expect(reply.status, reply.text).toBe(400);
      expect(reply.body.code).toBe("validation_failed");
      return reply.body.issues as Array<{ path: string; message: string }>;
    };
    expect(await issuesOf({ cron: "61 * * * *" })).toEqual([{ path: "/cron", message: "minute field: 61 is outside 0-59" }]);
    expect(await issuesOf({ cron: "* * * *  " })).toEqual([{ path: "/cron", message: expect.stringContaining("exactly five fields") }]);
    expect(await issuesOf({ cron: "*/0 * * * *" })).toEqual([{ path: "/cron", message: expect.stringContaining("minute field: the step") }]);
    expect(await issuesOf({ cron: "0 0 * * 5-2" })).toEqual([{ path: "/cron", message: expect.stringContaining("day of week field") }]);
    expect(await issuesOf({ cron: "TZ=UTC 0 9 * * *" })).toEqual([{ path: "/cron", message: expect.stringContaining("timezone field") }]);
    expect(await issuesOf({ cron: "0 0 30 2 *" })).toEqual([{ path: "/cron", message: expect.stringContaining("never fires") }]);
    expect(await issuesOf({ cron: "0 9 * * *", timezone: "Mars/Olympus" })).toEqual([{ path: "/timezone", message: expect.stringContaining("IANA") }]);
    expect(await issuesOf({ cron: "0 9 * * *", message_template: "{{.trigger.local_time}}" })).toEqual([
      { path: "/message_template", message: expect.stringContaining("unknown variable .trigger.local_time") },
    ]);
    expect(await issuesOf({ cron: "0 9 * * *", message_template: "{{printf \"%d\" 1}}" })).toEqual([
      { path: "/message_template", message: expect.stringContaining("is not supported") },
    ]);
    for (const empty of ["", " \n\t"]) {
      expect(await issuesOf({ cron: "0 9 * * *", message_template: empty })).toEqual([{ path: "/message_template", message: expect.stringContaining("must not be empty") }]);
    }
    // Names, lists, ranges and steps are standard.
    const ok = await createTrigger(p, { ...base, cron: "0,30 9-17/2 1-15 JAN-jun mon-FRI", message_template: "{{- .trigger.name -}} on {{.trigger.local_date}}" });
    expect(ok.status, ok.text).toBe(201);
    // A change is held to the same rule, and nothing changes.
    const emptied = await server.api.patch(`${p.base}/cron-triggers/${ok.body.id}`, { message_template: "", name: "Renamed" }, { token: p.token });
    expect(emptied.status, emptied.text).toBe(400);
    expect(emptied.body.issues).toEqual([{ path: "/message_template", message: expect.stringContaining("must not be empty") }]);
    expect(await getTrigger(p, ok.body.id)).toMatchObject({ name: "Bad", message_template: "{{- .trigger.name -}} on {{.trigger.local_date}}" });
    // An unknown or archived target.
    const missing = await createTrigger(p, { ...base, cron: "0 9 * * *", target: { type: "agent", agent_id: `agt_${"a".repeat(26)}` } });
    expect(missing.status).toBe(404);
  });

  it("replays a creation with the same Idempotency-Key and refuses the key for another request", async () => {
    const { p, agentId } = await agentWithProject();
    const body = { name: "Once", target: { type: "agent", agent_id: agentId }, cron: "0 9 * * *", message_template: "hi" };
    const first = await createTrigger(p, body, "k1");
    const again = await createTrigger(p, body, "k1");
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(again.body).toEqual(first.body);
    expect((await createTrigger(p, { ...body, name: "Other" }, "k1")).status).toBe(409);
  });

  it("fires at the right instants across daylight-saving changes, coalescing missed firings into one", async () => {
    const { p, agentId } = await agentWithProject();
    const created = await createTrigger(p, {
      name: "Nightly",
      target: { type: "agent", agent_id: agentId },
      cron: "30 2 * * *",
      timezone: "America/New_York",
      message_template: "{{.trigger.name}} for {{.trigger.local_date}} at {{.trigger.fired_at}} (last {{.trigger.last_fired_at}})",
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id;
    const firstSlot = created.body.next_fire_at;
    const s = scheduler();

    // Months of missed slots fire once, for the oldest; the schedule resumes from "now".
    expect(await s.runDue(new Date("2027-03-14T06:00:00Z"))).toBe(1);
    let trigger = await getTrigger(p, id);
    expect(trigger.last_fired_at).toBe(firstSlot);
    // 02:30 does not exist on 14 March 2027 in New York: the next valid instant is 03:00 EDT.
    expect(trigger.next_fire_at).toBe("2027-03-14T07:00:00.000Z");
    expect(await s.runDue(new Date("2027-03-14T06:59:59Z"))).toBe(0);
    expect(await s.runDue(new Date("2027-03-14T07:00:00Z"))).toBe(1);
    trigger = await getTrigger(p, id);
    expect(trigger).toMatchObject({ last_fired_at: "2027-03-14T07:00:00.000Z", next_fire_at: "2027-03-15T06:30:00.000Z", failure_report: null });
    expect(await s.runDue(new Date("2027-03-14T07:00:00Z"))).toBe(0);

    // 01:30 happens twice on 7 November 2027: it fires at the first only.
    const patched = await server.api.patch(`${p.base}/cron-triggers/${id}`, { cron: "30 1 * * *" }, { token: p.token });
    expect(patched.status, patched.text).toBe(200);
    expect(await s.runDue(new Date("2027-11-07T05:00:00Z"))).toBe(1);
    expect((await getTrigger(p, id)).next_fire_at).toBe("2027-11-07T05:30:00.000Z");
    expect(await s.runDue(new Date("2027-11-07T05:30:00Z"))).toBe(1);
    expect((await getTrigger(p, id)).next_fire_at).toBe("2027-11-08T06:30:00.000Z");
    expect(await s.runDue(new Date("2027-11-07T06:30:00Z"))).toBe(0);

    const texts = await backlogTexts(p, agentId);
    expect(texts).toHaveLength(4);
    expect(texts[1]).toBe("Nightly for 2027-03-14 at 2027-03-14T07:00:00.000Z (last " + firstSlot + ")");
    expect(texts[3]).toBe("Nightly for 2027-11-07 at 2027-11-07T05:30:00.000Z (last " + texts[2]!.match(/at (\S+) /)![1] + ")");
  });

  it("two schedulers racing for one due firing fire it once", async () => {
    const { p, agentId } = await agentWithProject();
    const created = await createTrigger(p, { name: "Race", target: { type: "agent", agent_id: agentId }, cron: "*/5 * * * *", message_template: "tick" });
    const at = new Date(Date.parse(created.body.next_fire_at) + 1000);
    const fired = await Promise.all([scheduler().runDue(at), scheduler().runDue(at), scheduler().runDue(at)]);
    expect(fired.reduce((a, b) => a + b, 0)).toBe(1);
    expect(await backlogTexts(p, agentId)).toEqual(["tick"]);
    expect((await getTrigger(p, created.body.id)).last_fired_at).toBe(created.body.next_fire_at);
  });

  it("a profile target launches a new agent from the profile's current config at each firing", async () => {
    const { p, configId } = await agentWithProject();
    const profile = await server.api.post(`${p.base}/agent-profiles`, { name: "Reporter", config: configId }, { token: p.token });
    expect(profile.status, profile.text).toBe(201);
    const created = await createTrigger(p, {
      name: "Report",
      target: { type: "profile", agent_profile_id: profile.body.id },
      cron: "0 * * * *",
      message_template: "report for {{.trigger.local_date}}",
    });
    expect(created.status, created.text).toBe(201);
    const s = scheduler();
    const at = new Date(Date.parse(created.body.next_fire_at));
    expect(await s.runDue(at)).toBe(1);
    expect(await s.runDue(new Date(at.getTime() + 3_600_000))).toBe(1);
    const agents = await server.api.get(`${p.base}/agents?agent_profile_id=${profile.body.id}`, { token: p.token });
    expect(agents.status, agents.text).toBe(200);
    expect(agents.body.data).toHaveLength(2);
    const texts: string[] = [];
    for (const agent of agents.body.data) {
      expect(agent).toMatchObject({ name: "Reporter", agent_profile_id: profile.body.id });
      texts.push(...(await backlogTexts(p, agent.id)));
    }
    // Each firing renders its own slot's date: the second slot falls on the next day when the first is at 23:00 UTC.
    const slotDates = [at, new Date(at.getTime() + 3_600_000)].map((slot) => `report for ${slot.toISOString().slice(0, 10)}`);
    expect(texts.sort()).toEqual(slotDates.sort());

    // A deleted profile: the firing fails, says why, and the trigger stops.
    expect((await server.api.delete(`${p.base}/agent-profiles/${profile.body.id}`, { token: p.token })).status).toBe(204);
    expect(await s.runDue(new Date(at.getTime() + 7_200_000))).toBe(0);
    const failed = await getTrigger(p, created.body.id);
    expect(failed).toMatchObject({
      enabled: false,
      next_fire_at: null,
      failure_report: { message: expect.stringContaining("agent profile was deleted"), will_retry: false, failed_at: expect.stringMatching(ISO) },
    });
  });

  it("a firing whose model is no longer granted fails, will retry after a backoff, and fires once the grant is back", async () => {
    const { p, agentId } = await agentWithProject();
    const created = await createTrigger(p, { name: "Ping", target: { type: "agent", agent_id: agentId }, cron: "0 * * * *", message_template: "ping" });
    expect(created.status, created.text).toBe(201);
    const grants = await server.api.get(`${p.base}/model-grants`, { token: p.token });
    expect(grants.status, grants.text).toBe(200);
    expect((await server.api.delete(`${p.base}/model-grants/${grants.body.data[0].grant.id}`, { token: p.token })).status).toBe(204);

    const s = scheduler();
    const slot = new Date(Date.parse(created.body.next_fire_at));
    expect(await s.runDue(slot)).toBe(0);
    expect(await backlogTexts(p, agentId)).toEqual([]);
    expect(await getTrigger(p, created.body.id)).toMatchObject({
      enabled: true,
      next_fire_at: created.body.next_fire_at,
      failure_report: { message: expect.stringContaining(`"${p.modelName}" is not granted`), will_retry: true, failed_at: expect.stringMatching(ISO) },
    });
    // The backoff holds the slot: running again at once fires nothing.
    expect(await s.runDue(slot)).toBe(0);

    const regranted = await server.api.post(`${p.base}/model-grants`, { configured_model_id: p.configuredModelId }, { token: p.token });
    expect(regranted.status, regranted.text).toBe(201);
    // The backoff has passed (as a minute would pass) and the same slot fires, once.
    await server.db.write.execute(sql`UPDATE cron_triggers SET claimed_until = now() - interval '1 second' WHERE id = ${decodeId("cronTrigger", created.body.id)}`);
    expect(await s.runDue(slot)).toBe(1);
    expect(await backlogTexts(p, agentId)).toEqual(["ping"]);
    const fired = await getTrigger(p, created.body.id);
    expect(fired).toMatchObject({ enabled: true, failure_report: null, last_fired_at: created.body.next_fire_at });
    expect(Date.parse(fired.next_fire_at)).toBe(slot.getTime() + 3_600_000);
  });

  it("an archived agent's trigger records the failure and is disabled", async () => {
    const { p, agentId } = await agentWithProject();
    const created = await createTrigger(p, { name: "Ping", target: { type: "agent", agent_id: agentId }, cron: "0 * * * *", message_template: "ping" });
    expect((await server.api.post(`${p.base}/agents/${agentId}/archive`, {}, { token: p.token })).status).toBe(200);
    expect(await scheduler().runDue(new Date(Date.parse(created.body.next_fire_at)))).toBe(0);
    expect(await getTrigger(p, created.body.id)).toMatchObject({
      enabled: false,
      next_fire_at: null,
      last_fired_at: null,
      failure_report: { message: expect.stringContaining("archived"), will_retry: false },
    });
    // Enabling it again schedules it; creating one for the archived agent is refused.
    const again = await createTrigger(p, { name: "Ping", target: { type: "agent", agent_id: agentId }, cron: "0 * * * *", message_template: "ping" });
    expect(again.status).toBe(409);
  });

  it("holds at most 1,000 triggers a project", async () => {
    const { p, agentId } = await agentWithProject();
    const [org, project, agent] = [decodeId("org", p.orgId), decodeId("project", p.projectId), decodeId("agent", agentId)];
    // 999 disabled triggers written directly: a thousand creations through HTTP would only make the test slow.
    await server.db.write.execute(sql`
      INSERT INTO cron_triggers (id, org_id, project_id, name, target_kind, agent_id, cron, timezone, message_template, enabled, request_digest)
      SELECT gen_random_uuid(), ${org}, ${project}, 'bulk ' || n, 'agent', ${agent}, '0 9 * * *', 'UTC', 'hi', false, ''
      FROM generate_series(1, 999) AS n`);
    const body = { name: "One more", target: { type: "agent", agent_id: agentId }, cron: "0 9 * * *", message_template: "hi", enabled: false };
    expect((await createTrigger(p, body)).status).toBe(201);
    const over = await createTrigger(p, body);
    expect(over.status, over.text).toBe(409);
    expect(over.body).toMatchObject({ code: "conflict", error: expect.stringContaining("1000") });
    const page = await server.api.get(`${p.base}/cron-triggers?limit=100`, { token: p.token });
    expect(page.body.data).toHaveLength(100);
    expect(page.body.next_cursor).toEqual(expect.any(String));
  });
});
