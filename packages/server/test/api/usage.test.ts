import { describe, expect, it } from "vitest";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, eventually, events, finalOutputs, launch, send } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";
import { SseStream } from "../support/sse.js";
import { createProvider, createSecret, startStaticProvider } from "./models-fixtures.js";

/*
 * Prices, usage and the stream snapshot (docs/usage-and-budgets.md, docs/timeline.md), through HTTP with a
 * running worker and a fake provider that reports the token counts each test scripts.
 */
const server = useTestServer({}, { worker: true });
const provider = useFakeProvider();

/** svc-normalized counts: the whole prompt is 1000 tokens, 300 of them read from the cache and 100 written to it. */
const USAGE = { inputTokens: 1000, outputTokens: 200, cacheReadTokens: 300, cacheWriteTokens: 100, reasoningTokens: 0 };
const PRICES_A = { input_per_mtok: "3", output_per_mtok: "15", cache_read_per_mtok: "0.3", cache_write_per_mtok: "3.75" };
/** 600 × 3 + 300 × 0.3 + 100 × 3.75 + 200 × 15 micro-dollars. */
const COST_A = 5265;
/** No cache prices: cached input at the input price. 1000 × 2.5 + 200 × 10.0025 = 4500.5, rounded half up. */
const PRICES_B = { input_per_mtok: "2.5", output_per_mtok: "10.0025" };
const COST_B = 4501;

async function providerPath(project: AgentProject): Promise<string> {
  const providers = await server.api.get(`/api/v1/orgs/${project.orgId}/model-provider-configs`, { token: project.token });
  expect(providers.status, providers.text).toBe(200);
  return `/api/v1/orgs/${project.orgId}/model-provider-configs/${providers.body.data[0].id}`;
}

async function modelPath(project: AgentProject): Promise<string> {
  return `${await providerPath(project)}/models/${project.configuredModelId}`;
}

async function price(project: AgentProject, pricing: object | null) {
  const reply = await server.api.put(await modelPath(project), { pricing }, { token: project.token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
}

async function usage(project: AgentProject, query: string, token = project.token) {
  const reply = await server.api.get(`/api/v1/orgs/${project.orgId}/usage${query}`, { token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
}

/** Waits for the agent's `count`-th final answer and returns its model_output event. */
async function answer(project: AgentProject, agentId: string, count: number) {
  const list = await eventually(() => events(server.api, project, agentId), (l) => finalOutputs(l).length === count);
  return finalOutputs(list)[count - 1];
}

describe("prices", () => {
  it("are validated decimal strings, shown on the model in one spelling, and a change adds a revision", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const path = await modelPath(project);
    const auth = { token: project.token };
    const before = (await server.api.get(`${await providerPath(project)}/models`, auth)).body.data[0];
    expect(before.pricing).toBeNull();

    for (const bad of [{ input_per_mtok: "-1", output_per_mtok: "1" }, { input_per_mtok: "1.1234567", output_per_mtok: "1" }, { input_per_mtok: "01", output_per_mtok: "1" }, { input_per_mtok: "1" }, { input_per_mtok: 1, output_per_mtok: "1" }]) {
      const refused = await server.api.put(path, { pricing: bad }, auth);
      expect(refused.status, JSON.stringify(bad)).toBe(400);
      expect(refused.body.code).toBe("validation_failed");
    }

    const priced = await price(project, { input_per_mtok: "3.50", output_per_mtok: "15.000000", cache_read_per_mtok: "0.3" });
    expect(priced.pricing).toEqual({ input_per_mtok: "3.5", output_per_mtok: "15", cache_read_per_mtok: "0.3" });
    expect(priced.current_revision_id).not.toBe(before.current_revision_id);
    // The same prices spelled differently are no change: no new revision.
    const same = await price(project, { input_per_mtok: "3.5", output_per_mtok: "15", cache_read_per_mtok: "0.30" });
    expect(same.current_revision_id).toBe(priced.current_revision_id);
    const cleared = await price(project, null);
    expect(cleared.pricing).toBeNull();
    expect(cleared.current_revision_id).not.toBe(priced.current_revision_id);

    const created = await server.api.post(
      `${await providerPath(project)}/models`,
      { name: "priced", provider_model_slug: "fake-2", context_window_tokens: 10_000, pricing: { input_per_mtok: "0.000001", output_per_mtok: "0" } },
      auth,
    );
    expect(created.status, created.text).toBe(201);
    expect(created.body.pricing).toEqual({ input_per_mtok: "0.000001", output_per_mtok: "0" });
  });

  it("cost each call from the revision it used: agents keep their revision's prices across a change", async () => {
    const project = await agentProject(server.api, provider.baseUrl, { format: "anthropic-messages" });
    await price(project, PRICES_A);
    const configA = await createConfig(server.api, project, yamlConfig(project));
    provider.script({ text: "first", usage: USAGE });
    const agentA = await launch(server.api, project, configA, "hello");
    const first = await answer(project, agentA, 1);
    expect(first.usage).toEqual({
      input_tokens: 1000,
      output_tokens: 200,
      cache_read_input_tokens: 300,
      cache_write_input_tokens: 100,
      reasoning_output_tokens: 0,
      cost_micro_usd: COST_A,
    });

    // A new revision with new prices: a config compiled now pins it; the first agent keeps its own.
    await price(project, PRICES_B);
    const configB = await createConfig(server.api, project, yamlConfig(project));
    expect(configB).not.toBe(configA);
    provider.script({ text: "second", usage: USAGE });
    const agentB = await launch(server.api, project, configB, "hello");
    expect((await answer(project, agentB, 1)).usage.cost_micro_usd).toBe(COST_B);
    provider.script({ text: "third", usage: USAGE });
    await send(server.api, project, agentA, "again");
    expect((await answer(project, agentA, 2)).usage.cost_micro_usd).toBe(COST_A);

    // A model without pricing costs 0; the counts are still recorded.
    await price(project, null);
    provider.script({ text: "free", usage: USAGE });
    const agentC = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)), "hello");
    const free = await answer(project, agentC, 1);
    expect(free.usage).toMatchObject({ input_tokens: 1000, cost_micro_usd: 0 });

    const totals = (await usage(project, "")).totals;
    expect(totals).toEqual({
      model_calls: 4,
      input_tokens: 4000,
      output_tokens: 800,
      cache_read_input_tokens: 1200,
      cache_write_input_tokens: 400,
      cost_micro_usd: 2 * COST_A + COST_B,
    });
  });
});

