import { sql } from "drizzle-orm";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgres, rawRows } from "../../src/platform/db/index.js";
import { encodeId, newUuid } from "../../src/platform/ids.js";
import { createEventStreams } from "../../src/modules/timeline/stream.js";
import { startTestServer, useTestServer } from "../support/server.js";
import { refusedStream, SseStream, type SseFrame } from "../support/sse.js";
import { createTestAgent, text, TimelineWriter, type TestAgent } from "./timeline-fixtures.js";

const server = useTestServer();

let token: string;
let org: { id: string };
let project: { id: string };

beforeAll(async () => {
  ({ token, org, project } = await server.api.userWithOrg());
});

/** A fresh agent with `inputs` saved events (one turn each), and a writer for more. */
async function agentWith(inputs: number): Promise<{ agent: TestAgent; write: TimelineWriter; turnId: string }> {
  const agent = await createTestAgent(server, org, project);
  const write = new TimelineWriter(server, agent);
  let turnId = "";
  for (let i = 1; i <= inputs; i++) turnId = (await write.input({ blocks: [text(`message ${i}`)] })).turnId;
  return { agent, write, turnId };
}

function open(agent: TestAgent, query = "", headers: Record<string, string> = {}): Promise<SseStream> {
  return SseStream.open(`${server.url}${agent.path}/events/stream${query}`, { token, headers });
}

const ids = (frames: SseFrame[]) => frames.map((f) => Number(f.id));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe("replay", () => {
  it("starts with `: ok`, then sends every saved event with its sequence as id, as the list shows it", async () => {
    const { agent } = await agentWith(3);
    const stream = await open(agent);
    try {
      expect(stream.headers.get("content-type")).toBe("text/event-stream");
      expect(stream.headers.get("cache-control")).toBe("no-cache");
      expect(stream.headers.get("x-accel-buffering")).toBe("no");
      expect(await stream.next()).toEqual({ kind: "comment", text: "ok" });
      const frames = await stream.frames(3);
      expect(ids(frames)).toEqual([1, 2, 3]);
      expect(frames.map((f) => f.event)).toEqual(["agent_input", "agent_input", "agent_input"]);
      const listed = await server.api.get(`${agent.path}/events`, { token });
      expect(frames.map((f) => f.json)).toEqual(listed.body.data);
      expect(await stream.quiet(200)).toEqual([]);
    } finally {
      stream.close();
    }
  });

  it("resumes after after_sequence or Last-Event-ID, and the header wins", async () => {
    const { agent } = await agentWith(4);
    const cases: Array<[string, Record<string, string>, number[]]> = [
      ["?after_sequence=2", {}, [3, 4]],
      ["", { "Last-Event-ID": "1" }, [2, 3, 4]],
      ["?after_sequence=0", { "Last-Event-ID": "3" }, [4]],
      ["?after_sequence=3", { "Last-Event-ID": "0" }, [1, 2, 3, 4]],
    ];
    for (const [query, headers, expected] of cases) {
      const stream = await open(agent, query, headers);
      try {
        expect(ids(await stream.frames(expected.length)), `${query} ${JSON.stringify(headers)}`).toEqual(expected);
        expect((await stream.quiet(100)).filter((item) => item.kind === "frame")).toEqual([]);
      } finally {
        stream.close();
      }
    }
  });

  it("refuses a bad cursor with 400 before streaming", async () => {
    const { agent } = await agentWith(1);
    const url = `${server.url}${agent.path}/events/stream`;
    for (const value of ["abc", "-1", "1.5", "2x"]) {
      const refused = await refusedStream(url, { token, headers: { "Last-Event-ID": value } });
      expect(refused.status, value).toBe(400);
      expect(refused.json.code).toBe("invalid_request");
    }
    for (const query of ["after_sequence=-1", "after_sequence=x", "stream_deltas=maybe", "since=1"]) {
      expect((await refusedStream(`${url}?${query}`, { token })).status, query).toBe(400);
    }
  });

  it("checks access before streaming: 401, then 404 for what the caller cannot see", async () => {
    const { agent } = await agentWith(1);
    const url = `${server.url}${agent.path}/events/stream`;
    expect((await refusedStream(url)).status).toBe(401);
    const outsider = await server.api.userWithOrg("Elsewhere");
    const refused = await refusedStream(url, { token: outsider.token });
    expect(refused.status).toBe(404);
    expect(refused.json.code).toBe("not_found");
    const missing = `${server.url}/api/v1/orgs/${org.id}/projects/${project.id}/agents/${encodeId("agent", newUuid())}/events/stream`;
    expect((await refusedStream(missing, { token })).status).toBe(404);
  });
});

