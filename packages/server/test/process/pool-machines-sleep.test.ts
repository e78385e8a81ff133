import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { decodeId } from "../../src/platform/ids.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, eventually, events, finalOutputs, send } from "../support/agent-loop.js";
import { connectMachine, startDaemon, tempDir, untilConnection, type Daemon } from "../support/daemon.js";
import { SVCD_ENTRY } from "../support/process.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { startTestServer, useTestServer, type TestServer } from "../support/server.js";

// Every test here starts svc or svcd processes from their TypeScript sources: 3–6 s apiece on a busy CI machine.
vi.setConfig({ testTimeout: 120_000 });

/*
 * Pool machines that sleep and wake, and the ways their agents lose them, end to end with real `svcd`
 * children of the `local` provider: a machine idle for its sleep period is put to sleep (its svcd stopped,
 * `connection_state: asleep`) and woken by run_command or a process tool, on the same home and working
 * directory; a connected machine never sleeps. A config change that drops the pool source, and deleting the
 * pool grant, delete the machines; a run_command on a machine still provisioning waits for it.
 */

/** Each test waits on real daemons starting, sleeping and waking. */
const LONG = 120_000;

const ENV = { SVC_MAINTENANCE_INTERVAL_MS: "200", SVC_MACHINE_RECONCILE_INTERVAL_MS: "200", SVC_MACHINE_SLEEP_AFTER_IDLE_SECONDS: "2" };
const server = useTestServer(ENV, { worker: true, poolMachines: true });
const provider = useFakeProvider();

type Call = { name: string; input: Record<string, unknown> };

async function poolFor(s: TestServer, project: AgentProject) {
  const pool = await s.api.post(`/api/v1/orgs/${project.orgId}/machine-pools`, { name: "sandbox", provider: "local", max_total_machines: 3 }, { token: project.token });
  expect(pool.status, pool.text).toBe(201);
  const granted = await s.api.post(`${project.base}/machine-pool-grants`, { machine_pool_id: pool.body.id }, { token: project.token });
  expect(granted.status, granted.text).toBe(201);
  return { poolId: pool.body.id as string, grantId: granted.body.id as string };
}

const POOL_SOURCE = "machine_sources:\n  - machine_pool_name: sandbox\n    env_overlay:\n      GREETING: hi\n";

/** An agent launched on a config with the pool source, with no message; its id and its pool machine's. */
async function launchOnPool(s: TestServer, project: AgentProject, message?: string) {
  const configId = await createConfig(s.api, project, yamlConfig(project, POOL_SOURCE));
  const launched = await s.api.post(`${project.base}/agents`, { config: configId, ...(message ? { message } : {}) }, { token: project.token });
  expect(launched.status, launched.text).toBe(201);
  return { agentId: launched.body.agent.id as string, machineId: launched.body.machine_bindings[0].machine_id as string };
}

const machine = (s: TestServer, project: AgentProject, machineId: string) => s.api.get(`/api/v1/orgs/${project.orgId}/machines/${machineId}`, { token: project.token });

const untilMachine = (s: TestServer, project: AgentProject, machineId: string, check: (m: any) => boolean) =>
  eventually(() => machine(s, project, machineId).then((r) => r.body), check);

const untilDeleted = (s: TestServer, project: AgentProject, machineId: string) =>
  eventually(
    () => machine(s, project, machineId).then((r) => r.status),
    (status) => status === 404,
  );

/** The machine's directory under the data dir, and whether a process runs with it in its command line. */
function traces(s: TestServer, machineId: string) {
  const dir = join(s.config.dataDir, "machines", decodeId("machine", machineId)!);
  const ps = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" });
  return { dir: existsSync(dir), process: ps.includes(join(dir, "home")) };
}

const toolResults = (list: any[]) => list.filter((e) => e.event_kind === "tool_result");
const value = (result: any) => result.content_blocks[0].value;

/** One more turn whose model makes `call`; its tool result. */
async function turn(s: TestServer, project: AgentProject, agentId: string, call: Call): Promise<any> {
  const before = await events(s.api, project, agentId);
  provider.script({ toolCalls: [call] }, { text: "ok" });
  await send(s.api, project, agentId, "next");
  const list = await eventually(() => events(s.api, project, agentId), (e) => finalOutputs(e).length === finalOutputs(before).length + 1);
  return toolResults(list)[toolResults(before).length];
}

