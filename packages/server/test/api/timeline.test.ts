import { beforeAll, describe, expect, it } from "vitest";
import { decodeId, encodeId, newUuid } from "../../src/platform/ids.js";
import { useTestServer } from "../support/server.js";
import { collectPages } from "../support/paging.js";
import { createTestAgent, text, TimelineWriter, type TestAgent } from "./timeline-fixtures.js";

const server = useTestServer();

/*
 * Agent A's timeline (612 events, 30 turns):
 *   turn 1: 1 content input (attributed, keyed) · 2 tool-use output · 3 tool result · 4 final output
 *   turn 2: 5 content input · 6 cancel control input · 7 error output · 8 context checkpoint
 *   turn 3: 9 content input · 10..558 outputs (549)
 *   turns 4..30: an input and an output each (559..612)
 */
const TOTAL = 612;
const TURNS = 30;

let token: string;
let org: { id: string };
let project: { id: string };
let agent: TestAgent;
let other: TestAgent;
const ids: Record<string, string> = {};

beforeAll(async () => {
  const owner = await server.api.userWithOrg();
  ({ token, org, project } = owner);
  agent = await createTestAgent(server, org, project);
  other = await createTestAgent(server, org, project);
  const write = new TimelineWriter(server, agent);

  const actorId = await write.actor();
  const opening = await write.input({ blocks: [text("Compare the drafts")], actorId, key: "client-key-1" });
  const toolUse = await write.output(opening.turnId, {
    blocks: [{ type: "reasoning", text: "I should read both." }, text("Reading them.")],
    toolCalls: [{ name: "read_drafts", input: { which: ["a", "b"] }, type: "custom" }],
  });
  const result = await write.toolResult(toolUse.toolCallIds[0]!, "succeeded", [{ type: "structured_data", value: { changed: 3 } }]);
  const final = await write.output(opening.turnId, { blocks: [text("Three obligations changed.")] });
  const second = await write.input({ blocks: [text("And the dates?")] });
  const cancel = await write.input({ turnId: second.turnId, kind: "control", controlType: "cancel_current", semantic: false });
  const failed = await write.output(second.turnId, { stopReason: "error", blocks: [{ type: "error", text: "The provider refused the request." }] });
  const checkpoint = await write.checkpoint(second.turnId, 6, "The user compared two drafts.");
  const big = await write.input({ blocks: [text("Write a lot")] });
  await write.outputs(big.turnId, 549);
  for (let turn = 4; turn <= TURNS; turn++) {
    const input = await write.input({ blocks: [text(`message ${turn}`)] });
    await write.output(input.turnId, { blocks: [text(`answer ${turn}`)] });
  }
  Object.assign(ids, {
    actor: actorId,
    turn1: opening.turnId,
    turn2: second.turnId,
    turn3: big.turnId,
    input1: opening.inputId,
    input5: second.inputId,
    cancel: cancel.inputId,
    event1: opening.eventId,
    event2: toolUse.eventId,
    event3: result.eventId,
    event4: final.eventId,
    event6: cancel.eventId,
    event7: failed.eventId,
    event8: checkpoint.eventId,
    context2: toolUse.contextId,
    context4: final.contextId,
    context7: failed.contextId,
    toolCall: toolUse.toolCallIds[0]!,
    checkpoint: checkpoint.checkpointId,
  });
}, 120_000);

const auth = () => ({ token });
const get = (path: string) => server.api.get(path, auth());

function head(sequence: number, turnId: string, turnSequence: number) {
  return {
    id: encodeId("event", ids[`event${sequence}`]!),
    org_id: org.id,
    project_id: project.id,
    agent_id: agent.publicId,
    turn_id: encodeId("turn", turnId),
    turn_sequence: turnSequence,
  };
}