describe("live delivery", () => {
  it("sends an event saved after connecting", async () => {
    const { agent, write, turnId } = await agentWith(1);
    const stream = await open(agent, "?after_sequence=1");
    try {
      expect(await stream.next()).toEqual({ kind: "comment", text: "ok" });
      const output = await write.output(turnId, { blocks: [text("hello")] });
      const [frame] = await stream.frames(1);
      expect(frame).toMatchObject({ event: "model_output", id: "2" });
      expect(frame!.json).toMatchObject({ id: encodeId("event", output.eventId), sequence: 2, content_blocks: [{ type: "text", text: "hello" }] });
    } finally {
      stream.close();
    }
  });

  it("delivers a burst of 300 appends to every follower once each, in order, without gaps", async () => {
    const { agent, write } = await agentWith(0);
    // Followers at one cursor share their reads; each must still see every event.
    const early = await Promise.all([1, 2, 3, 4, 5].map(() => open(agent)));
    for (const stream of early) await stream.next();
    const writes: Array<Promise<unknown>> = [];
    // Several writers at once: the agent lock orders them, the sequence numbers them.
    for (let i = 0; i < 300; i++) {
      writes.push(write.input({ blocks: [text(`burst ${i}`)] }));
      if (i === 150) await writes[100];
    }
    // A follower joining mid-burst replays what it missed, then continues live.
    const late = await open(agent, "", { "Last-Event-ID": "0" });
    await Promise.all(writes);
    try {
      for (const stream of [...early, late]) {
        expect(ids(await stream.frames(300, 20_000))).toEqual(range(1, 300));
        expect((await stream.quiet(100)).filter((item) => item.kind === "frame")).toEqual([]);
      }
    } finally {
      for (const stream of [...early, late]) stream.close();
    }
  });

  it("sends tool_call_update frames without ids for state changes", async () => {
    const { agent, write, turnId } = await agentWith(1);
    const output = await write.output(turnId, { toolCalls: [{ name: "lookup", type: "custom" }] });
    const callId = encodeId("toolCall", output.toolCallIds[0]!);
    const stream = await open(agent, "?after_sequence=2");
    try {
      await stream.next();
      await write.toolCallState(output.toolCallIds[0]!, "ready");
      const [update] = await stream.frames(1);
      expect(update).toEqual({ kind: "frame", event: "tool_call_update", data: JSON.stringify({ tool_call_id: callId, state: "ready" }), json: { tool_call_id: callId, state: "ready" } });
      await write.toolResult(output.toolCallIds[0]!, "succeeded", [text("done")]);
      // The saved result and the live update travel separately; either may come first.
      const frames = await stream.frames(2);
      const result = frames.find((f) => f.event === "tool_result");
      expect(result).toMatchObject({ id: "3", json: { tool_call_id: callId, outcome: "succeeded" } });
      expect(frames.find((f) => f.event === "tool_call_update")).toMatchObject({ json: { tool_call_id: callId, state: "completed" } });
    } finally {
      stream.close();
    }
  });
});