const asleep = (m: any) => m.lifecycle_state === "active" && m.connection_state === "asleep";
const online = (m: any) => m.lifecycle_state === "active" && m.connection_state === "online";

describe("pool machines sleep and wake", () => {
  const byo: { daemon?: Daemon; home?: string } = {};
  afterAll(async () => {
    byo.daemon?.child.kill("SIGKILL");
    await byo.daemon?.exited;
    if (byo.home) rmSync(byo.home, { recursive: true, force: true });
  });

  it("an idle pool machine sleeps; run_command and read_process wake it on the same home and files; a connected machine stays awake", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const connected = await connectMachine(server.api, project.token, project.orgId, project.projectId, "laptop");
    byo.home = tempDir("svcd-byo-");
    byo.daemon = startDaemon(server.url, connected.daemonToken, byo.home);
    await untilConnection(server.api, project.token, project.orgId, connected.machineId, "online");

    await poolFor(server, project);
    const { agentId, machineId } = await launchOnPool(server, project);
    await untilMachine(server, project, machineId, online);
    const slept = await untilMachine(server, project, machineId, asleep);
    expect(slept.lifecycle_state).toBe("active");
    await eventually(async () => traces(server, machineId), (t) => t.dir && !t.process);
    // Idle for as long, the connected machine is still online: svc cannot wake it, so it never sleeps.
    expect((await machine(server, project, connected.machineId)).body.connection_state).toBe("online");

    const inspected = value(await turn(server, project, agentId, { name: "inspect_machine", input: {} }));
    expect(inspected).toMatchObject({ machine_id: machineId, connection_state: "asleep", executable: true });

    const ran = await turn(server, project, agentId, { name: "run_command", input: { command: 'echo "$GREETING" > kept.txt; echo woke' } });
    expect(ran.outcome, JSON.stringify(ran.content_blocks)).toBe("succeeded");
    expect(value(ran)).toMatchObject({ state: "exited", output: "woke\n", exit_code: 0 });
    const processId = value(ran).process_id as string;

    await untilMachine(server, project, machineId, asleep);
    await eventually(async () => traces(server, machineId), (t) => !t.process);
    // The daemon's journal is in its home, which sleeping kept: the finished process's output is still there.
    const read = await turn(server, project, agentId, { name: "read_process", input: { process_id: processId } });
    expect(read.outcome, JSON.stringify(read.content_blocks)).toBe("succeeded");
    expect(value(read)).toMatchObject({ process_id: processId, state: "exited", done: true, output: "woke\n" });

    await untilMachine(server, project, machineId, asleep);
    const files = await turn(server, project, agentId, { name: "run_command", input: { command: "cat kept.txt" } });
    expect(value(files)).toMatchObject({ state: "exited", output: "hi\n" });
  }, LONG);

  it("a config change that drops the pool source deletes the agent's machines from it", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    await poolFor(server, project);
    const { agentId, machineId } = await launchOnPool(server, project);
    await untilMachine(server, project, machineId, (m) => m.lifecycle_state === "active");

    provider.script({ text: "changed" });
    const changed = await server.api.post(`${project.base}/agents/${agentId}/config`, { source: yamlConfig(project), source_format: "yaml" }, { token: project.token });
    expect(changed.status, changed.text).toBe(200);
    await untilDeleted(server, project, machineId);
    await eventually(async () => traces(server, machineId), (t) => !t.dir && !t.process);
  }, LONG);
});

/*
 * A server whose pool machines' daemons wait for a gate file in their machine directory before starting:
 * until the test opens it, a machine stays `provisioning`, deterministically.
 */