const sequences = (events: Array<{ sequence: number }>) => events.map((e) => e.sequence);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe("GET /events", () => {
  it("shows each event kind with its payload", async () => {
    const reply = await get(`${agent.path}/events?limit=8`);
    expect(reply.status, reply.text).toBe(200);
    const [e1, e2, e3, e4, e5, e6, e7, e8] = reply.body.data;
    const createdAt = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(e1).toEqual({
      ...head(1, ids.turn1!, 1),
      is_opening_event: true,
      sequence: 1,
      event_kind: "agent_input",
      agent_input_id: encodeId("agentInput", ids.input1!),
      input_kind: "content",
      actor_id: encodeId("actor", ids.actor!),
      input_idempotency_key: "client-key-1",
      content_blocks: [{ type: "text", text: "Compare the drafts" }],
      created_at: createdAt,
    });
    expect(e2).toEqual({
      ...head(2, ids.turn1!, 1),
      is_opening_event: false,
      sequence: 2,
      event_kind: "model_output",
      model_call_context_id: encodeId("modelCallContext", ids.context2!),
      stop_reason: "tool_use",
      content_blocks: [
        { type: "reasoning", text: "I should read both." },
        { type: "text", text: "Reading them." },
        { type: "tool_call", tool_call_id: encodeId("toolCall", ids.toolCall!), tool_type: "custom", name: "read_drafts", input: { which: ["a", "b"] } },
      ],
      usage: { input_tokens: 120, output_tokens: 30, cache_read_input_tokens: 20, cache_write_input_tokens: 5, reasoning_output_tokens: 10, cost_micro_usd: 777 },
      created_at: createdAt,
    });
    expect(e3).toEqual({
      ...head(3, ids.turn1!, 1),
      is_opening_event: false,
      sequence: 3,
      event_kind: "tool_result",
      tool_call_id: encodeId("toolCall", ids.toolCall!),
      outcome: "succeeded",
      content_blocks: [{ type: "structured_data", value: { changed: 3 } }],
      created_at: createdAt,
    });
    expect(e4).toMatchObject({ sequence: 4, event_kind: "model_output", stop_reason: "end_turn", turn_sequence: 1 });
    expect(e5).toMatchObject({ sequence: 5, event_kind: "agent_input", is_opening_event: true, turn_sequence: 2 });
    expect(e5.actor_id).toBeUndefined();
    expect(e6).toEqual({
      ...head(6, ids.turn2!, 2),
      is_opening_event: false,
      sequence: 6,
      event_kind: "agent_input",
      agent_input_id: encodeId("agentInput", ids.cancel!),
      input_kind: "control",
      input_idempotency_key: `key-${ids.cancel}`,
      control_type: "cancel_current",
      content_blocks: [],
      created_at: createdAt,
    });
    expect(e7).toMatchObject({
      ...head(7, ids.turn2!, 2),
      event_kind: "model_output",
      model_call_context_id: encodeId("modelCallContext", ids.context7!),
      stop_reason: "error",
      content_blocks: [{ type: "error", text: "The provider refused the request." }],
    });
    expect(e8).toEqual({
      ...head(8, ids.turn2!, 2),
      is_opening_event: false,
      sequence: 8,
      event_kind: "context_checkpoint",
      context_checkpoint_id: encodeId("contextCheckpoint", ids.checkpoint!),
      summarized_through_event_sequence: 6,
      summary: "The user compared two drafts.",
      created_at: createdAt,
    });
  });

  it("pages forward: 100 by default, has_more until the end, next_after_sequence as the cursor", async () => {
    const first = await get(`${agent.path}/events`);
    expect(first.status).toBe(200);
    expect(sequences(first.body.data)).toEqual(range(1, 100));
    expect(first.body).toMatchObject({ next_after_sequence: 100, has_more: true });
    expect(first.body).not.toHaveProperty("next_before_sequence");
    const explicit = await get(`${agent.path}/events?after_sequence=0&limit=100`);
    expect(explicit.body).toEqual(first.body);

    const big = await get(`${agent.path}/events?after_sequence=100&limit=500`);
    expect(sequences(big.body.data)).toEqual(range(101, 600));
    expect(big.body).toMatchObject({ next_after_sequence: 600, has_more: true });
    const rest = await get(`${agent.path}/events?after_sequence=600&limit=500`);
    expect(sequences(rest.body.data)).toEqual(range(601, TOTAL));
    expect(rest.body).toMatchObject({ next_after_sequence: TOTAL, has_more: false });
    // Exactly a full page left: has_more is false, not a promise of an empty page.
    const exact = await get(`${agent.path}/events?after_sequence=${TOTAL - 12}&limit=12`);
    expect(exact.body).toMatchObject({ next_after_sequence: TOTAL, has_more: false });
    const past = await get(`${agent.path}/events?after_sequence=${TOTAL}`);
    expect(past.body).toEqual({ data: [], next_after_sequence: TOTAL, has_more: false });
    const beyond = await get(`${agent.path}/events?after_sequence=10000`);
    expect(beyond.body).toEqual({ data: [], next_after_sequence: 10000, has_more: false });
  });

  it("pages backward from the newest, oldest first within each page", async () => {
    const newest = await get(`${agent.path}/events?before_sequence=0&limit=10`);
    expect(newest.status).toBe(200);
    expect(sequences(newest.body.data)).toEqual(range(TOTAL - 9, TOTAL));
    expect(newest.body).toMatchObject({ next_before_sequence: TOTAL - 9, next_after_sequence: TOTAL, has_more: true });

    const oldest = await get(`${agent.path}/events?before_sequence=5&limit=10`);
    expect(sequences(oldest.body.data)).toEqual([1, 2, 3, 4]);
    expect(oldest.body).toMatchObject({ next_before_sequence: null, next_after_sequence: 4, has_more: false });
    const exact = await get(`${agent.path}/events?before_sequence=5&limit=4`);
    expect(exact.body).toMatchObject({ next_before_sequence: null, has_more: false });
    const none = await get(`${agent.path}/events?before_sequence=1`);
    expect(none.body).toEqual({ data: [], next_after_sequence: 0, next_before_sequence: null, has_more: false });
    const defaults = await get(`${agent.path}/events?before_sequence=0`);
    expect(sequences(defaults.body.data)).toEqual(range(TOTAL - 99, TOTAL));

    // Walking back to the start returns every event once.
    const seen: number[] = [];
    let before = 0;
    for (let pages = 0; pages < 10; pages++) {
      const page = await get(`${agent.path}/events?before_sequence=${before}&limit=200`);
      seen.unshift(...sequences(page.body.data));
      if (page.body.next_before_sequence === null) break;
      before = page.body.next_before_sequence;
    }
    expect(seen).toEqual(range(1, TOTAL));
  });

  it("lets before_sequence win over after_sequence", async () => {
    const reply = await get(`${agent.path}/events?after_sequence=5&before_sequence=10`);
    expect(sequences(reply.body.data)).toEqual(range(1, 9));
    expect(reply.body.next_before_sequence).toBeNull();
  });

  it("answers an agent without events with an empty page", async () => {
    expect((await get(`${other.path}/events`)).body).toEqual({ data: [], next_after_sequence: 0, has_more: false });
    expect((await get(`${other.path}/events?before_sequence=0`)).body).toEqual({ data: [], next_after_sequence: 0, next_before_sequence: null, has_more: false });
  });

  it("rejects bad paging parameters", async () => {
    for (const query of ["limit=501", "limit=0", "limit=abc", "after_sequence=-1", "before_sequence=-3", "after_sequence=1.5", "cursor=x"]) {
      const reply = await get(`${agent.path}/events?${query}`);
      expect(reply.status, query).toBe(400);
      expect(reply.body.code, query).toBe("invalid_request");
    }
    expect((await get(`${agent.path}/events?limit=500`)).status).toBe(200);
  });
});

