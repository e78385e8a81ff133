/**
 * Benchmark 3: event page reads through the API against the very SQL svc runs, executed raw.
 */
import { performance } from "node:perf_hooks";
import { forwardPageSql } from "../packages/server/src/modules/timeline/store.js";
import { insertInput, markResolved } from "../packages/server/src/runtime/store/inputs.js";
import { appendEvent, lockAgent, openTurn } from "../packages/server/src/runtime/store/journal.js";
import { rawAccess } from "./append.js";
import { progress, summary, type BenchResult, type BenchServer, type Project } from "./lib.js";

const LIMIT = 100;
const PAGE_STATEMENT = "bench_events_after";

/**
 * Tops the agent's timeline up to `target` events with svc's own journal functions (the write path of a
 * config change, minus HTTP and config compilation), 200 events per transaction and turn, so a long
 * timeline costs seconds rather than minutes on PGlite.
 */
async function fillTimeline(server: BenchServer, agentId: string, target: number) {
  for (;;) {
    const added = await server.db.tx(async (tx) => {
      const agent = (await lockAgent(tx, agentId))!;
      const missing = Math.min(200, target - (agent.nextEventSequence - 1));
      if (missing <= 0) return 0;
      const turn = await openTurn(tx, agentId);
      for (let i = 0; i < missing; i++) {
        const input = await insertInput(tx, {
          orgId: agent.orgId, agentId, inputKind: "config_change", deliveryMode: "immediate", state: "resolved",
          agentConfigId: agent.currentConfigId, idempotencyScope: "agent_config_change", inputIdempotencyKey: null,
          requestDigest: "bench-fill", contentBlocks: [],
        } as never);
        const event = await appendEvent(tx, agent, { turnId: turn.id, kind: "agent_input", agentInputId: input.id, opening: i === 0, semantic: i === 0 });
        await markResolved(tx, input.id, event.id);
      }
      return missing;
    });
    if (added === 0) return;
  }
}

export async function pageReads(server: BenchServer, timeline: { project: Project; agentId: string }, reads: number, size = 4000): Promise<BenchResult> {
  const { project, agentId: publicId } = timeline;
  const path = `${project.base}/agents/${publicId}/events`;
  // The internal uuid of the agent, from the first page's event rows.
  const first = await server.api.get(`${path}?after_sequence=0&limit=1`, { token: project.token });
  const raw = await rawAccess(server, 1);
  const [{ agent_id: agentId, n }] = await raw.query(
    `SELECT agent_id, count(*)::int AS n FROM agent_events GROUP BY agent_id ORDER BY count(*) DESC LIMIT 1`,
  );
  if (first.status !== 200) throw new Error(`events: ${first.status}`);
  const written = Number(n);
  await fillTimeline(server, agentId, size);
  const total = size;
  progress(`reads: timeline of ${total} events ready (${written} written through the API)`);
  const text = forwardPageSql(server.db.read);
  // Offsets cycle through the whole timeline; page 1 (after_sequence=0) is the one the task names.
  const offsets = Array.from({ length: reads }, (_, i) => (i % 5 === 0 ? 0 : Math.floor(((i * 7919) % Math.max(1, total - LIMIT)))));

  const readPage = (after: number) => server.timed.send("GET", `${path}?after_sequence=${after}&limit=${LIMIT}`, project.token);
  for (let i = 0; i < 20; i++) {
    await readPage(offsets[i]!);
    await raw.query(text, [agentId, offsets[i], LIMIT], PAGE_STATEMENT);
  }
  const api: number[] = [];
  const sqlTimes: number[] = [];
  let apiStart = performance.now();
  for (const after of offsets) {
    const t = performance.now();
    const reply = await readPage(after);
    api.push(performance.now() - t);
    if (reply.status !== 200 || !reply.text.startsWith(`{"data":[{`)) throw new Error(`page read failed: ${reply.status}`);
  }
  const apiSeconds = (performance.now() - apiStart) / 1000;
  apiStart = performance.now();
  for (const after of offsets) {
    const t = performance.now();
    const rows = await raw.query(text, [agentId, after, LIMIT], PAGE_STATEMENT);
    if (rows.length === 0) throw new Error("raw page empty");
    sqlTimes.push(performance.now() - t);
  }
  const rawSeconds = (performance.now() - apiStart) / 1000;
  await raw.close();
  const a = summary(api);
  const s = summary(sqlTimes);
  return {
    id: "reads",
    title: `Event page reads (limit ${LIMIT}) over a ${total}-event timeline`,
    measured:
      `\`GET …/agents/{id}/events?after_sequence=X&limit=${LIMIT}\` on one agent with ${total} \`agent_input\` events (${written} written ` +
      "through the API by benchmark 2, the rest by svc's journal functions in batches), " + `${reads} sequential requests; every fifth has after_sequence=0, the others spread over the timeline. Includes ` +
      "HTTP, bearer auth, the agent access check, the page query and JSON serialization of 100 events. The client is undici's " +
      "`request` on a keep-alive connection, each reply read to its end.",
    baseline:
      "The same page query svc runs (the SQL text of `eventsAfter`: the page of events chosen first, then five joins), " +
      "executed raw on the same database with the same parameters, as a named prepared statement like svc's (a pg client, or " +
      "the embedded database's client).",
    rows: [
      { metric: "pages/s (sequential)", baseline: reads / rawSeconds, svc: reads / apiSeconds, unit: "/s", higherIsBetter: true },
      { metric: "latency p50", baseline: s.p50, svc: a.p50, unit: "ms" },
      { metric: "latency p99", baseline: s.p99, svc: a.p99, unit: "ms" },
    ],
  };
}
