import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, eventually, events, finalOutputs, launch, untilEvents } from "../support/agent-loop.js";
import { connectMachine, startDaemon, untilConnection, useDaemons } from "../support/daemon.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";

// Every test here starts svc or svcd processes from their TypeScript sources: 3–6 s apiece on a busy CI machine.
vi.setConfig({ testTimeout: 120_000 });

/*
 * The machine daemon end to end: a real `svcd` process connected to svc over HTTP and WebSocket, an agent
 * whose (fake) model calls run_command, and the daemon's crash and credential rules.
 */

// A short grace period for machines that go offline, and maintenance often enough to apply it.
const server = useTestServer({ SVC_MACHINE_GRACE_SECONDS: "1", SVC_MAINTENANCE_INTERVAL_MS: "200" }, { worker: true });
const provider = useFakeProvider();

const { dir, daemon } = useDaemons(server);

/** A project, a machine granted to it with a daemon connected, and a working directory on it. */
async function connected(name: string) {
  const project = await agentProject(server.api, provider.baseUrl);
  const machine = await connectMachine(server.api, project.token, project.orgId, project.projectId, name);
  const home = dir("svcd-home-");
  const work = dir("svcd-work-");
  const running = daemon(machine.daemonToken, home);
  await untilConnection(server.api, project.token, project.orgId, machine.machineId, "online");
  return { project, machine, home, work, daemon: running };
}

const machineYaml = (name: string, cwd: string, tools = "") => `${tools}machine_sources:\n  - machine_name: ${name}\n    cwd: ${cwd}\n    env_overlay:\n      GREETING: hi\n`;

/** The journals of processes whose end svc has recorded (kept by svcd so read_process can still read them). */
function finishedJournals(home: string): Array<Record<string, unknown>> {
  return readdirSync(join(home, "processes"))
    .map((name) => JSON.parse(readFileSync(join(home, "processes", name, "journal.json"), "utf8")) as Record<string, unknown>)
    .filter((journal) => journal["finished_at"] !== undefined);
}

async function toolResults(project: AgentProject, agentId: string, count = 1) {
  const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
  const results = list.filter((e) => e.event_kind === "tool_result");
  expect(results).toHaveLength(count);
  return results;
}

describe("svcd", () => {
  it("connects: the machine reads online within seconds, and offline once SIGTERM ended its runtime", async () => {
    const { project, machine, daemon: running } = await connected("laptop");
    running.child.kill("SIGTERM");
    expect(await running.exited, running.output()).toBe(0);
    await untilConnection(server.api, project.token, project.orgId, machine.machineId, "offline");
  });

  it("exits non-zero when its token is revoked, and the machine goes offline", async () => {
    const { project, machine, daemon: running } = await connected("revoked");
    const revoke = await server.api.post(`/api/v1/orgs/${project.orgId}/machines/${machine.machineId}/daemon-tokens/${machine.tokenId}/revoke`, undefined, { token: project.token });
    expect(revoke.status, revoke.text).toBe(200);
    expect(await running.exited, running.output()).toBe(3);
    await untilConnection(server.api, project.token, project.orgId, machine.machineId, "offline");
    // Started again with the revoked token, it stops at once.
    const again = daemon(machine.daemonToken, dir("svcd-home-"));
    expect(await again.exited, again.output()).toBe(3);
  });

  it("refuses a second svcd on its home, naming the first, which stays online; a lock left by a killed svcd is taken over", async () => {
    const { project, machine, home, daemon: first } = await connected("locked");
    const second = daemon(machine.daemonToken, home);
    expect(await second.exited, second.output()).toBe(4);
    expect(second.output()).toContain(`another svcd (pid ${first.child.pid}) is running on the home ${home}`);
    expect(first.child.exitCode, first.output()).toBeNull();
    expect(readFileSync(join(home, "svcd.lock"), "utf8")).toBe(String(first.child.pid));

    // Killed, it leaves its lock behind; the next svcd on the home finds its pid dead and connects.
    first.child.kill("SIGKILL");
    await first.exited;
    expect(readFileSync(join(home, "svcd.lock"), "utf8")).toBe(String(first.child.pid));
    const third = daemon(machine.daemonToken, home);
    await eventually(async () => third.output(), (output) => output.includes("connected as runtime"));
    expect(readFileSync(join(home, "svcd.lock"), "utf8")).toBe(String(third.child.pid));
    await untilConnection(server.api, project.token, project.orgId, machine.machineId, "online");
  });

  it("passes no credential to its commands", async () => {
    const { project, work } = await connected("scrubbed");
    const configId = await createConfig(server.api, project, yamlConfig(project, machineYaml("scrubbed", work)));
    provider.script({ toolCalls: [{ name: "run_command", input: { command: "env | grep -c -e SVC_DAEMON_TOKEN -e svc_daemon_v1_" } }] }, { text: "done" });
    const [result] = await toolResults(project, await launch(server.api, project, configId, "env"));
    expect(result.content_blocks[0].value.output).toBe("0\n");
  });

  it("takes no token in its arguments", async () => {
    const { machine } = await connected("no-argv");
    const refused = startDaemon(server.url, machine.daemonToken, dir("svcd-home-"), ["--token", machine.daemonToken]);
    expect(await refused.exited, refused.output()).toBe(2);
    expect(refused.output()).toContain("Unknown option '--token'");
  });
});