describe.runIf(process.env["DATABASE_URL"])("across processes", () => {
  it("delivers events another process appends, also across a lost listening connection", async () => {
    // Another process: its own pool on the same database.
    const url = new URL(process.env["DATABASE_URL"]!);
    const [current] = await rawRows<{ db: string }>(server.db.read, sql`select current_database() as db`);
    url.pathname = `/${current!.db}`;
    const other = openPostgres({ url: url.toString() });
    const { agent } = await agentWith(0);
    const write = new TimelineWriter(server, agent, other);
    const stream = await open(agent);
    try {
      await stream.next();
      await write.input({ blocks: [text("from elsewhere")] });
      expect(ids(await stream.frames(1))).toEqual([1]);
      // Notifications sent while this server's listening connection is down are lost; the reconnect
      // makes every stream read again, so the event still arrives.
      await other.read.execute(
        sql`select pg_terminate_backend(pid) from pg_stat_activity where query like 'LISTEN%' and pid <> pg_backend_pid() and datname = current_database()`,
      );
      await write.input({ blocks: [text("during the outage")] });
      expect(ids(await stream.frames(1))).toEqual([2]);
      await write.input({ blocks: [text("after it")] });
      expect(ids(await stream.frames(1))).toEqual([3]);
    } finally {
      stream.close();
      await other.close();
    }
  });
});

describe("model output deltas", () => {
  const envelope = (turnId: string, contextId: string, seq: number, delta: string) => ({
    turn_id: encodeId("turn", turnId),
    model_call_context_id: encodeId("modelCallContext", contextId),
    seq,
    source_seq_start: seq,
    source_seq_end: seq,
    coalesced_count: 1,
    event: { kind: "text_delta", block_index: 0, delta },
  });

  it("are sent only with stream_deltas=true, and not after the final output of their model call", async () => {
    const { agent, write, turnId } = await agentWith(1);
    const signals = server.app.services.signals;
    const withDeltas = await open(agent, "?after_sequence=1&stream_deltas=true");
    const without = await open(agent, "?after_sequence=1&stream_deltas=false");
    try {
      await withDeltas.next();
      await without.next();
      const contextId = newUuid();
      const preview = envelope(turnId, contextId, 1, "Hel");
      await signals.publishDelta(agent.id, preview);
      const [delta] = await withDeltas.frames(1);
      expect(delta).toMatchObject({ event: "model_output_delta", json: preview });
      expect(delta!.id).toBeUndefined();

      await write.output(turnId, { contextId, blocks: [text("Hello")] });
      expect(await withDeltas.frames(1)).toMatchObject([{ event: "model_output", id: "2" }]);
      // The final output replaced the preview: a late delta of that call is dropped, another call's is not.
      const fresh = envelope(turnId, newUuid(), 1, "Next");
      await signals.publishDelta(agent.id, envelope(turnId, contextId, 2, "lo"));
      await signals.publishDelta(agent.id, fresh);
      expect(await withDeltas.frames(1)).toMatchObject([{ event: "model_output_delta", json: fresh }]);
      expect(await withDeltas.quiet(200)).toEqual([]);

      expect(ids(await without.frames(1))).toEqual([2]);
      expect(await without.quiet(200)).toEqual([]);
    } finally {
      withDeltas.close();
      without.close();
    }
  });

  it("are never replayed", async () => {
    const { agent, turnId } = await agentWith(1);
    const signals = server.app.services.signals;
    // On PostgreSQL a published delta reaches this process's listener a moment later: wait until it has
    // been dispatched, or a stream opened meanwhile would rightly receive it live.
    let delivered!: () => void;
    const dispatched = new Promise<void>((resolve) => (delivered = resolve));
    const stopWatching = await signals.onDelta(agent.id, () => delivered());
    await signals.publishDelta(agent.id, envelope(turnId, newUuid(), 1, "gone"));
    await dispatched;
    stopWatching();
    const stream = await open(agent, "?stream_deltas=true");
    try {
      expect(ids(await stream.frames(1))).toEqual([1]);
      expect(await stream.quiet(200)).toEqual([]);
    } finally {
      stream.close();
    }
  });
});

