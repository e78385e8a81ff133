import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { decodeId } from "../../src/platform/ids.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, eventually, finalOutputs, send, untilEvents } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { startTestServer, useTestServer, type TestServer } from "../support/server.js";

// Every test here starts svc or svcd processes from their TypeScript sources: 3–6 s apiece on a busy CI machine.
vi.setConfig({ testTimeout: 120_000 });

/*
 * Pools that make machines, end to end: the `local` provider starts a real `svcd` child per pool machine,
 * agents get them at launch and with create_machine, and maintenance deletes them when released, idle or
 * when their pool goes.
 */

// Idle minutes last a second here, and maintenance runs often enough to see it.
const ENV = { SVC_MAINTENANCE_INTERVAL_MS: "200", SVC_MACHINE_RECONCILE_INTERVAL_MS: "200", SVC_MACHINE_IDLE_MINUTE_SECONDS: "1" };
const server = useTestServer(ENV, { worker: true, poolMachines: true });
const provider = useFakeProvider();

async function poolFor(s: TestServer, project: AgentProject, body: Record<string, unknown> = {}, grant: Record<string, unknown> = {}) {
  const pool = await s.api.post(`/api/v1/orgs/${project.orgId}/machine-pools`, { name: "sandbox", provider: "local", max_total_machines: 3, ...body }, { token: project.token });
  expect(pool.status, pool.text).toBe(201);
  const granted = await s.api.post(`${project.base}/machine-pool-grants`, { machine_pool_id: pool.body.id, ...grant }, { token: project.token });
  expect(granted.status, granted.text).toBe(201);
  return { poolId: pool.body.id as string, grantId: granted.body.id as string };
}

async function launchBare(s: TestServer, project: AgentProject, configId: string) {
  const launched = await s.api.post(`${project.base}/agents`, { config: configId }, { token: project.token });
  expect(launched.status, launched.text).toBe(201);
  return launched.body as { agent: { id: string }; machine_bindings: any[] };
}

const machine = (s: TestServer, project: AgentProject, machineId: string) => s.api.get(`/api/v1/orgs/${project.orgId}/machines/${machineId}`, { token: project.token });

const untilOnline = (s: TestServer, project: AgentProject, machineId: string) =>
  eventually(
    () => machine(s, project, machineId).then((r) => r.body),
    (m) => m.lifecycle_state === "active" && m.connection_state === "online",
  );

const untilDeleted = (s: TestServer, project: AgentProject, machineId: string) =>
  eventually(
    () => machine(s, project, machineId).then((r) => r.status),
    (status) => status === 404,
  );

/** The machine's directory under the data dir, and whether an svcd process runs with its home. */
function traces(s: TestServer, machineId: string) {
  const dir = join(s.config.dataDir, "machines", decodeId("machine", machineId)!);
  const ps = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" });
  return { dir: existsSync(dir), process: ps.includes(join(dir, "home")) };
}

async function toolResults(project: AgentProject, agentId: string, outputs: number) {
  const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === outputs);
  return list.filter((e) => e.event_kind === "tool_result");
}

