/**
 * Benchmark 2: event append throughput through the API against raw insert transactions of similar rows.
 */
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { benchProject, configChange, launchAgent, progress, summary, type BenchResult, type BenchServer, type Project } from "./lib.js";

const CONCURRENCY = 8;

/** A raw transaction runner over the same database: one pg client per worker, or the embedded database's client. */
export interface Raw {
  tx(worker: number, statements: (q: (sql: string, params?: unknown[]) => Promise<any[]>) => Promise<void>): Promise<void>;
  /** `name` makes it a named prepared statement on PostgreSQL, as svc's own are (PGlite ignores it). */
  query(sql: string, params?: unknown[], name?: string): Promise<any[]>;
  close(): Promise<void>;
}

export async function rawAccess(server: BenchServer, clients: number): Promise<Raw> {
  if (server.raw.pglite) {
    const db = server.raw.pglite;
    return {
      tx: (_w, statements) => db.transaction(async (t) => statements(async (sql, params) => (await t.query(sql, params)).rows)),
      query: async (sql, params) => (await db.query(sql, params)).rows,
      close: async () => {},
    };
  }
  const pool: pg.Client[] = [];
  for (let i = 0; i < clients; i++) {
    const c = new pg.Client({ connectionString: server.raw.pgUrl });
    await c.connect();
    pool.push(c);
  }
  return {
    async tx(worker, statements) {
      const c = pool[worker % pool.length]!;
      await c.query("BEGIN");
      try {
        await statements(async (sql, params) => (await c.query(sql, params as any[])).rows);
        await c.query("COMMIT");
      } catch (err) {
        await c.query("ROLLBACK");
        throw err;
      }
    },
    query: async (sql, params, name) => (await pool[0]!.query({ text: sql, values: params as any[], name })).rows,
    close: async () => void (await Promise.all(pool.map((c) => c.end()))),
  };
}

