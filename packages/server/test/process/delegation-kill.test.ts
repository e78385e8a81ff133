import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { startFakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, finalOutputs, launch, modelCalls, providerRequests, untilEvents } from "../support/agent-loop.js";
import { ApiClient } from "../support/client.js";
import { exited, freePort, ready, SVC_ENTRY } from "../support/process.js";
import { useProcessDatabases } from "../support/process-database.js";

/*
 * kill -9 during a delegation (docs/delegation.md, "Exactly once"): svc dies while a coordinator waits on
 * its delegate's model call. After the restart there is exactly one child, the child's call is retried,
 * and the coordinator, which held no worker meanwhile, finishes with the child's answer.
 */

/** Two svc starts and a lease's expiry: on a loaded 2-core machine one start alone took 36 s. */
const TEST_TIMEOUT_MS = 300_000;
const databaseEnv = useProcessDatabases("delegation-kill");
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

function svc(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [...SVC_ENTRY, "serve"], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
}

describe("delegation across kill -9", () => {
  it("leaves exactly one child, retries its call, and the waiting coordinator finishes with its answer", { timeout: TEST_TIMEOUT_MS }, async () => {
    const provider = await startFakeProvider();
    cleanups.push(() => provider.close());
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
    let child = svc(env);
    onTestFinished(async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGKILL");
      await exited(child);
    });
    await ready(url, child);
    const api = new ApiClient(url, url);
    const project = await agentProject(api, provider.baseUrl);
    const auth = { token: project.token };
    const helperConfig = await createConfig(api, project, yamlConfig(project));
    expect((await api.post(`${project.base}/agent-profiles`, { name: "helper", config: helperConfig }, auth)).status).toBe(201);
    const coordinatorConfig = await createConfig(api, project, yamlConfig(project, "delegates:\n  helper:\n    profile: helper\n    description: Does the work.\n"));

    // The coordinator delegates; the child's first call never answers; its retry does.
    provider.script({ toolCalls: [{ name: "delegate", input: { to: "helper", message: "do the work" } }] }, { hang: true }, { text: "the work is done" });
    const coordinatorId = await launch(api, project, coordinatorConfig, "start");
    await providerRequests(provider, 2);

    child.kill("SIGKILL");
    await exited(child);
    child = svc(env);
    await ready(url, child);

    const list = await untilEvents(api, project, coordinatorId, (e) => finalOutputs(e).length === 1);
    expect(finalOutputs(list)[0].content_blocks).toEqual([{ type: "text", text: "tool delegate said: the work is done" }]);
    expect(list.filter((e) => e.event_kind === "tool_result")).toHaveLength(1);
    expect(list.map((e) => e.sequence)).toEqual(list.map((_, i) => i + 1));
    const children = await api.get(`${project.base}/agents?parent_agent_id=${coordinatorId}`, auth);
    expect(children.body.data).toHaveLength(1);
    expect(children.body.data[0]).toMatchObject({ parent_agent_id: coordinatorId, root_agent_id: coordinatorId });
    // The coordinator once, the child twice (the killed call and its retry), the coordinator again.
    expect(modelCalls(provider)).toHaveLength(4);
    child.kill("SIGTERM");
    await exited(child);
  });
});