describe("work queued on a provisioning pool machine", () => {
  let gated: TestServer;
  beforeAll(async () => {
    // `open` lets the daemon start; `fail` makes each start fail, as a broken image would.
    const script =
      `while [ ! -e "$5/../open" ]; do if [ -e "$5/../fail" ]; then echo "no daemon here"; exit 1; fi; sleep 0.1; done; ` +
      `exec "${process.execPath}" ${SVCD_ENTRY.map((arg) => `"${arg}"`).join(" ")} "$@"`;
    // Unsandboxed: the sandbox binds back what the daemon command's arguments name under hidden directories
    // (a checkout under /tmp), and this command names node, tsx and svcd only inside its script.
    gated = await startTestServer(
      {
        ...ENV,
        SVC_MACHINE_PROVISION_TIMEOUT_SECONDS: "600",
        SVC_LOCAL_DAEMON_COMMAND: JSON.stringify(["sh", "-c", script, "sh"]),
        SVC_LOCAL_MACHINE_ISOLATION: "none",
      },
      { worker: true, poolMachines: true },
    );
  });
  afterAll(() => gated?.close());

  const gate = (machineId: string, name: "open" | "fail") => {
    const dir = join(gated.config.dataDir, "machines", decodeId("machine", machineId)!);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, name), "");
  };

  /** Launches with a run_command turn and waits until the model asked for it; the call stays waiting. */
  async function queuedRun(project: AgentProject) {
    const { grantId } = await poolFor(gated, project);
    provider.script({ toolCalls: [{ name: "run_command", input: { command: "echo ran" } }] }, { text: "done" });
    const launched = await launchOnPool(gated, project, "go");
    await eventually(() => events(gated.api, project, launched.agentId), (list) => list.some((e) => e.event_kind === "model_output" && e.stop_reason === "tool_use"));
    const { body } = await machine(gated, project, launched.machineId);
    expect(body.lifecycle_state).toBe("provisioning");
    return { ...launched, grantId };
  }

  it("run_command on a machine still provisioning waits for it, then runs", async () => {
    const project = await agentProject(gated.api, provider.baseUrl);
    const { agentId, machineId } = await queuedRun(project);
    // The call is waiting on the queued process, not failed: no result yet, and the machine is not up.
    expect(toolResults(await events(gated.api, project, agentId))).toEqual([]);
    gate(machineId, "open");
    const list = await eventually(() => events(gated.api, project, agentId), (e) => finalOutputs(e).length === 1);
    const [result] = toolResults(list);
    expect(result.outcome, JSON.stringify(result.content_blocks)).toBe("succeeded");
    expect(value(result)).toMatchObject({ state: "exited", output: "ran\n" });
    await untilMachine(gated, project, machineId, (m) => m.lifecycle_state === "active");
  }, LONG);

  it("canceling the agent ends the process queued on a provisioning machine: list_processes no longer shows it", async () => {
    const project = await agentProject(gated.api, provider.baseUrl);
    const { agentId } = await queuedRun(project);
    const canceled = await gated.api.post(`${project.base}/agents/${agentId}/cancel`, undefined, { token: project.token });
    expect(canceled.status, canceled.text).toBe(200);
    // The canceled turn never asked for its scripted "done": the next turn lists the agent's processes instead.
    provider.reset();
    provider.script({ toolCalls: [{ name: "list_processes", input: {} }] }, { text: "listed" });
    await send(gated.api, project, agentId, "what runs?");
    // The canceled run_command's result, then list_processes'.
    const list = await eventually(() => events(gated.api, project, agentId), (e) => toolResults(e).length === 2);
    const listed = toolResults(list).at(-1);
    expect(listed.outcome, JSON.stringify(listed.content_blocks)).toBe("succeeded");
    expect(value(listed)).toMatchObject({ processes: [] });
  }, LONG);

  it("a machine that fails to provision fails the run_command queued on it with the daemon's output", async () => {
    const project = await agentProject(gated.api, provider.baseUrl);
    const { agentId, machineId } = await queuedRun(project);
    gate(machineId, "fail");
    const list = await eventually(() => events(gated.api, project, agentId), (e) => finalOutputs(e).length === 1);
    const [result] = toolResults(list);
    expect(result.outcome).toBe("failed");
    expect(JSON.stringify(result.content_blocks)).toContain("provision_failed");
    expect(JSON.stringify(result.content_blocks)).toContain("no daemon here");
    await untilMachine(gated, project, machineId, (m) => m.lifecycle_state === "provision_failed");
  }, LONG);

  it("deleting the pool grant deletes the machines made through it and fails the calls waiting on them", async () => {
    const project = await agentProject(gated.api, provider.baseUrl);
    const { agentId, machineId, grantId } = await queuedRun(project);
    const deleted = await gated.api.delete(`${project.base}/machine-pool-grants/${grantId}`, { token: project.token });
    expect(deleted.status, deleted.text).toBe(204);
    const list = await eventually(() => events(gated.api, project, agentId), (e) => finalOutputs(e).length === 1);
    const [result] = toolResults(list);
    expect(result.outcome).toBe("failed");
    expect(JSON.stringify(result.content_blocks)).toContain("the pool grant the machine was made through was deleted");
    await untilDeleted(gated, project, machineId);
    await eventually(async () => traces(gated, machineId), (t) => !t.dir && !t.process);
  }, LONG);
});