describe("the model catalog", () => {
  it("suggests prices per million tokens where the provider's list states them per token", async () => {
    const { token, org } = await server.api.userWithOrg();
    const auth = { token };
    const secretId = await createSecret(server.api, auth, org.id);
    const listed = await startStaticProvider(200, {
      data: [
        { id: "a/priced", created: 3, pricing: { prompt: "0.000003", completion: "0.0000015", input_cache_read: "0.0000003", input_cache_write: "-1" } },
        { id: "a/varies", created: 2, pricing: { prompt: "-1", completion: "0.00001" } },
        { id: "a/free", created: 1, pricing: { prompt: "0", completion: "0" } },
      ],
    });
    try {
      const reply = await createProvider(server.api, auth, org.id, { name: "r", api_format: "openai-chat-completions", base_url: listed.baseUrl, credential_secret_id: secretId });
      expect(reply.status, reply.text).toBe(201);
      expect(reply.body.model_catalog.models).toEqual([
        { slug: "a/priced", pricing: { input_per_mtok: "3", output_per_mtok: "1.5", cache_read_per_mtok: "0.3" } },
        { slug: "a/varies" },
        { slug: "a/free", pricing: { input_per_mtok: "0", output_per_mtok: "0" } },
      ]);
    } finally {
      await listed.close();
    }
  });
});

