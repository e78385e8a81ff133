import { spawn } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, eventually, finalOutputs, send, untilEvents } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { externalAddress } from "../support/process.js";
import { startTestServer, useTestServer, type TestServer } from "../support/server.js";

// Every test here starts svc or svcd processes from their TypeScript sources: 3–6 s apiece on a busy CI machine.
vi.setConfig({ testTimeout: 120_000 });

/*
 * The `local` provider's isolation (docs/machines.md, "What the local provider isolates"): under bubblewrap,
 * which CI installs, a pool machine's commands see the host read-only and their own directory writable;
 * neither svc's data directory (its master key, the database, other machines), nor svc's processes and
 * environment, nor other daemons' tokens; and no network but a loopback of their own, so neither the
 * database nor svc's port nor this host's other addresses. Not skipped where bwrap is missing: the test
 * fails then, as svc refuses to start sandboxed machines without it.
 */

const ENV = { SVC_MAINTENANCE_INTERVAL_MS: "200", SVC_MACHINE_RECONCILE_INTERVAL_MS: "200", SVC_LOCAL_MACHINE_ISOLATION: "bubblewrap" };
const SENTINEL = `isolation-sentinel-${process.pid}`;
// Not a machine id, so maintenance leaves it alone as it would not another live machine's directory.
const OTHER_MACHINE = "another-machine";

/** A shell line that prints `yes` when bash can open a TCP connection to host:port, else `no`. */
const reaches = (host: string, port: number) => `(timeout 5 bash -c 'exec 3<>/dev/tcp/${host}/${port}' 2>/dev/null && echo yes || echo no)`;

describe("pool machines under bubblewrap", () => {
  const server = useTestServer(ENV, { worker: true, poolMachines: true });
  const provider = useFakeProvider();

  it("runs commands that can write only their machine's directory and reach neither svc's data, processes, other daemons nor any network", async () => {
    const dataDir = server.config.dataDir;
    // What a command must not read: a master key file, another machine's home, another daemon's token.
    writeFileSync(join(dataDir, "secret.key"), SENTINEL);
    mkdirSync(join(dataDir, "machines", OTHER_MACHINE, "home"), { recursive: true });
    writeFileSync(join(dataDir, "machines", OTHER_MACHINE, "home", "token"), SENTINEL);
    const otherDaemon = spawn("sleep", ["600"], { env: { SVC_DAEMON_TOKEN: SENTINEL }, stdio: "ignore" });
    onTestFinished(() => void otherDaemon.kill());

    const { project, machineId, agentId } = await launchOnPool(server, provider.baseUrl);
    await eventually(
      () => server.api.get(`/api/v1/orgs/${project.orgId}/machines/${machineId}`, { token: project.token }).then((r) => r.body),
      (m) => m.connection_state === "online",
    );

    // A path on the host outside the sandbox's writable directories (removed again should the test fail).
    const escape = join(process.cwd(), `escaped-${Date.now()}`);
    onTestFinished(() => rmSync(escape, { force: true }));
    const svcPort = Number(new URL(server.url).port);
    const quoted = (path: string) => JSON.stringify(path);
    const probe = [
      `echo own > ./mine && cat ./mine`,
      `(echo x > ${quoted(escape)}) 2>/dev/null && echo host-writable || echo host-read-only`,
      `ls -A ${quoted(dataDir)} | grep -v '^machines$' | wc -l`,
      `ls -A ${quoted(join(dataDir, "machines"))} | wc -l`,
      `cat ${quoted(join(dataDir, "secret.key"))} ${quoted(join(dataDir, "machines", OTHER_MACHINE, "home", "token"))} 2>/dev/null | grep -c ${SENTINEL}`,
      `cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c ${SENTINEL}`,
      // Its own daemon's token in no environment of the sandbox: the first process's (bubblewrap), svcd's, its own.
      `test -r /proc/1/environ && cat /proc/1/environ /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c svc_daemon_v1_`,
      `ps -e -o pid= | wc -l`,
      `ls /run/postgresql /var/run/postgresql 2>/dev/null | wc -l`,
      reaches("127.0.0.1", 5432),
      reaches("127.0.0.1", svcPort),
      reaches(externalAddress() ?? "192.0.2.1", svcPort),
    ].join("; ");
    provider.script({ toolCalls: [{ name: "run_command", input: { command: probe } }] }, { text: "done" });
    await send(server.api, project, agentId, "probe");
    const events = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    const result = events.find((e) => e.event_kind === "tool_result")!.content_blocks[0].value;
    expect(result.state, JSON.stringify(result)).toBe("exited");
    const lines = (result.output as string).trim().split("\n");
    expect(lines, result.output).toHaveLength(12);
    const [own, host, dataEntries, machineEntries, secretsRead, environments, ownToken, processes, socketDirs, database, svcLoopback, svcExternal] = lines;
    expect(own).toBe("own");
    expect(host).toBe("host-read-only");
    // svc's data directory is an empty tmpfs inside the sandbox, apart from the path to this machine's own directory.
    expect(Number(dataEntries)).toBe(0);
    expect(Number(machineEntries)).toBe(1);
    expect(Number(secretsRead)).toBe(0);
    // Its own PID namespace: bubblewrap, svcd, the shell, ps and the like, not the host's processes.
    expect(Number(environments)).toBe(0);
    expect(Number(ownToken)).toBe(0);
    expect(Number(processes)).toBeLessThan(20);
    // PostgreSQL's Unix socket directory is hidden, and no TCP address of this host is reachable.
    expect(Number(socketDirs)).toBe(0);
    expect([database, svcLoopback, svcExternal]).toEqual(["no", "no", "no"]);
    // The machine still reached svc (it came online and ran this command) through the socket svc passed in.
  });
});

