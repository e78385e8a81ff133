/**
 * Shared machinery for the benchmarks: a real svc started in-process (as the tests do) on a freshly
 * migrated database, a project with a model on the fake provider, an SSE reader, and statistics.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { Pool } from "undici";
import { buildApp, type App } from "../packages/server/src/app.js";
import { loadConfig, type Config } from "../packages/server/src/config.js";
import { EmbeddedWorkerClient, migratePostgres, openEmbedded, openPostgres, type Database, type EmbeddedClient } from "../packages/server/src/platform/db/index.js";
import { startAgentWorker } from "../packages/server/src/runtime/index.js";
import type { ModelClient } from "../packages/server/src/runtime/models/types.js";
import { ApiClient, type BrowserSession } from "../packages/server/test/support/client.js";
import { countStatements as countWith, type StatementCount } from "../packages/server/test/support/statements.js";

export type { StatementCount };

export type DbKind = "pglite" | "postgres";
export const ORIGIN = "http://svc.bench";

/** How a benchmark's worker differs from `svc serve`'s: fewer slots, a longer idle poll, a wrapped model client. */
export interface WorkerOptions {
  concurrency?: number;
  pollMs?: number;
  models?: ModelClient;
}

export interface BenchServer {
  kind: DbKind;
  url: string;
  config: Config;
  db: Database;
  app: App;
  api: ApiClient;
  /** The client of the timed requests (see `TimedClient`). */
  timed: TimedClient;
  /** Raw access to the same database, for baselines: the embedded database's client or a pg connection string. */
  raw: { pglite?: EmbeddedClient; pgUrl?: string };
  /** Resolution time (performance.now()) of the last `db.tx` that committed. */
  lastCommitAt: number;
  startWorker(options?: WorkerOptions): { stop(): Promise<void> };
  close(): Promise<void>;
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** One statement on its own connection (CREATE/DROP DATABASE cannot run inside a transaction). */
export async function admin(url: string, sql: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A real svc over loopback HTTP on a new, migrated database of `kind`. */
export async function startBenchServer(kind: DbKind, env: Record<string, string> = {}): Promise<BenchServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-"));
  const config = loadConfig({
    SVC_DATA_DIR: dataDir,
    SVC_PUBLIC_URL: ORIGIN,
    SVC_SECRET_KEY: "0".repeat(63) + "1",
    SVC_RATE_LIMIT_AUTH: "1000000",
    SVC_RATE_LIMIT_DEVICE: "1000000",
    SVC_LOG_LEVEL: "silent",
    ...env,
  });
  let inner: Database;
  let drop = async () => {};
  const raw: BenchServer["raw"] = {};
  if (kind === "postgres") {
    const url = process.env["DATABASE_URL"];
    if (!url) throw new Error("DATABASE_URL is required for the postgres run");
    const name = `svc_bench_${randomBytes(4).toString("hex")}`;
    await admin(url, `CREATE DATABASE ${name}`);
    const dbUrl = withDatabase(url, name);
    await migratePostgres(dbUrl);
    // svc serve opens its pool with the default size (10); the benchmark does the same.
    inner = openPostgres({ url: dbUrl });
    raw.pgUrl = dbUrl;
    drop = async () => void (await admin(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  } else {
    // The embedded database as svc serve runs it: in its worker thread, reached through its client.
    const client = await EmbeddedWorkerClient.start({ migrate: true });
    inner = await openEmbedded({ client });
    raw.pglite = client;
  }
  progress(`${kind}: database migrated`);
  const server = {} as BenchServer;
  // Every transaction of the real write path goes through db.tx; its resolution is the commit point.
  const db: Database = {
    ...inner,
    tx: async (work) => {
      const result = await inner.tx(work);
      server.lastCommitAt = performance.now();
      return result;
    },
  };
  const app = await buildApp({ config, db, logger: false });
  const url = await app.http.listen({ host: "127.0.0.1", port: 0 });
  const quiet = { info: () => {}, warn: () => {}, error: (o: unknown) => console.error("worker error", o) };
  Object.assign(server, {
    kind,
    url,
    config,
    db,
    app,
    api: new ApiClient(url, ORIGIN),
    timed: new TimedClient(url),
    raw,
    lastCommitAt: 0,
    startWorker(options: WorkerOptions = {}) {
      const runtime = {
        ...config.runtime,
        ...(options.concurrency ? { workerConcurrency: options.concurrency } : {}),
        ...(options.pollMs ? { pollMs: options.pollMs } : {}),
      };
      const models = options.models ? { models: options.models } : {};
      return startAgentWorker({ db, services: app.services, config: { ...config, runtime } as Config, log: quiet, ...models });
    },
    async close() {
      await server.timed.close();
      await app.http.close();
      await inner.close();
      await drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  });
  return server;
}

export interface Project {
  token: string;
  base: string;
  configId: string;
  orgId: string;
  /** The owner's browser session (org API keys are minted through one). */
  session: BrowserSession;
}

function must(reply: { status: number; text: string }, ok: number[], what: string) {
  if (!ok.includes(reply.status)) throw new Error(`${what}: ${reply.status} ${reply.text.slice(0, 500)}`);
}

/** A user, org and project with one model on `providerUrl` (OpenAI chat completions) and an agent config (`tools`: a YAML `tools:` section). */
export async function benchProject(api: ApiClient, providerUrl: string, tools = ""): Promise<Project> {
  const { token, org, project, session } = await api.userWithOrg();
  const auth = { token };
  const secret = await api.post(`/api/v1/orgs/${org.id}/secrets`, { owner: { kind: "org" }, name: "k", material: { kind: "generic", value: "sk-bench" } }, auth);
  must(secret, [201], "secret");
  const provider = await api.post(
    `/api/v1/orgs/${org.id}/model-provider-configs`,
    { name: "fake", api_format: "openai-chat-completions", base_url: providerUrl, credential_secret_id: secret.body.id },
    auth,
  );
  must(provider, [201], "provider");
  const model = await api.post(
    `/api/v1/orgs/${org.id}/model-provider-configs/${provider.body.config.id}/models`,
    { name: "fast", provider_model_slug: "fake-model", context_window_tokens: 128000, max_output_tokens: 4096 },
    auth,
  );
  must(model, [201], "model");
  const grant = await api.post(`/api/v1/orgs/${org.id}/projects/${project.id}/model-grants`, { configured_model_id: model.body.id }, auth);
  must(grant, [201], "grant");
  const base = `/api/v1/orgs/${org.id}/projects/${project.id}`;
  const cfg = await api.post(`${base}/agent-configs`, { source: configSource("You are a benchmark agent.") + tools, source_format: "yaml" }, auth);
  must(cfg, [200, 201], "config");
  return { token, base, configId: cfg.body.id, orgId: org.id, session };
}

export function configSource(instruction: string): string {
  return `version: v1\ninstruction: ${JSON.stringify(instruction)}\nmodel:\n  provider_config: fake\n  name: fast\n`;
}

export async function launchAgent(api: ApiClient, project: Project, message?: string): Promise<string> {
  const reply = await api.post(`${project.base}/agents`, { config: project.configId, ...(message ? { message } : {}) }, { token: project.token });
  must(reply, [201], "launch");
  return reply.body.agent.id as string;
}

export async function sendInput(api: ApiClient, project: Project, agentId: string, text: string) {
  const reply = await api.post(`${project.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "text", text }], delivery_mode: "queued" }, { token: project.token });
  must(reply, [201], "input");
}

/** One timeline append through the API: a mid-conversation config change (one `agent_input` event). */
export function configChange(project: Project, agentId: string, instruction: string) {
  return { path: `${project.base}/agents/${agentId}/config`, body: { source: configSource(instruction), source_format: "yaml" } };
}

export async function changeConfig(api: ApiClient, project: Project, agentId: string, instruction: string) {
  const { path, body } = configChange(project, agentId, instruction);
  const reply = await api.post(path, body, { token: project.token });
  must(reply, [200], "config change");
  return reply.body;
}

/**
 * The client of the requests a benchmark times: undici's `request` over keep-alive connections, as the
 * load test's clients and tools such as autocannon send them. The suite's `ApiClient` is built on `fetch`,
 * whose WHATWG streams and Headers cost the shared process 0.6–1 ms per request (config changes and event
 * pages sent in turn by both clients to one svc), which the numbers would charge to svc. A reply is read
 * to its end before the clock stops; checking it is the caller's business.
 */
export class TimedClient {
  private readonly pool: Pool;

  constructor(url: string) {
    this.pool = new Pool(url, { connections: 16 });
  }

  async send(method: "GET" | "POST", path: string, token: string, body?: unknown): Promise<{ status: number; text: string }> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    const reply = await this.pool.request({ method, path, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: reply.statusCode, text: await reply.body.text() };
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/* ---------- statistics ---------- */

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export function summary(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = sorted.reduce((s, v) => s + v, 0) / Math.max(1, sorted.length);
  return { n: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), mean, max: sorted.at(-1) ?? NaN };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type Machine = ReturnType<typeof machine>;

export function machine(kind: DbKind) {
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? "unknown",
    node: process.version,
    database: kind === "postgres" ? "PostgreSQL (DATABASE_URL, local)" : "PGlite (worker thread)",
  };
}

/* ---------- results ---------- */

export interface Row {
  metric: string;
  baseline: number;
  svc: number;
  unit: string;
  /** true when larger is better (throughput); the ratio is then baseline/svc so >1 always means svc is slower. */
  higherIsBetter?: boolean;
}

export interface BenchResult {
  id: string;
  title: string;
  measured: string;
  baseline: string;
  rows: Row[];
  /** Facts with no baseline of their own (counts per step, per size), shown as a second table. */
  table?: { columns: string[]; rows: string[][] };
  /** Named numbers other code reads (the targets of docs/performance.md), kept beside the rows. */
  facts?: Record<string, number>;
  notes?: string[];
  /** When and where a partial run (--only) measured this, if not in the run its file is dated by. */
  run?: { at: string; machine: Machine };
}

export function ratio(row: Row): number {
  return row.higherIsBetter ? row.baseline / row.svc : row.svc / row.baseline;
}

export function printResult(kind: DbKind, result: BenchResult) {
  console.log(`\n[${kind}] ${result.title}`);
  const w = Math.max(...result.rows.map((r) => r.metric.length));
  for (const row of result.rows) {
    console.log(
      `  ${row.metric.padEnd(w)}  baseline ${fmt(row.baseline).padStart(10)} ${row.unit.padEnd(8)} svc ${fmt(row.svc).padStart(10)} ${row.unit.padEnd(8)} ratio ×${fmt(ratio(row))}`,
    );
  }
  if (result.table) {
    console.log(`  ${result.table.columns.join(" | ")}`);
    for (const row of result.table.rows) console.log(`  ${row.join(" | ")}`);
  }
  for (const note of result.notes ?? []) console.log(`  note: ${note}`);
}

export function fmt(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Math.abs(n) >= 100) return n.toFixed(0);
  if (Math.abs(n) >= 10) return n.toFixed(1);
  if (Math.abs(n) >= 1) return n.toFixed(2);
  return n.toFixed(3);
}

const t0 = performance.now();
/** Progress on stderr, so a slow stage is visible. */
export function progress(message: string) {
  process.stderr.write(`  [${((performance.now() - t0) / 1000).toFixed(1)}s] ${message}\n`);
}

/**
 * Counts the SQL statements, transactions and returned rows every client of `server`'s database runs
 * from now on (the benchmark's own queries included; subtract them), with the tests' counter
 * (`packages/server/test/support/statements.ts`), so the benchmark and the statement-count tests
 * agree on what a statement is. Reading the count stops it.
 */
export function countStatements(server: BenchServer): () => StatementCount {
  return countWith({ pglite: server.raw.pglite, databaseUrl: server.raw.pgUrl });
}