describe("pools that make machines", () => {
  it("launch makes a pool machine that comes online; run_command runs on it; create_machine up to max_machines; delete_machine; archive deletes", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    await poolFor(server, project, { default_machine_env: { GREETING: "pool", FROM_POOL: "1" } }, { default_machine_env_overlay: { FROM_POOL: null } });
    const source = "machine_sources:\n  - machine_pool_name: sandbox\n    max_machines: 2\n    env_overlay:\n      GREETING: hi\n";
    const configId = await createConfig(server.api, project, yamlConfig(project, source));
    const launched = await launchBare(server, project, configId);
    expect(launched.machine_bindings).toEqual([expect.objectContaining({ binding_kind: "pool", state: "attached", machine_ref: expect.stringMatching(/^mchr-[a-z2-7]{6}$/) })]);
    const first = launched.machine_bindings[0].machine_id as string;
    const online = await untilOnline(server, project, first);
    expect(online).toMatchObject({ source_kind: "pool", provider: "local", env: { GREETING: "hi" } });
    expect(traces(server, first)).toEqual({ dir: true, process: true });

    provider.script(
      { toolCalls: [{ name: "run_command", input: { command: 'echo "$GREETING ${FROM_POOL:-unset}"' } }] },
      { toolCalls: [{ name: "create_machine", input: {} }] },
      { toolCalls: [{ name: "create_machine", input: {} }] },
      { toolCalls: [{ name: "list_machines", input: {} }] },
      { text: "done" },
    );
    const agentId = launched.agent.id;
    await send(server.api, project, agentId, "go");
    const results = await toolResults(project, agentId, 1);
    expect(results.map((r) => r.outcome)).toEqual(["succeeded", "succeeded", "failed", "succeeded"]);
    expect(results[0].content_blocks[0].value).toMatchObject({ state: "exited", output: "hi unset\n", exit_code: 0 });
    const created = results[1].content_blocks[0].value;
    expect(created).toMatchObject({ machine_id: expect.stringMatching(/^mch_/), binding_kind: "pool", executable: true, connection_state: "online" });
    expect(results[2].content_blocks[0].text).toContain("max_machines");
    const listed = results[3].content_blocks[0].value;
    expect(listed.next_cursor).toBeNull();
    expect(listed.machines.map((m: any) => [m.machine_id, m.source_kind, m.binding_kind, m.executable])).toEqual([
      [first, "pool", "pool", true],
      [created.machine_id, "pool", "pool", true],
    ]);

    provider.script({ toolCalls: [{ name: "delete_machine", input: { machine_id: created.machine_id } }] }, { text: "deleted" });
    await send(server.api, project, agentId, "delete it");
    const afterDelete = await toolResults(project, agentId, 2);
    expect(afterDelete.at(-1)!.content_blocks[0].value).toMatchObject({ machine_id: created.machine_id, deleted: true });
    await untilDeleted(server, project, created.machine_id);
    await eventually(async () => traces(server, created.machine_id), (t) => !t.dir && !t.process);

    const archived = await server.api.post(`${project.base}/agents/${agentId}/archive`, undefined, { token: project.token });
    expect(archived.status, archived.text).toBe(200);
    await untilDeleted(server, project, first);
    await eventually(async () => traces(server, first), (t) => !t.dir && !t.process);
  });

  it("deleting the pool deletes its machines", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const { poolId } = await poolFor(server, project);
    const configId = await createConfig(server.api, project, yamlConfig(project, "machine_sources:\n  - machine_pool_name: sandbox\n"));
    const machineId = (await launchBare(server, project, configId)).machine_bindings[0].machine_id as string;
    await untilOnline(server, project, machineId);
    const deleted = await server.api.delete(`/api/v1/orgs/${project.orgId}/machine-pools/${poolId}`, { token: project.token });
    expect(deleted.status, deleted.text).toBe(204);
    await untilDeleted(server, project, machineId);
    await eventually(async () => traces(server, machineId), (t) => !t.dir && !t.process);
  });

  it("deletes a machine idle past its period (5 minutes of 1 s here)", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    await poolFor(server, project, { delete_after_idle_minutes: 30 }, { delete_after_idle_minutes: 5 });
    const configId = await createConfig(server.api, project, yamlConfig(project, "machine_sources:\n  - machine_pool_name: sandbox\n"));
    const launched = await launchBare(server, project, configId);
    const machineId = launched.machine_bindings[0].machine_id as string;
    await untilOnline(server, project, machineId);
    await untilDeleted(server, project, machineId);
    await eventually(async () => traces(server, machineId), (t) => !t.dir && !t.process);
  });

  it("names pools that are not granted, and limits beyond the grant's, with line and column; launch checks again", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const { grantId } = await poolFor(server, project, {}, { max_total_machines: 2 });
    const bad = yamlConfig(project, "machine_sources:\n  - machine_pool_name: nowhere\n  - machine_pool_name: sandbox\n    max_machines: 3\n    machine_name: x\n");
    const refused = await server.api.post(`${project.base}/agent-configs`, { source: bad, source_format: "yaml" }, { token: project.token });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.issues).toEqual([
      { path: "/machine_sources/1/machine_pool_name", message: expect.stringContaining("not both"), line: 8, column: 5 },
      { path: "/machine_sources/0/machine_pool_name", message: 'no machine pool named "nowhere" is granted to this project', line: 7, column: 24 },
    ]);
    const tooMany = yamlConfig(project, "machine_sources:\n  - machine_pool_name: sandbox\n    max_machines: 3\n");
    const limited = await server.api.post(`${project.base}/agent-configs`, { source: tooMany, source_format: "yaml" }, { token: project.token });
    expect(limited.status, limited.text).toBe(400);
    expect(limited.body.issues).toEqual([{ path: "/machine_sources/0/max_machines", message: expect.stringContaining("2 machines"), line: 8, column: 19 }]);

    const configId = await createConfig(server.api, project, yamlConfig(project, "machine_sources:\n  - machine_pool_name: sandbox\n    initial_num_machines: 0\n"));
    const revoked = await server.api.delete(`${project.base}/machine-pool-grants/${grantId}`, { token: project.token });
    expect(revoked.status, revoked.text).toBe(204);
    const launch = await server.api.post(`${project.base}/agents`, { config: configId }, { token: project.token });
    expect(launch.status, launch.text).toBe(400);
    expect(launch.body.issues).toEqual([{ path: "/machine_sources/0/machine_pool_name", message: expect.stringContaining("no longer granted"), line: 7, column: 24 }]);
  });

  it("stops every svcd child when svc shuts down", async () => {
    const own = await startTestServer(ENV, { worker: true, poolMachines: true });
    let machineId = "";
    try {
      const project = await agentProject(own.api, provider.baseUrl);
      await poolFor(own, project);
      const configId = await createConfig(own.api, project, yamlConfig(project, "machine_sources:\n  - machine_pool_name: sandbox\n"));
      machineId = (await launchBare(own, project, configId)).machine_bindings[0].machine_id as string;
      await untilOnline(own, project, machineId);
      expect(traces(own, machineId).process).toBe(true);
    } finally {
      const dataDir = own.config.dataDir;
      await own.close();
      const home = join(dataDir, "machines", decodeId("machine", machineId)!, "home");
      expect(execFileSync("ps", ["-eo", "args"], { encoding: "utf8" })).not.toContain(home);
    }
  });
});
