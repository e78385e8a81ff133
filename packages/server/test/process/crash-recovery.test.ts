import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { startFakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, eventually, finalOutputs, launch, modelCalls, providerRequests, untilEvents } from "../support/agent-loop.js";
import { startFakeMcpServer } from "../support/fake-mcp.js";
import { ApiClient } from "../support/client.js";
import { exited, freePort, ready, SVC_ENTRY } from "../support/process.js";
import { useProcessDatabases } from "../support/process-database.js";
import { connectMachine, startDaemon, untilConnection } from "../support/daemon.js";

/** Up to four svc starts and a lease's expiry each: on a loaded 2-core machine one start alone took 36 s. */
const CRASH_TEST_TIMEOUT_MS = 300_000;
const databaseEnv = useProcessDatabases("crash");
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

function svc(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [...SVC_ENTRY, "serve"], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
}

/**
 * One `svc serve` child on a fresh database and port, with a short lease so maintenance reaps quickly.
 * `crashAndRestart` kills it with SIGKILL and starts a new one on the same database.
 */
async function startNode() {
  const { url, env } = await serveEnv();
  let child = svc(env);
  // Ended with its test, passed or not: the next test's svc takes the same embedded data directory.
  onTestFinished(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGKILL");
    await exited(child);
  });
  await ready(url, child);
  return {
    url,
    api: new ApiClient(url, url),
    async crashAndRestart() {
      child.kill("SIGKILL");
      await exited(child);
      child = svc(env);
      await ready(url, child);
    },
    async stop() {
      child.kill("SIGTERM");
      await exited(child);
    },
  };
}

async function serveEnv(): Promise<{ url: string; env: Record<string, string> }> {
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
  return { url, env };
}

