import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { startFakeProvider, type FakeReply } from "../../src/runtime/models/fake-provider/index.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, finalOutputs, launch, modelCalls, providerRequests, send, untilEvents } from "../support/agent-loop.js";
import { ApiClient } from "../support/client.js";
import { adminQuery, withDatabase } from "../support/global-setup.js";
import { exited, freePort, MAIN, ready } from "../support/process.js";
import { SseStream, type SseFrame } from "../support/sse.js";

/*
 * svc scaled out: `svc api`, two `svc worker` processes and one `svc maintenance`, each its own OS
 * process on one PostgreSQL database. Only PostgreSQL can be shared; the embedded database belongs to
 * one process (serve.test.ts checks that these roles refuse it).
 */

const adminUrl = process.env["DATABASE_URL"];
const dataDir = mkdtempSync(join(tmpdir(), "svc-split-"));
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  rmSync(dataDir, { recursive: true, force: true });
});

const AGENTS = 8;
const STEPS = 4;

function role(name: "api" | "worker" | "maintenance", env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ["--import", "tsx", MAIN, name], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return child;
}

/** Resolves once the process has logged that it started (at most 30 s). */
function started(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(() => reject(new Error(`process did not start: ${seen.slice(-500)}`)), 30_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('"svc started"')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => reject(new Error(`process exited with ${code} before starting: ${seen.slice(-500)}`)));
  });
}

async function query<T>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