describe("GET /turns", () => {
  it("lists turns newest first, 25 by default, with null once turn 1 was returned", async () => {
    const first = await get(`${agent.path}/turns`);
    expect(first.status).toBe(200);
    expect(first.body.data.map((t: { turn_sequence: number }) => t.turn_sequence)).toEqual(range(6, TURNS).reverse());
    expect(first.body.next_before_turn_sequence).toBe(6);
    const second = await get(`${agent.path}/turns?before_turn_sequence=6`);
    expect(second.body.data.map((t: { turn_sequence: number }) => t.turn_sequence)).toEqual([5, 4, 3, 2, 1]);
    expect(second.body.next_before_turn_sequence).toBeNull();
    const exact = await get(`${agent.path}/turns?before_turn_sequence=3&limit=2`);
    expect(exact.body.data.map((t: { turn_sequence: number }) => t.turn_sequence)).toEqual([2, 1]);
    expect(exact.body.next_before_turn_sequence).toBeNull();
    const zero = await get(`${agent.path}/turns?before_turn_sequence=0&limit=2`);
    expect(zero.body.data.map((t: { turn_sequence: number }) => t.turn_sequence)).toEqual([30, 29]);
    expect(zero.body.next_before_turn_sequence).toBe(29);
    expect((await get(`${other.path}/turns`)).body).toEqual({ data: [], next_before_turn_sequence: null });
  });

  it("embeds each turn's opening events and its latest and latest semantic events", async () => {
    const reply = await get(`${agent.path}/turns?before_turn_sequence=3`);
    const [turn2, turn1] = reply.body.data;
    const events = (await get(`${agent.path}/events?limit=8`)).body.data;
    expect(turn1).toEqual({
      id: encodeId("turn", ids.turn1!),
      agent_id: agent.publicId,
      turn_sequence: 1,
      event_count: 4,
      opening_events: [events[0]],
      latest_event: events[3],
      latest_semantic_event: events[3],
      started_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(Date.parse(turn1.updated_at)).toBeGreaterThanOrEqual(Date.parse(turn1.started_at));
    // The checkpoint is the latest event; the error output is the latest one worth showing.
    expect(turn2).toMatchObject({ turn_sequence: 2, event_count: 4, opening_events: [events[4]], latest_event: events[7], latest_semantic_event: events[6] });
  });

  it("rejects bad parameters", async () => {
    for (const query of ["limit=101", "limit=0", "before_turn_sequence=-1"]) {
      expect((await get(`${agent.path}/turns?${query}`)).status, query).toBe(400);
    }
    expect((await get(`${agent.path}/turns?limit=100`)).body.data).toHaveLength(TURNS);
  });
});

describe("GET /turns/{turnID}/events", () => {
  it("pages one turn backward, oldest first within a page", async () => {
    const turn3 = encodeId("turn", ids.turn3!);
    const newest = await get(`${agent.path}/turns/${turn3}/events`);
    expect(newest.status).toBe(200);
    expect(sequences(newest.body.data)).toEqual(range(459, 558));
    expect(newest.body.next_before_sequence).toBe(459);
    const older = await get(`${agent.path}/turns/${turn3}/events?before_sequence=459&limit=500`);
    expect(sequences(older.body.data)).toEqual(range(9, 458));
    expect(older.body.next_before_sequence).toBeNull();
    expect(older.body.data.every((e: { turn_id: string }) => e.turn_id === turn3)).toBe(true);

    const turn1 = await get(`${agent.path}/turns/${encodeId("turn", ids.turn1!)}/events?before_sequence=0`);
    expect(turn1.body).toEqual({ data: (await get(`${agent.path}/events?limit=4`)).body.data, next_before_sequence: null });
    expect((await get(`${agent.path}/turns/${turn3}/events?limit=501`)).status).toBe(400);
  });

  it("answers 404 for a turn that is not the agent's", async () => {
    const turn1 = encodeId("turn", ids.turn1!);
    expect((await get(`${other.path}/turns/${turn1}/events`)).status).toBe(404);
    expect((await get(`${agent.path}/turns/${encodeId("turn", newUuid())}/events`)).status).toBe(404);
    expect((await get(`${agent.path}/turns/trn_nope/events`)).status).toBe(404);
    expect((await get(`${agent.path}/turns/${encodeId("event", ids.turn1!)}/events`)).status).toBe(404);
  });
});

describe("GET /tool-calls", () => {
  let agentB: TestAgent;
  const calls: Record<string, string> = {};

  beforeAll(async () => {
    agentB = await createTestAgent(server, org, project);
    const write = new TimelineWriter(server, agentB);
    const input = await write.input({ blocks: [text("go")] });
    const first = await write.output(input.turnId, {
      toolCalls: [
        { name: "lookup", type: "custom", state: "ready", input: { q: "a" } },
        { name: "web_search", type: "built_in", state: "running" },
        { name: "remote", type: "mcp", state: "waiting" },
      ],
    });
    const second = await write.output(input.turnId, {
      toolCalls: [
        { name: "lookup", type: "custom", state: "ready", input: { q: "b" } },
        { name: "approve_me", type: "custom", state: "awaiting_permission" },
      ],
    });
    await write.toolResult(first.toolCallIds[1]!, "failed", [text("no network")]);
    Object.assign(calls, {
      readyA: first.toolCallIds[0],
      search: first.toolCallIds[1],
      remote: first.toolCallIds[2],
      readyB: second.toolCallIds[0],
      permission: second.toolCallIds[1],
      turn: input.turnId,
    });
  });

  it("lists every call with its current state, by created_at then id", async () => {
    const reply = await get(`${agentB.path}/tool-calls`);
    expect(reply.status).toBe(200);
    expect(reply.body.next_cursor).toBeNull();
    const data = reply.body.data as Array<{ id: string; created_at: string }>;
    expect(data).toHaveLength(5);
    const key = (c: { id: string; created_at: string }) => `${c.created_at} ${decodeId("toolCall", c.id)}`;
    expect(data.map(key)).toEqual(data.map(key).sort());
    const search = data.find((c) => c.id === encodeId("toolCall", calls.search!));
    expect(search).toEqual({
      id: encodeId("toolCall", calls.search!),
      agent_id: agentB.publicId,
      turn_id: encodeId("turn", calls.turn!),
      provider_call_id: "call_1",
      name: "web_search",
      input: {},
      type: "built_in",
      state: "completed",
      outcome: "failed",
      completed_at: expect.any(String),
      created_at: expect.any(String),
    });
    const ready = data.find((c) => c.id === encodeId("toolCall", calls.readyA!));
    expect(ready).toEqual({
      id: encodeId("toolCall", calls.readyA!),
      agent_id: agentB.publicId,
      turn_id: encodeId("turn", calls.turn!),
      provider_call_id: "call_0",
      name: "lookup",
      input: { q: "a" },
      type: "custom",
      state: "ready",
      created_at: expect.any(String),
    });
  });

  it("filters by state and type, and pages with a cursor", async () => {
    const idsOf = (items: Array<{ id: string }>) => items.map((c) => c.id).sort();
    const publicIds = (...names: string[]) => names.map((name) => encodeId("toolCall", calls[name]!)).sort();
    expect(idsOf((await get(`${agentB.path}/tool-calls?state=ready&type=custom`)).body.data)).toEqual(publicIds("readyA", "readyB"));
    expect(idsOf((await get(`${agentB.path}/tool-calls?type=custom`)).body.data)).toEqual(publicIds("readyA", "readyB", "permission"));
    expect(idsOf((await get(`${agentB.path}/tool-calls?state=completed`)).body.data)).toEqual(publicIds("search"));
    expect((await get(`${agentB.path}/tool-calls?state=ready&type=mcp`)).body).toEqual({ data: [], next_cursor: null });

    const all = (await get(`${agentB.path}/tool-calls`)).body.data;
    const paged = await collectPages(server.api, `${agentB.path}/tool-calls?limit=2`, auth(), (page) => {
      expect(page.body.data.length).toBeLessThanOrEqual(2);
    });
    expect(paged).toEqual(all);
    const custom = await collectPages(server.api, `${agentB.path}/tool-calls?type=custom&limit=1`, auth());
    expect(idsOf(custom)).toEqual(publicIds("readyA", "readyB", "permission"));
  });

  it("rejects bad parameters", async () => {
    for (const query of ["state=done", "type=shell", "limit=101", "limit=0", "cursor=not-a-cursor"]) {
      const reply = await get(`${agentB.path}/tool-calls?${query}`);
      expect(reply.status, query).toBe(400);
      expect(reply.body.code, query).toBe("invalid_request");
    }
    expect((await get(`${agent.path}/tool-calls`)).body.data).toHaveLength(1);
    expect((await get(`${other.path}/tool-calls`)).body).toEqual({ data: [], next_cursor: null });
  });
});

describe("who may read a timeline", () => {
  const routes = () => [`${agent.path}/events`, `${agent.path}/turns`, `${agent.path}/turns/${encodeId("turn", ids.turn1!)}/events`, `${agent.path}/tool-calls`];

  it("needs credentials", async () => {
    for (const path of routes()) {
      const reply = await server.api.get(path);
      expect(reply.status, path).toBe(401);
      expect(reply.body.code).toBe("unauthorized");
    }
  });

  it("hides the agent from outsiders and from members without access to the project (404)", async () => {
    const outsider = await server.api.userWithOrg("Elsewhere");
    const member = await server.api.orgMember({ token }, org.id, "member");
    for (const path of routes()) {
      expect((await server.api.get(path, { token: outsider.token })).status, path).toBe(404);
      expect((await server.api.get(path, { token: member.token })).status, path).toBe(404);
    }
    // Every project role may read (agent.read), so a visible agent is never a 403 here.
    const grant = await server.api.put(`/api/v1/orgs/${org.id}/members/${member.userId}/projects/${project.id}`, { role: "viewer" }, { token });
    expect(grant.status, grant.text).toBe(200);
    for (const path of routes()) expect((await server.api.get(path, { token: member.token })).status, path).toBe(200);
  });

  it("answers 404 for an agent of another project or a malformed id", async () => {
    const created = await server.api.post(`/api/v1/orgs/${org.id}/projects`, { name: "Second" }, auth());
    expect(created.status, created.text).toBe(201);
    const elsewhere = `/api/v1/orgs/${org.id}/projects/${created.body.id}/agents/${agent.publicId}`;
    expect((await get(`${elsewhere}/events`)).status).toBe(404);
    expect((await get(`${elsewhere}/tool-calls`)).status).toBe(404);
    const base = `/api/v1/orgs/${org.id}/projects/${project.id}/agents`;
    expect((await get(`${base}/agt_bad/events`)).status).toBe(404);
    expect((await get(`${base}/${encodeId("agent", newUuid())}/turns`)).status).toBe(404);
    expect((await get(`${base}/${encodeId("turn", agent.id)}/events`)).status).toBe(404);
  });
});