export async function timed(total: number, lanes: number, one: (lane: number, i: number) => Promise<void>) {
  const latencies: number[] = [];
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      while (next < total) {
        const i = next++;
        const t = performance.now();
        await one(lane, i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  return { perSecond: total / seconds, ...summary(latencies) };
}

export interface AppendOutcome {
  result: BenchResult;
  /** The agent that received the sequential appends: a long timeline for the read benchmark. */
  longTimeline: { project: Project; agentId: string };
}

export async function appendThroughput(server: BenchServer, providerUrl: string, sequential: number, concurrent: number): Promise<AppendOutcome> {
  const project = await benchProject(server.api, providerUrl);
  const agentId = await launchAgent(server.api, project);
  const lanesAgents = await Promise.all(Array.from({ length: CONCURRENCY }, () => launchAgent(server.api, project)));
  const append = async (agent: string, instruction: string) => {
    const { path, body } = configChange(project, agent, instruction);
    const reply = await server.timed.send("POST", path, project.token, body);
    if (reply.status !== 200) throw new Error(`config change: ${reply.status} ${reply.text.slice(0, 500)}`);
  };
  for (let i = 0; i < 20; i++) await append(agentId, `warm ${i % 2}`);

  const apiSeq = await timed(sequential, 1, (_l, i) => append(agentId, `instruction ${i % 2}`));
  progress(`append: ${sequential} sequential API appends done`);
  const apiPar = await timed(concurrent, CONCURRENCY, (lane, i) => append(lanesAgents[lane]!, `instruction ${i % 2}`));

  progress("append: API done; raw baseline");
  // Baseline: per append, one transaction that locks a counter row, inserts an input row (jsonb content)
  // and an event row at the next sequence, and advances the counter: the rows svc's journal writes.
  const raw = await rawAccess(server, CONCURRENCY);
  await raw.query(`CREATE TABLE bench_agents (id uuid PRIMARY KEY, next_sequence bigint NOT NULL)`);
  await raw.query(
    `CREATE TABLE bench_inputs (id uuid PRIMARY KEY, agent_id uuid NOT NULL REFERENCES bench_agents(id), content_blocks jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
  );
  await raw.query(
    `CREATE TABLE bench_events (id uuid PRIMARY KEY, agent_id uuid NOT NULL REFERENCES bench_agents(id), sequence bigint NOT NULL, event_kind text NOT NULL, agent_input_id uuid REFERENCES bench_inputs(id), created_at timestamptz NOT NULL DEFAULT now(), UNIQUE (agent_id, sequence))`,
  );
  const rawAgents = Array.from({ length: CONCURRENCY + 1 }, () => randomUUID());
  for (const id of rawAgents) await raw.query(`INSERT INTO bench_agents VALUES ($1, 1)`, [id]);
  const rawAppend = (lane: number, agent: string, i: number) =>
    raw.tx(lane, async (q) => {
      const [row] = await q(`SELECT next_sequence FROM bench_agents WHERE id = $1 FOR UPDATE`, [agent]);
      const inputId = randomUUID();
      await q(`INSERT INTO bench_inputs (id, agent_id, content_blocks) VALUES ($1, $2, $3)`, [inputId, agent, JSON.stringify([{ type: "text", text: `instruction ${i}` }])]);
      await q(`INSERT INTO bench_events (id, agent_id, sequence, event_kind, agent_input_id) VALUES ($1, $2, $3, 'agent_input', $4)`, [randomUUID(), agent, row.next_sequence, inputId]);
      await q(`UPDATE bench_agents SET next_sequence = next_sequence + 1 WHERE id = $1`, [agent]);
    });
  for (let i = 0; i < 20; i++) await rawAppend(0, rawAgents[0]!, i);
  const rawSeq = await timed(sequential, 1, (_l, i) => rawAppend(0, rawAgents[0]!, i));
  const rawPar = await timed(concurrent, CONCURRENCY, (lane, i) => rawAppend(lane, rawAgents[lane + 1]!, i));
  await raw.query(`DROP TABLE bench_events, bench_inputs, bench_agents`);
  await raw.close();

  return {
    longTimeline: { project, agentId },
    result: {
      id: "append",
      title: "Event append throughput through the API",
      measured:
        "`POST …/agents/{id}/config` (a mid-conversation config change, alternating between two sources). It is the one endpoint " +
        "that appends a timeline event inside the request: `POST …/inputs` only queues an input (its event is written later by " +
        "the worker) and tool results need a model-made tool call. Each request includes HTTP + auth + access check, compiling " +
        "the config (its own transaction), then one transaction that locks the agent row, inserts the `config_change` input, " +
        "opens a turn, inserts the event, advances the counters, marks the input resolved, sets the current config and NOTIFYs. " +
        "The client is undici's `request` on keep-alive connections, each reply read to its end. " +
        `Sequential: one client, one agent, ${sequential} appends. Concurrent: ${CONCURRENCY} clients, each on its own agent, ${concurrent} appends.`,
      baseline:
        "Raw transactions on the same database (pg client per lane; for PGlite, its worker thread's client, as svc uses it): lock a counter row " +
        "FOR UPDATE, insert an input row (jsonb), insert an event row at the next sequence, advance the counter. No HTTP.",
      rows: [
        { metric: "sequential appends/s", baseline: rawSeq.perSecond, svc: apiSeq.perSecond, unit: "/s", higherIsBetter: true },
        { metric: "sequential latency p50", baseline: rawSeq.p50, svc: apiSeq.p50, unit: "ms" },
        { metric: "sequential latency p99", baseline: rawSeq.p99, svc: apiSeq.p99, unit: "ms" },
        { metric: `${CONCURRENCY} concurrent: appends/s`, baseline: rawPar.perSecond, svc: apiPar.perSecond, unit: "/s", higherIsBetter: true },
        { metric: `${CONCURRENCY} concurrent: latency p99`, baseline: rawPar.p99, svc: apiPar.p99, unit: "ms" },
      ],
    },
  };
}
