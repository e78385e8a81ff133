import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { rawRows } from "../../src/platform/db/index.js";
import { MIGRATIONS_DIR } from "../../src/platform/db/migrate.js";
import { decodeId } from "../../src/platform/ids.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, eventually, events, finalOutputs, launch, modelCalls, send } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";

/*
 * Budgets (docs/usage-and-budgets.md) through HTTP with a running worker and a fake provider reporting the
 * token usage each test scripts: every answer uses 1000 input and 200 output tokens, 1200 budget tokens.
 */
const server = useTestServer({}, { worker: true });
const provider = useFakeProvider();

const USAGE = { inputTokens: 1000, outputTokens: 200, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
const CALL_TOKENS = 1200;

const budgetsPath = (project: AgentProject) => `/api/v1/orgs/${project.orgId}/budgets`;

async function createBudget(project: AgentProject, body: object, token = project.token) {
  const reply = await server.api.post(budgetsPath(project), body, { token });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

async function getBudget(project: AgentProject, id: string) {
  const reply = await server.api.get(`${budgetsPath(project)}/${id}`, { token: project.token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
}

async function patchBudget(project: AgentProject, id: string, body: object) {
  const reply = await server.api.patch(`${budgetsPath(project)}/${id}`, body, { token: project.token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
}

async function backlog(project: AgentProject, agentId: string): Promise<any[]> {
  const reply = await server.api.get(`${project.base}/agents/${agentId}/inputs/backlog`, { token: project.token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.data;
}

const texts = (list: any[]) => finalOutputs(list).map((e) => e.content_blocks[0]?.text);
const stops = (list: any[]) => list.filter((e) => e.event_kind === "budget_exceeded");

async function answers(project: AgentProject, agentId: string, count: number) {
  return eventually(() => events(server.api, project, agentId), (list) => finalOutputs(list).length >= count);
}

describe("budgets", () => {
  it("are created, listed, read, changed and deleted, with their fields validated", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const path = budgetsPath(project);
    const auth = { token: project.token };
    const refusals: Array<[object, string]> = [
      [{ name: "x", scope: { kind: "org" }, period: "day", action: "pause" }, "/limit_micro_usd"],
      [{ name: "x", scope: { kind: "project" }, period: "day", action: "pause", limit_tokens: 10 }, "/scope/id"],
      [{ name: "x", scope: { kind: "org", id: project.projectId }, period: "day", action: "pause", limit_tokens: 10 }, "/scope/id"],
      [{ name: "x", scope: { kind: "agent", id: project.projectId }, period: "day", action: "pause", limit_tokens: 10 }, "/scope/id"],
      [{ name: "x", scope: { kind: "org" }, period: "year", action: "pause", limit_tokens: 10 }, "/period"],
      [{ name: "x", scope: { kind: "org" }, period: "day", action: "stop", limit_tokens: 10 }, "/action"],
      [{ name: "x", scope: { kind: "org" }, period: "day", action: "notify", limit_tokens: 10, notify_at_percent: [50, 50] }, "/notify_at_percent"],
      [{ name: "x", scope: { kind: "org" }, period: "day", action: "notify", limit_tokens: 10, notify_at_percent: [0] }, "/notify_at_percent/0"],
      [{ name: "x", scope: { kind: "org" }, period: "day", action: "notify", limit_tokens: 10, notify_at_percent: [101] }, "/notify_at_percent/0"],
      [{ name: "x", scope: { kind: "org" }, period: "day", action: "pause", limit_tokens: 0 }, "/limit_tokens"],
      [{ name: "x", scope: { kind: "org" }, period: "day", action: "pause", limit_tokens: 10, extra: 1 }, ""],
    ];
    for (const [body, issuePath] of refusals) {
      const refused = await server.api.post(path, body, auth);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.code).toBe("validation_failed");
      if (issuePath) expect(refused.body.issues.map((i: any) => i.path), JSON.stringify(body)).toContain(issuePath);
    }

    const org = await createBudget(project, { name: "org month", scope: { kind: "org" }, period: "month", limit_micro_usd: 5_000_000, action: "notify", notify_at_percent: [80, 50] });
    expect(org).toMatchObject({
      id: expect.stringMatching(/^bdg_/),
      org_id: project.orgId,
      scope: { kind: "org" },
      period: "month",
      limit_micro_usd: 5_000_000,
      limit_tokens: null,
      action: "notify",
      notify_at_percent: [50, 80],
      spent_micro_usd: 0,
      spent_tokens: 0,
      state: "ok",
      notifications: [],
    });
    const start = new Date(org.period_start);
    expect(start.getUTCDate()).toBe(1);
    expect(start.getUTCHours()).toBe(0);
    const end = new Date(org.period_end);
    expect(end.getUTCDate()).toBe(1);
    expect(end.getTime()).toBeGreaterThan(Date.now());

    const week = await createBudget(project, { name: "project week", scope: { kind: "project", id: project.projectId }, period: "week", limit_tokens: 100, action: "pause" });
    expect(new Date(week.period_start).getUTCDay()).toBe(1); // Monday
    expect(new Date(week.period_end).getTime() - new Date(week.period_start).getTime()).toBe(7 * 86_400_000);
    const total = await createBudget(project, { name: "total", scope: { kind: "project", id: project.projectId }, period: "total", limit_tokens: 100, action: "pause" });
    expect(total.period_end).toBeNull();

    const page1 = await server.api.get(`${path}?limit=2`, auth);
    expect(page1.status, page1.text).toBe(200);
    expect(page1.body.data.map((b: any) => b.id)).toEqual([total.id, week.id]);
    const page2 = await server.api.get(`${path}?limit=2&cursor=${page1.body.next_cursor}`, auth);
    expect(page2.body.data.map((b: any) => b.id)).toEqual([org.id]);
    expect(page2.body.next_cursor).toBeNull();
    expect((await server.api.get(`${path}?scope_kind=org`, auth)).body.data.map((b: any) => b.id)).toEqual([org.id]);

    const changed = await patchBudget(project, week.id, { name: "renamed", limit_tokens: null, limit_micro_usd: 10, period: "day" });
    expect(changed).toMatchObject({ name: "renamed", limit_tokens: null, limit_micro_usd: 10, period: "day", scope: { kind: "project", id: project.projectId } });
    const noLimit = await server.api.patch(`${path}/${week.id}`, { limit_micro_usd: null }, auth);
    expect(noLimit.status).toBe(400);
    expect(noLimit.body.issues[0].path).toBe("/limit_micro_usd");
    const scopeChange = await server.api.patch(`${path}/${week.id}`, { scope: { kind: "org" } }, auth);
    expect(scopeChange.status).toBe(400);

    expect((await server.api.delete(`${path}/${week.id}`, auth)).status).toBe(204);
    expect((await server.api.get(`${path}/${week.id}`, auth)).status).toBe(404);
    expect((await server.api.delete(`${path}/${week.id}`, auth)).status).toBe(404);
    expect((await server.api.get(`${path}/bdg_nonsense`, auth)).status).toBe(404);

    // Another organization's user sees none of it; a member without project access sees only org-wide budgets, and may not write.
    const stranger = await server.api.userWithOrg();
    expect((await server.api.get(`${path}/${org.id}`, { token: stranger.token })).status).toBe(404);
    const key = await server.api.orgKey(project.session, project.orgId, "member");
    const memberList = await server.api.get(path, { token: key.token });
    expect(memberList.status, memberList.text).toBe(200);
    expect(memberList.body.data.map((b: any) => b.id)).toEqual([org.id]);
    expect((await server.api.get(`${path}/${total.id}`, { token: key.token })).status).toBe(404);
    const denied = await server.api.post(path, { name: "x", scope: { kind: "org" }, period: "day", action: "pause", limit_tokens: 1 }, { token: key.token });
    expect(denied.status).toBe(403);
  });

  it("pause an agent between turns, keep its inputs in the backlog, and resume it when raised", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const config = await createConfig(server.api, project, yamlConfig(project));
    provider.script({ text: "one", usage: USAGE });
    const agentId = await launch(server.api, project, config, "first");
    await answers(project, agentId, 1);
    const budget = await createBudget(project, { name: "cap", scope: { kind: "agent", id: agentId }, period: "month", limit_tokens: CALL_TOKENS, action: "pause" });
    expect(budget).toMatchObject({ spent_tokens: CALL_TOKENS, state: "exceeded" });

    provider.script({ text: "two", usage: USAGE });
    const waiting = await send(server.api, project, agentId, "second");
    const stopped = await eventually(() => events(server.api, project, agentId), (list) => stops(list).length === 1);
    expect(stops(stopped)[0]).toMatchObject({
      budget_id: budget.id,
      spent_tokens: CALL_TOKENS,
      limit_tokens: CALL_TOKENS,
      spent_micro_usd: 0,
      limit_micro_usd: null,
      period_end: budget.period_end,
    });
    expect(modelCalls(provider)).toHaveLength(1);
    expect((await backlog(project, agentId)).map((i) => i.id)).toEqual([waiting]);
    // Another input waits behind it; the timeline says so once.
    const alsoWaiting = await send(server.api, project, agentId, "third");
    expect((await backlog(project, agentId)).map((i) => i.id)).toEqual([waiting, alsoWaiting]);
    provider.script({ text: "three", usage: USAGE });

    await patchBudget(project, budget.id, { limit_tokens: 10 * CALL_TOKENS });
    const resumed = await answers(project, agentId, 3);
    expect(texts(resumed)).toEqual(["one", "two", "three"]);
    expect(stops(resumed)).toHaveLength(1);
    expect(await backlog(project, agentId)).toEqual([]);
    expect((await getBudget(project, budget.id)).spent_tokens).toBe(3 * CALL_TOKENS);
  });

  it("end a running turn with budget_exceeded when its next call would go over", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const config = await createConfig(
      server.api,
      project,
      yamlConfig(project, `tools:\n  lookup:\n    type: custom\n    description: Looks something up.\n    permission:\n      mode: always_allow\n    input_schema: {type: object}\n`),
    );
    provider.script({ toolCalls: [{ name: "lookup", input: {} }], usage: USAGE });
    const agentId = await launch(server.api, project, config, "look it up");
    const calls = async () => (await server.api.get(`${project.base}/agents/${agentId}/tool-calls`, { token: project.token })).body.data as any[];
    const ready = (await eventually(calls, (list) => list.some((c) => c.state === "ready")))[0];
    const budget = await createBudget(project, { name: "cap", scope: { kind: "project", id: project.projectId }, period: "day", limit_tokens: CALL_TOKENS, action: "pause" });
    const result = await server.api.post(
      `${project.base}/agents/${agentId}/tool-calls/${ready.id}/result`,
      { outcome: "succeeded", content_blocks: [{ type: "text", text: "found" }] },
      { token: project.token },
    );
    expect(result.status, result.text).toBe(200);
    const ended = await eventually(() => events(server.api, project, agentId), (list) => stops(list).length === 1);
    const stop = stops(ended)[0];
    expect(stop).toMatchObject({ budget_id: budget.id, turn_id: ready.turn_id, spent_tokens: CALL_TOKENS, limit_tokens: CALL_TOKENS });
    expect(ended.at(-1).event_kind).toBe("budget_exceeded");
    expect(modelCalls(provider)).toHaveLength(1);
    // The turn is over: deleting the budget does not call the model again for it.
    expect((await server.api.delete(`${budgetsPath(project)}/${budget.id}`, { token: project.token })).status).toBe(204);
    provider.script({ text: "later", usage: USAGE });
    await send(server.api, project, agentId, "go on");
    const after = await answers(project, agentId, 1);
    expect(texts(after)).toEqual(["later"]);
    expect(modelCalls(provider)).toHaveLength(2);
  });

  it("isolate two end users of one agent: one actor's inputs wait in order while the other's are answered", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const config = await createConfig(server.api, project, yamlConfig(project));
    const agentId = await launch(server.api, project, config);
    const key = await server.api.orgKey(project.session, project.orgId, "admin");
    const from = async (user: string, text: string) => {
      const sent = await server.api.post(`${project.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "text", text }], actor: { provider_user_id: user } }, { token: key.token });
      expect(sent.status, sent.text).toBe(201);
      return sent.body.agent_input.id as string;
    };
    provider.script({ text: "to alice 1", usage: USAGE });
    await from("alice", "a1");
    const first = await answers(project, agentId, 1);
    const alice = first.find((e) => e.input_kind === "content").actor_id as string;
    const budget = await createBudget(project, { name: "alice", scope: { kind: "actor", id: alice }, period: "day", limit_tokens: CALL_TOKENS, action: "pause" });

    provider.script({ text: "to bob 1", usage: USAGE }, { text: "to bob 2", usage: USAGE });
    const a2 = await from("alice", "a2");
    const a3 = await from("alice", "a3");
    await from("bob", "b1");
    await from("bob", "b2");
    const answered = await answers(project, agentId, 3);
    expect(texts(answered)).toEqual(["to alice 1", "to bob 1", "to bob 2"]);
    await eventually(() => events(server.api, project, agentId), (list) => stops(list).length === 1);
    expect((await backlog(project, agentId)).map((i) => i.id)).toEqual([a2, a3]);
    const stop = stops(await events(server.api, project, agentId))[0];
    expect(stop).toMatchObject({ budget_id: budget.id, spent_tokens: CALL_TOKENS, limit_tokens: CALL_TOKENS });
    // Bob's usage is his own: Alice's budget did not grow.
    expect((await getBudget(project, budget.id)).spent_tokens).toBe(CALL_TOKENS);

    provider.script({ text: "to alice 2", usage: USAGE }, { text: "to alice 3", usage: USAGE });
    expect((await server.api.delete(`${budgetsPath(project)}/${budget.id}`, { token: project.token })).status).toBe(204);
    const all = await answers(project, agentId, 5);
    expect(texts(all)).toEqual(["to alice 1", "to bob 1", "to bob 2", "to alice 2", "to alice 3"]);
  });

  it("roll over: a day budget's agent sleeps until the period's end, then runs by itself", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const config = await createConfig(server.api, project, yamlConfig(project));
    provider.script({ text: "one", usage: USAGE });
    const agentId = await launch(server.api, project, config, "first");
    await answers(project, agentId, 1);
    const budget = await createBudget(project, { name: "daily", scope: { kind: "agent", id: agentId }, period: "day", limit_tokens: CALL_TOKENS, action: "pause" });
    provider.script({ text: "two", usage: USAGE });
    await send(server.api, project, agentId, "second");
    await eventually(() => events(server.api, project, agentId), (list) => stops(list).length === 1);
    const agentUuid = decodeId("agent", agentId)!;
    const wakeup = async () =>
      (await server.db.read.execute(sql`SELECT reason, (extract(epoch from ready_at) * 1000)::float8 AS at FROM agent_wakeups WHERE agent_id = ${agentUuid}`)) as unknown as {
        rows: Array<{ reason: string; at: number }>;
      };
    const waiting = await eventually(wakeup, (w) => w.rows[0]?.reason === "budget_wait");
    expect(new Date(waiting.rows[0]!.at).toISOString()).toBe(budget.period_end);
    expect(modelCalls(provider)).toHaveLength(1);

    // The day ends: yesterday's usage is out of today's period, and the wakeup comes due. The agent's usage
    // moves to yesterday in both rollups (its budget measures the scope rollup's agent row).
    await server.db.write.execute(sql`UPDATE usage_daily SET day = day - 1 WHERE agent_id = ${agentUuid}`);
    await server.db.write.execute(sql`UPDATE usage_scope_daily SET day = day - 1 WHERE scope_kind = 'agent' AND scope_id = ${agentUuid}`);
    await server.db.write.execute(sql`UPDATE agent_wakeups SET ready_at = statement_timestamp() WHERE agent_id = ${agentUuid}`);
    const resumed = await answers(project, agentId, 2);
    expect(texts(resumed)).toEqual(["one", "two"]);
    expect(await getBudget(project, budget.id)).toMatchObject({ spent_tokens: CALL_TOKENS, state: "exceeded" });
  });

  it("notify at each threshold once per period, without pausing", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const config = await createConfig(server.api, project, yamlConfig(project));
    const budget = await createBudget(project, { name: "watch", scope: { kind: "project", id: project.projectId }, period: "month", limit_tokens: 2 * CALL_TOKENS, action: "notify", notify_at_percent: [90, 50] });
    provider.script(...[1, 2, 3, 4].map((n) => ({ text: `answer ${n}`, usage: USAGE })));
    const agentId = await launch(server.api, project, config, "1");
    for (const n of [2, 3, 4]) {
      await answers(project, agentId, n - 1);
      await send(server.api, project, agentId, String(n));
    }
    const list = await answers(project, agentId, 4);
    expect(stops(list)).toEqual([]);
    const read = await getBudget(project, budget.id);
    expect(read).toMatchObject({ spent_tokens: 4 * CALL_TOKENS, state: "exceeded" });
    // 50 % noticed before the second call, 90 % and the limit before the third; nothing again before the fourth.
    expect(read.notifications.map((n: any) => [n.percent, n.spent_tokens])).toEqual([
      [50, CALL_TOKENS],
      [90, 2 * CALL_TOKENS],
      [100, 2 * CALL_TOKENS],
    ]);
  });

  it("measure each scope's own usage in an org with other agents and actors, and keep it through the migration that made the scope rollup", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const config = await createConfig(server.api, project, yamlConfig(project));
    const profile = await server.api.post(`${project.base}/agent-profiles`, { name: "helper", config }, { token: project.token });
    expect(profile.status, profile.text).toBe(201);
    // Agent one, from the config, answers the user once with 150 tokens.
    provider.script({ text: "one", usage: { ...USAGE, inputTokens: 100, outputTokens: 50 } });
    const one = await launch(server.api, project, config, "hello");
    await answers(project, one, 1);
    // Agent two, from the profile, answers an external actor, then the user: 1200 tokens each.
    const key = await server.api.orgKey(project.session, project.orgId, "admin");
    const launched = await server.api.post(`${project.base}/agents`, { profile: profile.body.id }, { token: key.token });
    expect(launched.status, launched.text).toBe(201);
    const two = launched.body.agent.id as string;
    provider.script({ text: "two", usage: USAGE }, { text: "two again", usage: USAGE });
    const sent = await server.api.post(`${project.base}/agents/${two}/inputs`, { content_blocks: [{ type: "text", text: "from outside" }], actor: { provider_user_id: "u-42" } }, { token: key.token });
    expect(sent.status, sent.text).toBe(201);
    await answers(project, two, 1);
    await send(server.api, project, two, "and the user too");
    await answers(project, two, 2);
    const user = (await events(server.api, project, one)).find((e) => e.input_kind === "content").actor_id as string;
    const external = (await events(server.api, project, two)).find((e) => e.input_kind === "content").actor_id as string;

    const expected: Array<[object, number]> = [
      [{ kind: "org" }, 150 + 2 * CALL_TOKENS],
      [{ kind: "project", id: project.projectId }, 150 + 2 * CALL_TOKENS],
      [{ kind: "agent_profile", id: profile.body.id }, 2 * CALL_TOKENS],
      [{ kind: "agent", id: one }, 150],
      [{ kind: "agent", id: two }, 2 * CALL_TOKENS],
      [{ kind: "actor", id: user }, 150 + CALL_TOKENS],
      [{ kind: "actor", id: external }, CALL_TOKENS],
    ];
    const budgets: string[] = [];
    for (const [scope] of expected) {
      budgets.push((await createBudget(project, { name: JSON.stringify(scope), scope, period: "month", limit_tokens: 1_000_000, action: "pause" })).id);
    }
    const spent = async () => Promise.all(budgets.map(async (id) => (await getBudget(project, id)).spent_tokens as number));
    expect(await spent()).toEqual(expected.map(([, tokens]) => tokens));

    // Usage recorded before the scope rollup existed is only in usage_daily: the migration's carry-over
    // statement rebuilds the scope rollup from it alone, and every budget reads what it read before.
    const migration = readFileSync(join(MIGRATIONS_DIR, "0032_usage_scope_daily.sql"), "utf8").split("--> statement-breakpoint");
    const carryOver = migration.find((statement) => statement.includes('INSERT INTO "usage_scope_daily"'))!;
    await server.db.tx(async (tx) => {
      await rawRows(tx, sql`DELETE FROM usage_scope_daily`);
      await rawRows(tx, sql.raw(carryOver));
    });
    expect(await spent()).toEqual(expected.map(([, tokens]) => tokens));

    // Deleting the organization deletes its scope rollup rows, of the seven scopes above: the org is a cascading foreign key.
    const orgUuid = decodeId("org", project.orgId)!;
    const scopeRows = async () =>
      ((await server.db.read.execute(sql`SELECT count(DISTINCT (scope_kind, scope_id))::int AS n FROM usage_scope_daily WHERE org_id = ${orgUuid}`)) as unknown as { rows: Array<{ n: number }> }).rows[0]!.n;
    expect(await scopeRows()).toBe(expected.length);
    expect((await server.api.delete(`/api/v1/orgs/${project.orgId}`, { token: project.token })).status).toBe(204);
    expect(await scopeRows()).toBe(0);
  });
});