describe.skipIf(!adminUrl)("a split deployment on PostgreSQL", () => {
  it("svc api, two svc workers and svc maintenance run agents together; no model step runs twice", { timeout: 180_000 }, async () => {
    const name = `svc_split_${randomBytes(4).toString("hex")}`;
    await adminQuery(adminUrl!, `CREATE DATABASE ${name} TEMPLATE ${inject("postgresTemplate")}`);
    cleanups.push(() => adminQuery(adminUrl!, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    const databaseUrl = withDatabase(adminUrl!, name);
    const provider = await startFakeProvider();
    cleanups.push(() => provider.close());
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const env = {
      DATABASE_URL: databaseUrl,
      SVC_SECRET_KEY: "0".repeat(63) + "1",
      SVC_DATA_DIR: dataDir,
      PORT: String(port),
      HOST: "127.0.0.1",
      SVC_PUBLIC_URL: url,
      SVC_LOG_LEVEL: "info",
      SVC_ALLOW_PRIVATE_NETWORK: "true",
      SVC_WORKER_CONCURRENCY: "3",
      SVC_WORKER_POLL_MS: "200",
      SVC_RUNTIME_LEASE_SECONDS: "2",
      SVC_MAINTENANCE_INTERVAL_MS: "300",
    };
    const api = role("api", env);
    const workers = [role("worker", env), role("worker", env)];
    const maintenance = role("maintenance", env);
    await Promise.all([ready(url), ...workers.map(started), started(maintenance)]);

    const client = new ApiClient(url, url);
    const project = await agentProject(client, provider.baseUrl);
    const configId = await createConfig(client, project, yamlConfig(project));

    // Every reply is distinct and takes a moment, so the workers' slots overlap and a step run twice
    // would show up as a reply used twice (or one left over).
    const replies: FakeReply[] = Array.from({ length: AGENTS * STEPS }, (_, i) => ({ text: `reply ${i}`, delayMs: 40 }));
    provider.script(...replies);

    const holders = new Set<string>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        for (const row of await query<{ worker_id: string }>(databaseUrl, "SELECT worker_id FROM agent_runtime_locks")) holders.add(row.worker_id);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();

    const ids: string[] = [];
    for (let a = 0; a < AGENTS; a++) ids.push(await launch(client, project, configId, `agent ${a} step 0`));
    const watched = await followFromStart(url, project, ids[0]!);
    for (let s = 1; s < STEPS; s++) for (const [a, id] of ids.entries()) await send(client, project, id, `agent ${a} step ${s}`);

    const timelines = await Promise.all(ids.map((id) => untilEvents(client, project, id, (list) => finalOutputs(list).length === STEPS)));
    sampling = false;
    await sampler;

    expect(modelCalls(provider)).toHaveLength(AGENTS * STEPS);
    const texts = timelines.flatMap((list) => finalOutputs(list).map((e) => e.content_blocks[0].text as string));
    expect(texts.sort()).toEqual(replies.map((r) => r.text!).sort());
    // Each timeline: the launch's config event, then one input and one output per step, densely numbered.
    for (const list of timelines) expect(list.map((e) => e.sequence)).toEqual(sequences(1 + STEPS * 2));
    const retried = await query(databaseUrl, "SELECT id FROM model_call_contexts WHERE attempt_number > 1 OR state <> 'succeeded'");
    expect(retried).toEqual([]);
    // Both workers held runtime locks: the work was shared, not done by one while the other idled.
    const pids = [...holders].map((holder) => Number(holder.split(":")[1]));
    expect(new Set(pids)).toEqual(new Set(workers.map((w) => w.pid)));

    // The stream on the API process saw what the workers appended, in order, once each, with previews.
    const frames = await framesThrough(watched, 1 + STEPS * 2);
    const saved = frames.filter((f) => f.event !== "model_output_delta");
    expect(saved.map((f) => Number(f.id))).toEqual(sequences(1 + STEPS * 2));
    const outputContexts = saved.filter((f) => f.event === "model_output").map((f) => f.json.model_call_context_id);
    const deltaContexts = new Set(frames.filter((f) => f.event === "model_output_delta").map((f) => f.json.model_call_context_id));
    // Previews are live only: the launch's call may have streamed before the stream opened, the later
    // ones (their inputs were sent after it opened) must have been previewed, all under their output's id.
    expect(outputContexts).toHaveLength(STEPS);
    for (const context of deltaContexts) expect(outputContexts).toContain(context);
    for (const context of outputContexts.slice(1)) expect(deltaContexts).toContain(context);

    // A worker killed mid-call: maintenance (its own process) reaps the lease and the other worker retries.
    provider.script({ hang: true }, { text: "finished by the other worker" });
    const before = modelCalls(provider).length;
    await send(client, project, ids[1]!, "one more");
    await providerRequests(provider, before + 1);
    // The call's claim committed before the request went out, so its lock is there: the only one now.
    const [lock] = await query<{ worker_id: string }>(databaseUrl, "SELECT worker_id FROM agent_runtime_locks");
    const victimPid = Number(lock!.worker_id.split(":")[1]);
    const victim = workers.find((w) => w.pid === victimPid)!;
    const survivor = workers.find((w) => w !== victim)!;
    victim.kill("SIGKILL");
    await exited(victim);

    const list = await untilEvents(client, project, ids[1]!, (l) => finalOutputs(l).length === STEPS + 1);
    expect(finalOutputs(list).at(-1).content_blocks).toEqual([{ type: "text", text: "finished by the other worker" }]);
    expect(list.map((e) => e.sequence)).toEqual(sequences(1 + (STEPS + 1) * 2));
    expect(modelCalls(provider)).toHaveLength(before + 2);
    const attempts = await query<{ attempt_number: number; state: string }>(
      databaseUrl,
      // Only the agent that got one more input has a turn that far.
      "SELECT c.attempt_number, c.state FROM model_call_contexts c JOIN agent_turns t ON t.id = c.turn_id " +
        "WHERE t.turn_sequence = (SELECT max(turn_sequence) FROM agent_turns) ORDER BY c.attempt_number",
    );
    expect(attempts).toEqual([
      { attempt_number: 1, state: "failed" },
      { attempt_number: 2, state: "succeeded" },
    ]);

    for (const child of [api, survivor, maintenance]) child.kill("SIGTERM");
    expect(await Promise.all([api, survivor, maintenance].map(exited))).toEqual([0, 0, 0]);
  });
});

const sequences = (count: number) => Array.from({ length: count }, (_, i) => i + 1);

/** An SSE stream of the agent's timeline from its first event, with model output previews. */
async function followFromStart(url: string, project: AgentProject, agentId: string): Promise<SseStream> {
  const stream = await SseStream.open(`${url}${project.base}/agents/${agentId}/events/stream?after_sequence=0&stream_deltas=true`, { token: project.token });
  expect(stream.status).toBe(200);
  return stream;
}

/** Frames until the saved event with sequence `last` (bounded by the stream's own wait per frame). */
async function framesThrough(stream: SseStream, last: number): Promise<SseFrame[]> {
  const frames: SseFrame[] = [];
  while (frames.at(-1)?.id !== String(last)) {
    const item = await stream.next(30_000);
    if (item.kind === "frame") frames.push(item);
  }
  return frames;
}