/** A local pool, its grant, and an agent whose config takes a machine from it. */
async function launchOnPool(server: TestServer, providerUrl: string) {
  const project = await agentProject(server.api, providerUrl);
  const pool = await server.api.post(`/api/v1/orgs/${project.orgId}/machine-pools`, { name: "sandbox", provider: "local", max_total_machines: 1 }, { token: project.token });
  expect(pool.status, pool.text).toBe(201);
  const grant = await server.api.post(`${project.base}/machine-pool-grants`, { machine_pool_id: pool.body.id }, { token: project.token });
  expect(grant.status, grant.text).toBe(201);
  const configId = await createConfig(server.api, project, yamlConfig(project, "machine_sources:\n  - machine_pool_name: sandbox\n"));
  const launched = await server.api.post(`${project.base}/agents`, { config: configId }, { token: project.token });
  expect(launched.status, launched.text).toBe(201);
  return { project, agentId: launched.body.agent.id as string, machineId: launched.body.machine_bindings[0].machine_id as string };
}

describe("the local provider's isolation setting", () => {
  const provider = useFakeProvider();

  it("bubblewrap without bwrap: svc starts, says so, and refuses to start pool machines with the reason", async () => {
    const said: string[] = [];
    const log = { warn: (_: unknown, msg: string) => said.push(msg), error: (_: unknown, msg: string) => said.push(msg), debug: () => {} };
    const path = process.env["PATH"];
    process.env["PATH"] = "/nonexistent";
    let server: TestServer;
    try {
      server = await startTestServer(ENV, { worker: true, poolMachines: true, poolLog: log });
    } finally {
      process.env["PATH"] = path;
    }
    onTestFinished(() => server.close());
    expect(said).toEqual([expect.stringContaining("bwrap is not installed")]);
    const { project, machineId } = await launchOnPool(server, provider.baseUrl);
    const machine = await eventually(
      () => server.api.get(`/api/v1/orgs/${project.orgId}/machines/${machineId}`, { token: project.token }).then((r) => r.body),
      (m) => m.lifecycle_state === "provision_failed",
    );
    expect(JSON.stringify(machine)).toContain("install bubblewrap, or set SVC_LOCAL_MACHINE_ISOLATION=none");
  });

  it("none: svc warns at start and at every pool machine start", async () => {
    const said: string[] = [];
    const log = { warn: (_: unknown, msg: string) => said.push(msg), error: (_: unknown, msg: string) => said.push(msg), debug: () => {} };
    const server = await startTestServer({ ...ENV, SVC_LOCAL_MACHINE_ISOLATION: "none" }, { worker: true, poolMachines: true, poolLog: log });
    onTestFinished(() => server.close());
    expect(said).toEqual([expect.stringContaining("SVC_LOCAL_MACHINE_ISOLATION=none")]);
    const { project, machineId } = await launchOnPool(server, provider.baseUrl);
    await eventually(
      () => server.api.get(`/api/v1/orgs/${project.orgId}/machines/${machineId}`, { token: project.token }).then((r) => r.body),
      (m) => m.connection_state === "online",
    );
    expect(said.filter((msg) => msg.includes("SVC_LOCAL_MACHINE_ISOLATION=none"))).toHaveLength(2);
  });
});