describe("crash recovery", () => {
  it("a worker killed mid-call loses nothing: after its lease runs out the call is retried as attempt 2", { timeout: CRASH_TEST_TIMEOUT_MS }, async () => {
    const provider = await startFakeProvider();
    cleanups.push(() => provider.close());
    const node = await startNode();
    const { api } = node;
    const project = await agentProject(api, provider.baseUrl);
    provider.script({ hang: true }, { text: "finished by the next worker" });
    const agentId = await launch(api, project, await createConfig(api, project, yamlConfig(project)), "do the thing");
    await providerRequests(provider, 1);

    await node.crashAndRestart();

    const list = await untilEvents(api, project, agentId, (e) => finalOutputs(e).length === 1);
    expect(list.map((e) => e.sequence)).toEqual([1, 2, 3]);
    expect(list.filter((e) => e.event_kind === "model_output")).toHaveLength(1);
    expect(finalOutputs(list)[0].content_blocks).toEqual([{ type: "text", text: "finished by the next worker" }]);
    expect(modelCalls(provider)).toHaveLength(2);
    await node.stop();
  });

  it("a worker killed during an MCP call loses nothing: the call runs again and its result is recorded once", { timeout: CRASH_TEST_TIMEOUT_MS }, async () => {
    const provider = await startFakeProvider();
    const mcp = await startFakeMcpServer();
    cleanups.push(() => provider.close(), () => mcp.close());
    const node = await startNode();
    const { api } = node;
    const project = await agentProject(api, provider.baseUrl);
    provider.script({ toolCalls: [{ name: "mcp__docs__greet", input: { name: "Dee" } }] }, { text: "greeted" });
    mcp.hangCalls(1);
    const config = yamlConfig(project, `mcp:\n  docs:\n    url: ${mcp.url}\n    permission: {mode: always_allow}\n`);
    const agentId = await launch(api, project, await createConfig(api, project, config), "greet Dee");
    await eventually(async () => mcp.calls().length, (n) => n === 1);

    await node.crashAndRestart();

    const list = await untilEvents(api, project, agentId, (e) => finalOutputs(e).length === 1);
    expect(list.map((e) => [e.sequence, e.event_kind])).toEqual([
      [1, "agent_input"],
      [2, "agent_input"],
      [3, "model_output"],
      [4, "tool_result"],
      [5, "model_output"],
    ]);
    expect(list[3]).toMatchObject({ outcome: "succeeded", content_blocks: [{ type: "text", text: "Hello, Dee!" }] });
    expect(mcp.calls().map((c) => c.tool)).toEqual(["greet", "greet"]);
    expect(modelCalls(provider)).toHaveLength(2);
    await node.stop();
  });

  it("crashes mid-turn several times and loses or repeats no input: every one answered once, the timeline dense", { timeout: CRASH_TEST_TIMEOUT_MS }, async () => {
    const provider = await startFakeProvider();
    cleanups.push(() => provider.close());
    const node = await startNode();
    const { api } = node;
    const project = await agentProject(api, provider.baseUrl);
    // Each round makes the next model call hang, waits for it, and kills svc while it is in flight; after
    // the last round the fake provider answers every call with "echo: <the input>".
    provider.script({ hang: true });
    const agentId = await launch(api, project, await createConfig(api, project, yamlConfig(project)), "input 0");
    for (let i = 1; i <= 3; i++) {
      const reply = await api.post(`${project.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "text", text: `input ${i}` }] }, { token: project.token });
      expect(reply.status, reply.text).toBe(201);
    }
    for (let round = 1; round <= 3; round++) {
      await providerRequests(provider, round);
      if (round < 3) provider.script({ hang: true });
      await node.crashAndRestart();
    }

    const list = await untilEvents(api, project, agentId, (e) => finalOutputs(e).length === 4);
    expect(list.map((e) => e.sequence)).toEqual(list.map((_e, i) => i + 1));
    const inputs = list.filter((e) => e.event_kind === "agent_input" && e.input_kind === "content").map((e) => e.content_blocks[0].text);
    expect(inputs).toEqual(["input 0", "input 1", "input 2", "input 3"]);
    expect(finalOutputs(list).map((e) => e.content_blocks[0].text)).toEqual(["echo: input 0", "echo: input 1", "echo: input 2", "echo: input 3"]);
    const backlog = await api.get(`${project.base}/agents/${agentId}/inputs/backlog`, { token: project.token });
    expect(backlog.body.data).toEqual([]);
    await node.stop();
  });
  it("svc killed during a command loses nothing: svcd reconnects to the restarted svc and the result is recorded once", { timeout: CRASH_TEST_TIMEOUT_MS }, async () => {
    const provider = await startFakeProvider();
    cleanups.push(() => provider.close());
    const node = await startNode();
    const project = await agentProject(node.api, provider.baseUrl);
    const machine = await connectMachine(node.api, project.token, project.orgId, project.projectId, "survivor");
    const home = mkdtempSync(join(tmpdir(), "svcd-home-"));
    const work = mkdtempSync(join(tmpdir(), "svcd-work-"));
    cleanups.push(async () => rmSync(home, { recursive: true, force: true }), async () => rmSync(work, { recursive: true, force: true }));
    const daemon = startDaemon(node.url, machine.daemonToken, home);
    cleanups.push(async () => {
      daemon.child.kill("SIGKILL");
      await daemon.exited;
    });
    await untilConnection(node.api, project.token, project.orgId, machine.machineId, "online");
    const configId = await createConfig(node.api, project, yamlConfig(project, `machine_sources:\n  - machine_name: survivor\n    cwd: ${work}\n`));
    provider.script({ toolCalls: [{ name: "run_command", input: { command: "echo started >> runs.log; sleep 2; echo late" } }] }, { text: "done" });
    const agentId = await launch(node.api, project, configId, "go");
    await eventually(async () => existsSync(join(work, "runs.log")), (started) => started);
    await node.crashAndRestart();
    const list = await untilEvents(node.api, project, agentId, (e) => finalOutputs(e).length === 1);
    const results = list.filter((e) => e.event_kind === "tool_result");
    expect(results, daemon.output()).toHaveLength(1);
    expect(results[0].content_blocks[0].value).toMatchObject({ state: "exited", output: "late\n", exit_code: 0 });
    expect(readFileSync(join(work, "runs.log"), "utf8")).toBe("started\n");
  });
});