describe("usage", () => {
  it("groups every way, filters, pages, and belongs to the actor whose input opened the turn", async () => {
    const project = await agentProject(server.api, provider.baseUrl, { format: "anthropic-messages" });
    await price(project, PRICES_A);
    const config = await createConfig(server.api, project, yamlConfig(project));
    const profile = await server.api.post(`${project.base}/agent-profiles`, { name: "helper", config }, { token: project.token });
    expect(profile.status, profile.text).toBe(201);
    // Agent one: launched by the user from the config (turn opened by the user's actor).
    provider.script({ text: "one", usage: USAGE });
    const one = await launch(server.api, project, config, "hello");
    await answer(project, one, 1);
    // Agent two: from the profile; its turn is opened by an org key naming an external actor.
    const key = await server.api.orgKey(project.session, project.orgId, "admin");
    const launched = await server.api.post(`${project.base}/agents`, { profile: profile.body.id }, { token: key.token });
    expect(launched.status, launched.text).toBe(201);
    const two = launched.body.agent.id as string;
    provider.script({ text: "two", usage: USAGE }, { text: "two again", usage: USAGE });
    const sent = await server.api.post(
      `${project.base}/agents/${two}/inputs`,
      { content_blocks: [{ type: "text", text: "from outside" }], actor: { provider_user_id: "u-42" } },
      { token: key.token },
    );
    expect(sent.status, sent.text).toBe(201);
    await answer(project, two, 1);
    await send(server.api, project, two, "and the user too");
    await answer(project, two, 2);

    const list = await events(server.api, project, one);
    const userActor = list.find((e) => e.event_kind === "agent_input" && e.input_kind === "content").actor_id as string;
    const external = (await events(server.api, project, two)).find((e) => e.input_kind === "content").actor_id as string;
    expect(userActor).toMatch(/^actr_/);
    expect(external).not.toBe(userActor);
    const sums = (calls: number) => ({
      model_calls: calls,
      input_tokens: 1000 * calls,
      output_tokens: 200 * calls,
      cache_read_input_tokens: 300 * calls,
      cache_write_input_tokens: 100 * calls,
      cost_micro_usd: COST_A * calls,
    });

    const all = await usage(project, "");
    expect(all.data).toEqual([sums(3)]);
    expect(all.totals).toEqual(sums(3));
    const byAgent = await usage(project, "?group_by=agent");
    // Ids sort as created (they are UUIDv7): agent one first.
    expect(byAgent.data).toEqual([
      { agent_id: one, ...sums(1) },
      { agent_id: two, ...sums(2) },
    ]);
    expect((await usage(project, "?group_by=agent_profile")).data).toEqual([
      { agent_profile_id: null, ...sums(1) },
      { agent_profile_id: profile.body.id, ...sums(2) },
    ]);
    // Each turn belongs to whoever opened it: agent two's second turn is the user's.
    const byActor = await usage(project, "?group_by=actor");
    expect(byActor.data.map((g: any) => [g.actor_id, g.model_calls]).sort()).toEqual([[external, 1], [userActor, 2]].sort());
    const today = new Date().toISOString().slice(0, 10);
    const grouped = await usage(project, "?group_by=day,model,project");
    expect(grouped.data).toEqual([{ project_id: project.projectId, model_id: project.configuredModelId, day: grouped.data[0].day, ...sums(3) }]);
    expect([today, new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)]).toContain(grouped.data[0].day);

    // Filters narrow the rows; totals follow them.
    expect((await usage(project, `?agent_id=${two}`)).totals).toEqual(sums(2));
    expect((await usage(project, `?actor_id=${external}`)).totals).toEqual(sums(1));
    expect((await usage(project, `?project_id=${project.projectId}&model_id=${project.configuredModelId}`)).totals).toEqual(sums(3));

    // Paging by the group keys, with the totals on every page.
    const page1 = await usage(project, "?group_by=agent,actor&limit=2");
    expect(page1.data).toHaveLength(2);
    expect(page1.next_cursor).toEqual(expect.any(String));
    const page2 = await usage(project, `?group_by=agent,actor&limit=2&cursor=${page1.next_cursor}`);
    expect(page2.data).toHaveLength(1);
    expect(page2.next_cursor).toBeNull();
    expect(page2.totals).toEqual(sums(3));
    const wrongCursor = await server.api.get(`/api/v1/orgs/${project.orgId}/usage?group_by=agent&cursor=${page1.next_cursor}`, { token: project.token });
    expect(wrongCursor.status).toBe(400);

    // A range without today has nothing; the range is whole UTC days.
    const past = await usage(project, "?from=2020-01-01T00:00:00Z&to=2020-02-01T00:00:00Z");
    expect(past).toMatchObject({ from: "2020-01-01T00:00:00.000Z", to: "2020-02-01T00:00:00.000Z", data: [], totals: sums(0) });
    const partial = await usage(project, `?from=${today}T23:59:59Z&to=${today}T23:59:59.500Z`);
    expect(partial.from).toBe(`${today}T00:00:00.000Z`);
  });

  it("counts an org key's input naming no actor under the key, beside the actors' rows", async () => {
    const project = await agentProject(server.api, provider.baseUrl, { format: "anthropic-messages" });
    await price(project, PRICES_A);
    const config = await createConfig(server.api, project, yamlConfig(project));
    const key = await server.api.orgKey(project.session, project.orgId, "admin");
    provider.script({ text: "for the key", usage: USAGE }, { text: "for the user", usage: USAGE }, { text: "for the key again", usage: USAGE });
    // Launched by the key with its opening message, and sent to again by the user, then by the key.
    const launched = await server.api.post(`${project.base}/agents`, { config, message: "from a script" }, { token: key.token });
    expect(launched.status, launched.text).toBe(201);
    const agentId = launched.body.agent.id as string;
    await answer(project, agentId, 1);
    await send(server.api, project, agentId, "from the user");
    await answer(project, agentId, 2);
    const sent = await server.api.post(`${project.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "text", text: "again" }] }, { token: key.token });
    expect(sent.status, sent.text).toBe(201);
    await answer(project, agentId, 3);
    const userActor = (await events(server.api, project, agentId)).filter((e) => e.input_kind === "content").map((e) => e.actor_id ?? null);
    expect(userActor[0]).toBeNull();
    expect(userActor[1]).toMatch(/^actr_/);

    const byActor = await usage(project, "?group_by=actor");
    // The key's row is keyed by api_key_id with actor_id null; it sorts after the actors'.
    expect(byActor.data.map((g: any) => [g.actor_id, g.api_key_id, g.model_calls])).toEqual([
      [userActor[1], null, 1],
      [null, key.key.id, 2],
    ]);
    expect(byActor.totals.cost_micro_usd).toBe(3 * COST_A);
    // Grouped otherwise, the key does not show.
    expect((await usage(project, "?group_by=agent")).data[0]).not.toHaveProperty("api_key_id");
  });

  it("refuses bad ranges and keys, and shows others only the projects they can read", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    await price(project, PRICES_A);
    provider.script({ text: "one", usage: USAGE });
    await answer(project, await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)), "hi"), 1);
    const path = `/api/v1/orgs/${project.orgId}/usage`;
    const auth = { token: project.token };
    for (const query of [
      "?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z",
      "?from=2024-01-01T00:00:00Z&to=2025-01-02T00:00:00Z",
      "?group_by=team",
      "?from=yesterday",
      "?agent_id=prj_aaaaaaaaaaaaaaaaaaaaaaaaaa",
    ]) {
      const refused = await server.api.get(`${path}${query}`, auth);
      expect(refused.status, query).toBe(400);
    }

    const member = await server.api.orgMember(auth, project.orgId, "member");
    expect((await usage(project, "", member.token)).totals.model_calls).toBe(0);
    const role = await server.api.put(`/api/v1/orgs/${project.orgId}/members/${member.userId}/projects/${project.projectId}`, { role: "viewer" }, auth);
    expect(role.status, role.text).toBe(200);
    await eventually(async () => (await usage(project, "", member.token)).totals.model_calls, (calls) => calls === 1);
    const stranger = await server.api.userWithOrg();
    expect((await server.api.get(path, { token: stranger.token })).status).toBe(404);
  });
});

describe("the stream's snapshot", () => {
  it("comes first on a resumed connection with the agent's present, and the frames after it resume as before", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const tools = "tools:\n  lookup:\n    type: custom\n    description: Looks up\n    permission:\n      mode: always_allow\n    input_schema:\n      type: object\n";
    provider.script({ text: "done" }, { toolCalls: [{ name: "lookup", input: { q: "x" } }] });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project, tools)), "hello");
    await answer(project, agentId, 1);
    await send(server.api, project, agentId, "look it up");
    const calls = await eventually(
      async () => (await server.api.get(`${project.base}/agents/${agentId}/tool-calls`, { token: project.token })).body.data,
      (list: any[]) => list.some((c) => c.state === "ready"),
    );
    const list = await events(server.api, project, agentId);
    const last = list.at(-1).sequence as number;
    const url = `${server.url}${project.base}/agents/${agentId}/events/stream`;

    const resumed = await SseStream.open(`${url}?snapshot=true`, { token: project.token, headers: { "last-event-id": String(last - 2) } });
    try {
      const [snapshot, ...rest] = await resumed.frames(3);
      expect(snapshot!.event).toBe("snapshot");
      expect(snapshot!.id).toBeUndefined();
      expect(snapshot!.json).toEqual({ status: "waiting", interactions: [], pending_tool_calls: calls, backlog_count: 0, last_sequence: last });
      expect(rest.map((f) => Number(f.id))).toEqual([last - 1, last]);
      expect(rest.map((f) => f.json)).toEqual(list.slice(-2));
    } finally {
      resumed.close();
    }

    // Without the parameter nothing changes: the first frame is the first event after the cursor.
    const plain = await SseStream.open(url, { token: project.token, headers: { "last-event-id": String(last - 1) } });
    try {
      const [first] = await plain.frames(1);
      expect(first!.id).toBe(String(last));
    } finally {
      plain.close();
    }

    // Once the result is in and the model answered, a fresh connection's snapshot shows an idle agent.
    provider.script({ text: "found it" });
    const submitted = await server.api.post(
      `${project.base}/agents/${agentId}/tool-calls/${calls[0].id}/result`,
      { outcome: "succeeded", content_blocks: [{ type: "text", text: "x is 1" }] },
      { token: project.token },
    );
    expect(submitted.status, submitted.text).toBe(200);
    await answer(project, agentId, 2);
    const fresh = await SseStream.open(`${url}?snapshot=true`, { token: project.token });
    try {
      const [snapshot, firstEvent] = await fresh.frames(2);
      expect(snapshot!.json).toMatchObject({ status: "idle", interactions: [], pending_tool_calls: [], backlog_count: 0 });
      expect(firstEvent!.id).toBe("1");
    } finally {
      fresh.close();
    }
  });
});