describe("machine_sources and run_command", () => {
  it("names unknown and ungranted machines in a config with line and column", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const other = await agentProject(server.api, provider.baseUrl);
    await connectMachine(server.api, other.token, other.orgId, other.projectId, "elsewhere");
    const source = yamlConfig(project, "machine_sources:\n  - machine_name: nowhere\n  - machine_name: elsewhere\n  - machine_pool_name: pool\n");
    const refused = await server.api.post(`${project.base}/agent-configs`, { source, source_format: "yaml" }, { token: project.token });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.issues).toEqual([
      { path: "/machine_sources/0/machine_name", message: 'no connected machine named "nowhere" is granted to this project', line: 7, column: 19 },
      { path: "/machine_sources/1/machine_name", message: 'no connected machine named "elsewhere" is granted to this project', line: 8, column: 19 },
      { path: "/machine_sources/2/machine_pool_name", message: 'no machine pool named "pool" is granted to this project', line: 9, column: 24 },
    ]);
  });

  it("runs echo on the machine and returns its output; the launch shows the binding", async () => {
    const { project, machine, work } = await connected("builder");
    const configId = await createConfig(server.api, project, yamlConfig(project, machineYaml("builder", work)));
    provider.script({ toolCalls: [{ name: "run_command", input: { command: "echo hi; echo $GREETING from $(pwd) >&2" } }] }, { text: "done" });
    const launched = await server.api.post(`${project.base}/agents`, { config: configId, message: "say hi" }, { token: project.token });
    expect(launched.status, launched.text).toBe(201);
    expect(launched.body.machine_bindings).toEqual([
      expect.objectContaining({ id: expect.stringMatching(/^amb_/), machine_id: machine.machineId, machine_ref: expect.stringMatching(/^mchr-[a-z2-7]{6}$/), binding_kind: "explicit", state: "attached", cwd: work }),
    ]);
    const [result] = await toolResults(project, launched.body.agent.id);
    expect(result.outcome, JSON.stringify(result.content_blocks)).toBe("succeeded");
    expect(result.content_blocks[0].value).toMatchObject({ state: "exited", command: "echo hi; echo $GREETING from $(pwd) >&2", output: "hi\n", stderr: `hi from ${work}\n`, done: true, exit_code: 0, cursor: 3 });
    expect(result.content_blocks[0].value.process_id).toMatch(/^prc_[a-z2-7]{26}$/);
  });

  it("runs commands one after another over one connection, each offered once", async () => {
    const { project, work } = await connected("busy");
    const configId = await createConfig(server.api, project, yamlConfig(project, machineYaml("busy", work)));
    const step = (n: number) => ({ toolCalls: [{ name: "run_command", input: { command: `echo ${n} >> steps; cat steps | wc -l` } }] });
    provider.script(step(1), step(2), step(3), { text: "done" });
    const agentId = await launch(server.api, project, configId, "go");
    const results = await toolResults(project, agentId, 3);
    expect(results.map((r) => r.content_blocks[0].value.output.trim())).toEqual(["1", "2", "3"]);
  });

  it("saves a result over 50 KiB as an artifact and returns an 8 KiB preview of each stream", async () => {
    const { project, work } = await connected("chatty");
    const configId = await createConfig(server.api, project, yamlConfig(project, machineYaml("chatty", work)));
    provider.script({ toolCalls: [{ name: "run_command", input: { command: "head -c 70000 /dev/zero | tr '\\0' a" } }] }, { text: "done" });
    const agentId = await launch(server.api, project, configId, "go");
    const [result] = await toolResults(project, agentId);
    const [marker, ref] = result.content_blocks;
    expect(marker.value).toMatchObject({ state: "exited", exit_code: 0, cursor: 70_000, truncated: true, output: "a".repeat(8192), artifact: { path: `/artifacts/${ref.artifact_id}`, content_type: "text/plain" } });
    expect(ref).toMatchObject({ type: "media_ref", artifact_id: expect.stringMatching(/^art_/) });
    const content = await fetch(`${server.url}${project.base}/agents/${agentId}/artifacts/${ref.artifact_id}/content`, { headers: { authorization: `Bearer ${project.token}` } });
    expect(content.status).toBe(200);
    expect(await content.text()).toContain("a".repeat(70_000));
  });

  it("always_ask: nothing runs until a person allows it, and the prompt shows command, machine, shell and cwd", async () => {
    const { project, machine, work } = await connected("careful");
    const tools = "tools:\n  run_command:\n    permission:\n      mode: always_ask\n";
    const configId = await createConfig(server.api, project, yamlConfig(project, machineYaml("careful", work, tools)));
    provider.script({ toolCalls: [{ name: "run_command", input: { command: "echo ran > marker", shell: "bash" } }] }, { text: "done" });
    const agentId = await launch(server.api, project, configId, "go");
    const path = `${project.base}/agents/${agentId}/interactions`;
    const [interaction] = await eventually(
      async () => (await server.api.get(`${path}?state=open`, { token: project.token })).body.data as any[],
      (open) => open.length === 1,
    );
    expect(interaction.request.context).toEqual(
      expect.arrayContaining([
        { label: "Command", value: "echo ran > marker" },
        { label: "Machine", value: `careful (${machine.machineId})` },
        { label: "Shell", value: "bash" },
        { label: "Working directory", value: work },
      ]),
    );
    expect(existsSync(join(work, "marker"))).toBe(false);
    const allow = await server.api.post(`${path}/${interaction.id}/resolve`, { answers: [{ option_indices: [0] }] }, { token: project.token });
    expect(allow.status, allow.text).toBe(200);
    const [result] = await toolResults(project, agentId);
    expect(result.content_blocks[0].value).toMatchObject({ state: "exited", exit_code: 0 });
    expect(readFileSync(join(work, "marker"), "utf8")).toBe("ran\n");
  });

  it("kill -9 of the daemon while a command runs: after a restart the result is recorded once, and the command ran once", async () => {
    const { project, machine, home, work, daemon: first } = await connected("crashy");
    const configId = await createConfig(server.api, project, yamlConfig(project, machineYaml("crashy", work)));
    const command = "echo started >> runs.log; sleep 3; echo finished";
    provider.script({ toolCalls: [{ name: "run_command", input: { command } }] }, { text: "done" });
    const agentId = await launch(server.api, project, configId, "go");
    await eventually(async () => existsSync(join(work, "runs.log")), (started) => started);
    first.child.kill("SIGKILL");
    await first.exited;
    const second = daemon(machine.daemonToken, home);
    const [result] = await toolResults(project, agentId);
    expect(result.outcome, second.output()).toBe("succeeded");
    expect(result.content_blocks[0].value).toMatchObject({ state: "exited", output: "finished\n", exit_code: 0 });
    expect(readFileSync(join(work, "runs.log"), "utf8")).toBe("started\n");
    // svc acknowledged the report: the outbox empties, and the finished process's output is kept for reads.
    await eventually(async () => readdirSync(join(home, "outbox")).length, (left) => left === 0);
    expect(finishedJournals(home)).toEqual([expect.objectContaining({ phase: "terminal", finished_at: expect.any(String) })]);
  });
  it("deleting the machine fails the call waiting on it, stops the daemon, and refuses new launches of the config", async () => {
    const { project, machine, work, daemon: running } = await connected("doomed");
    const configId = await createConfig(server.api, project, yamlConfig(project, machineYaml("doomed", work)));
    provider.script({ toolCalls: [{ name: "run_command", input: { command: "echo started > began; sleep 5" } }] }, { text: "done" });
    const agentId = await launch(server.api, project, configId, "go");
    await eventually(async () => existsSync(join(work, "began")), (started) => started);
    expect((await server.api.delete(`/api/v1/orgs/${project.orgId}/machines/${machine.machineId}`, { token: project.token })).status).toBe(204);
    expect(await running.exited, running.output()).toBe(3);
    const [result] = await toolResults(project, agentId);
    expect(result.outcome).toBe("failed");
    expect(result.content_blocks[0].value).toMatchObject({ state: "unknown", reason: expect.stringContaining("machine_deleted") });
    const again = await server.api.post(`${project.base}/agents`, { config: configId }, { token: project.token });
    expect(again.status, again.text).toBe(400);
    expect(again.body.issues).toEqual([{ path: "/machine_sources/0/machine_name", message: 'machine "doomed" was deleted or is no longer granted to this project', line: 7, column: 19 }]);
  });
  it("a machine offline past the grace period fails the waiting call as machine_unreachable; the daemon back later lets it go", async () => {
    const { project, machine, home, work, daemon: running } = await connected("flaky");
    const configId = await createConfig(server.api, project, yamlConfig(project, machineYaml("flaky", work)));
    provider.script({ toolCalls: [{ name: "run_command", input: { command: "echo started > began; sleep 2; echo late" } }] }, { text: "done" });
    const agentId = await launch(server.api, project, configId, "go");
    await eventually(async () => existsSync(join(work, "began")), (started) => started);
    running.child.kill("SIGTERM");
    expect(await running.exited, running.output()).toBe(0);
    const [result] = await toolResults(project, agentId);
    expect(result.outcome).toBe("failed");
    expect(result.content_blocks[0].value).toMatchObject({ state: "unknown", reason: expect.stringContaining("machine_unreachable") });
    // Back with the same home after the command ended: svc tells it to let the process go, and nothing is recorded again.
    await eventually(async () => existsSync(join(home, "processes")) && readdirSync(join(home, "processes")).length === 1, (held) => held);
    daemon(machine.daemonToken, home);
    await untilConnection(server.api, project.token, project.orgId, machine.machineId, "online");
    await eventually(async () => readdirSync(join(home, "outbox")).length + readdirSync(join(home, "processes")).length, (left) => left === 0);
    await toolResults(project, agentId);
  }, 60_000);
  it("canceling the agent completes the waiting call and the daemon stops the command", async () => {
    const { project, home, work } = await connected("stoppable");
    const configId = await createConfig(server.api, project, yamlConfig(project, machineYaml("stoppable", work)));
    provider.script({ toolCalls: [{ name: "run_command", input: { command: "echo started > began; sleep 30; echo never > after" } }] }, { text: "done" });
    const agentId = await launch(server.api, project, configId, "go");
    await eventually(async () => existsSync(join(work, "began")), (started) => started);
    const cancel = await server.api.post(`${project.base}/agents/${agentId}/cancel`, {}, { token: project.token });
    expect(cancel.status, cancel.text).toBe(200);
    // The next heartbeat (10 s) finds the process; its killed report is acknowledged.
    await eventually(async () => finishedJournals(home).length === 1 && readdirSync(join(home, "outbox")).length === 0, (done) => done);
    expect(existsSync(join(work, "after"))).toBe(false);
    const results = (await events(server.api, project, agentId)).filter((e) => e.event_kind === "tool_result");
    expect(results).toHaveLength(1);
    expect(results[0].outcome).toBe("canceled");
  }, 60_000);
});
