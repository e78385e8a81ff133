import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, eventually, finalOutputs, send, untilEvents } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";

// Every test here starts svc or svcd processes from their TypeScript sources: 3–6 s apiece on a busy CI machine.
vi.setConfig({ testTimeout: 120_000 });

/*
 * The `local` provider's isolation (docs/machines.md, "The local provider"): with bubblewrap installed, a
 * pool machine's commands see the host read-only, their own directory writable, and neither svc's data
 * directory nor svc's processes. Skipped where `bwrap` is not installed (the provider then runs machines
 * as plain processes, which pool-machines.test.ts covers).
 */

function hasBwrap(): boolean {
  try {
    execFileSync("bwrap", ["--ro-bind", "/", "/", "true"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const ENV = { SVC_MAINTENANCE_INTERVAL_MS: "200", SVC_MACHINE_RECONCILE_INTERVAL_MS: "200", SVC_LOCAL_MACHINE_ISOLATION: "bubblewrap" };

describe.runIf(hasBwrap())("pool machines under bubblewrap", () => {
  const server = useTestServer(ENV, { worker: true, poolMachines: true });
  const provider = useFakeProvider();

  it("runs commands that can write only their machine's directory and see neither svc's data nor its processes", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const pool = await server.api.post(`/api/v1/orgs/${project.orgId}/machine-pools`, { name: "sandbox", provider: "local", max_total_machines: 1 }, { token: project.token });
    expect(pool.status, pool.text).toBe(201);
    const grant = await server.api.post(`${project.base}/machine-pool-grants`, { machine_pool_id: pool.body.id }, { token: project.token });
    expect(grant.status, grant.text).toBe(201);
    const configId = await createConfig(server.api, project, yamlConfig(project, "machine_sources:\n  - machine_pool_name: sandbox\n"));
    const launched = await server.api.post(`${project.base}/agents`, { config: configId }, { token: project.token });
    expect(launched.status, launched.text).toBe(201);
    const machineId = launched.body.machine_bindings[0].machine_id as string;
    await eventually(
      () => server.api.get(`/api/v1/orgs/${project.orgId}/machines/${machineId}`, { token: project.token }).then((r) => r.body),
      (m) => m.connection_state === "online",
    );

    const dataDir = server.config.dataDir;
    // A path on the host outside the sandbox's writable directories (removed again should the test fail).
    const escape = join(process.cwd(), `escaped-${Date.now()}`);
    onTestFinished(() => rmSync(escape, { force: true }));
    const probe = [
      `echo own > ./mine && cat ./mine`,
      `(echo x > ${JSON.stringify(escape)}) 2>/dev/null && echo host-writable || echo host-read-only`,
      `ls -A ${JSON.stringify(dataDir)} | grep -v '^machines$' | wc -l`,
      `ps -e -o pid= | wc -l`,
    ].join("; ");
    provider.script({ toolCalls: [{ name: "run_command", input: { command: probe } }] }, { text: "done" });
    await send(server.api, project, launched.body.agent.id, "probe");
    const events = await untilEvents(server.api, project, launched.body.agent.id, (e) => finalOutputs(e).length === 1);
    const result = events.find((e) => e.event_kind === "tool_result")!.content_blocks[0].value;
    expect(result.state, JSON.stringify(result)).toBe("exited");
    const [own, host, dataEntries, processes] = (result.output as string).trim().split("\n");
    expect(own).toBe("own");
    expect(host).toBe("host-read-only");
    // svc's data directory is an empty tmpfs inside the sandbox, apart from the path to this machine's own directory.
    expect(Number(dataEntries)).toBe(0);
    // Its own PID namespace: bubblewrap, svcd, the shell, ps and the like, not the host's processes.
    expect(Number(processes)).toBeLessThan(20);
  });
});
