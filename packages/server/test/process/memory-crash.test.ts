import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { startFakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, eventually, finalOutputs, launch, untilEvents } from "../support/agent-loop.js";
import { ApiClient } from "../support/client.js";
import { exited, freePort, ready, SVC_ENTRY } from "../support/process.js";
import { useProcessDatabases } from "../support/process-database.js";

/**
 * svc killed with SIGKILL while an agent's write_file runs (issue 31, item 2): the write is applied in the
 * transaction that records the call's result, so after the restart and the lease's expiry the call runs
 * again and the file has exactly one version from it, whatever point of the step the kill landed on.
 */

const CRASH_TEST_TIMEOUT_MS = 300_000;
const databaseEnv = useProcessDatabases("memory-crash");
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

async function startNode() {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = {
    ...(await databaseEnv()),
    PORT: String(port),
    HOST: "127.0.0.1",
    SVC_LOG_LEVEL: "error",
    SVC_PUBLIC_URL: url,
    SVC_ALLOW_PRIVATE_NETWORK: "true",
    SVC_RUNTIME_LEASE_SECONDS: "2",
    SVC_MAINTENANCE_INTERVAL_MS: "300",
    SVC_WORKER_POLL_MS: "100",
  };
  const start = (): ChildProcess => spawn(process.execPath, [...SVC_ENTRY, "serve"], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let child = start();
  onTestFinished(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGKILL");
    await exited(child);
  });
  await ready(url, child);
  return {
    api: new ApiClient(url, url),
    async crashAndRestart() {
      child.kill("SIGKILL");
      await exited(child);
      child = start();
      await ready(url, child);
    },
    async stop() {
      child.kill("SIGTERM");
      await exited(child);
    },
  };
}

describe("memory writes and crashes", () => {
  it("svc killed while write_file runs: after the restart the file has exactly one version from the call", { timeout: CRASH_TEST_TIMEOUT_MS }, async () => {
    const provider = await startFakeProvider();
    cleanups.push(() => provider.close());
    const node = await startNode();
    const { api } = node;
    const project = await agentProject(api, provider.baseUrl);
    const auth = { token: project.token };
    const store = await api.post(`${project.base}/memory-stores`, { name: "journal" }, auth);
    expect(store.status, store.text).toBe(201);
    // A file of some size keeps the write's transaction busy for a moment, so the kill may land inside it;
    // wherever it lands, the outcome must be one version.
    const big = "a line to keep\n".repeat(20_000);
    const seeded = await api.put(`${project.base}/memory-stores/${store.body.id}/memories`, { path: "log.md", content: big }, auth);
    expect(seeded.status, seeded.text).toBe(201);

    provider.script(
      { toolCalls: [{ name: "write_file", input: { path: "/memory/journal/log.md", content: "entry\n", append: true } }] },
      { text: "written" },
    );
    const configId = await createConfig(api, project, yamlConfig(project, "memory:\n  - store: journal\n"));
    const agentId = await launch(api, project, configId, "append an entry");
    const toolCalls = () => api.get(`${project.base}/agents/${agentId}/tool-calls`, auth).then((r) => r.body.data as Array<{ state: string }>);
    await eventually(toolCalls, (calls) => calls.length === 1 && ["running", "completed"].includes(calls[0]!.state), 120_000);

    await node.crashAndRestart();

    const list = await untilEvents(api, project, agentId, (e) => finalOutputs(e).length === 1);
    const results = list.filter((e) => e.event_kind === "tool_result");
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ outcome: "succeeded", content_blocks: [{ type: "structured_data", value: { path: "/memory/journal/log.md", version: 2 } }] });
    const memories = await api.get(`${project.base}/memory-stores/${store.body.id}/memories`, auth);
    const [memory] = memories.body.data;
    const versions = await api.get(`${project.base}/memory-stores/${store.body.id}/memories/${memory.id}/versions`, auth);
    expect(versions.body.data.map((v: { version: number; written_by: { kind: string } }) => [v.version, v.written_by.kind])).toEqual([
      [2, "agent"],
      [1, "user"],
    ]);
    const file = await api.get(`${project.base}/memory-stores/${store.body.id}/memories/${memory.id}`, auth);
    expect(file.body.content).toBe(`${big}entry\n`);
    await node.stop();
  });
});