describe("the stream's lifetime", () => {
  /**
   * A bare HTTP app serving one agent's stream from its own `EventStreams`, so a test can shorten the
   * heartbeat or point the stream at an id the database rejects. Access checks are the main app's
   * business and covered above.
   */
  let bare: FastifyInstance;
  let bareUrl: string;
  let finished = 0;
  let agent: TestAgent;

  beforeAll(async () => {
    ({ agent } = await agentWith(1));
    const streams = createEventStreams({ db: server.db, signals: server.app.services.signals, heartbeatMs: 100 });
    bare = Fastify();
    bare.addHook("preClose", () => streams.closeAll());
    bare.get<{ Params: { target: string } }>("/stream/:target", async (request, reply) => {
      // "broken" is not a UUID: PostgreSQL refuses the read, as it would refuse one during an outage.
      const id = request.params.target === "broken" ? "broken" : agent.id;
      await streams.follow(reply, { id, orgId: agent.orgId, projectId: agent.projectId }, { after: 0, deltas: false });
      finished++;
    });
    bareUrl = await bare.listen({ host: "127.0.0.1", port: 0 });
  });

  afterAll(async () => {
    await bare.close();
  });

  it("sends heartbeat comments while nothing happens", async () => {
    const stream = await SseStream.open(`${bareUrl}/stream/agent`);
    try {
      expect(await stream.next()).toEqual({ kind: "comment", text: "ok" });
      expect(ids(await stream.frames(1))).toEqual([1]);
      expect(await stream.next()).toEqual({ kind: "comment", text: "heartbeat" });
      expect(await stream.next()).toEqual({ kind: "comment", text: "heartbeat" });
    } finally {
      stream.close();
    }
  });

  it("stops following when the client goes away", async () => {
    const before = finished;
    const stream = await SseStream.open(`${bareUrl}/stream/agent`);
    await stream.frames(1);
    stream.close();
    for (let i = 0; i < 100 && finished === before; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(finished).toBe(before + 1);
  });

  it("sends an error frame and ends when the database read fails", async () => {
    const stream = await SseStream.open(`${bareUrl}/stream/broken`);
    expect(await stream.next()).toEqual({ kind: "comment", text: "ok" });
    const [frame] = await stream.frames(1);
    expect(frame).toMatchObject({ event: "error", json: { error: expect.any(String), code: "service_unavailable" } });
    expect(frame!.id).toBeUndefined();
    await stream.done;
    expect(stream.drain()).toEqual([]);
  });

  it("sends an error frame and ends when a read a hint started while the stream was idle fails", async () => {
    // The same database, whose reads start failing on demand (as in an outage after the stream began).
    let failing = false;
    // Queries built once reach the driver through the handle's session, others through `select`.
    const wentAway = () => {
      throw new Error("the database went away");
    };
    const broken = new Proxy(server.db.read, {
      get: (target, key) => (key === "session" ? wentAway() : key === "select" ? wentAway : Reflect.get(target, key)),
    });
    const flaky = Object.create(server.db, { read: { get: () => (failing ? broken : server.db.read) } });
    const { agent: own, write } = await agentWith(1);
    const streams = createEventStreams({ db: flaky, signals: server.app.services.signals, heartbeatMs: 60_000 });
    const app = Fastify();
    app.addHook("preClose", () => streams.closeAll());
    app.get("/stream", async (_request, reply) => streams.follow(reply, { id: own.id, orgId: own.orgId, projectId: own.projectId }, { after: 0, deltas: false }));
    const url = await app.listen({ host: "127.0.0.1", port: 0 });
    try {
      const stream = await SseStream.open(`${url}/stream`);
      expect(await stream.next()).toEqual({ kind: "comment", text: "ok" });
      expect(ids(await stream.frames(1))).toEqual([1]);
      failing = true;
      await write.input({ blocks: [text("not readable")] });
      const [frame] = await stream.frames(1);
      expect(frame).toMatchObject({ event: "error", json: { code: "service_unavailable" } });
      await stream.done;
      expect(stream.drain()).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it("ends open streams when the server shuts down, so closing does not hang", async () => {
    const own = await startTestServer();
    const owner = await own.api.userWithOrg();
    const ownAgent = await createTestAgent(own, owner.org, owner.project);
    await new TimelineWriter(own, ownAgent).input({ blocks: [text("hi")] });
    const stream = await SseStream.open(`${own.url}${ownAgent.path}/events/stream`, { token: owner.token });
    expect(ids(await stream.frames(1))).toEqual([1]);
    await own.close();
    await stream.done;
    expect(stream.drain()).toEqual([]);
  });
});
