import { describe, expect, it } from "vitest";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, eventually, launch, send, untilEvents } from "../support/agent-loop.js";
import { connectMachine } from "../support/daemon.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";

/*
 * An agent's connected (BYO) machines follow its current config after a config change, as they were made
 * from it at launch: a machine the new config drops is released, one it adds is bound, and one it keeps
 * takes the new working directory. Seen by the agent through list_machines.
 */

const server = useTestServer({ SVC_MAINTENANCE_INTERVAL_MS: "100" }, { worker: true });
const provider = useFakeProvider();

const byo = (project: AgentProject, ...machines: Array<{ name: string; cwd?: string }>) =>
  yamlConfig(project, `machine_sources:\n${machines.map((m) => `  - machine_name: ${m.name}\n${m.cwd ? `    cwd: ${m.cwd}\n` : ""}`).join("")}`);

/** Asks the agent to call list_machines and returns the machines its result shows, by display name. */
async function listedMachines(project: AgentProject, agentId: string): Promise<Array<{ display_name: string; cwd: string }>> {
  const before = (await untilEvents(server.api, project, agentId, () => true)).filter((e) => e.event_kind === "tool_result").length;
  provider.script({ toolCalls: [{ name: "list_machines", input: {} }] }, { text: "Listed." });
  await send(server.api, project, agentId, "which machines do you hold?");
  const list = await untilEvents(server.api, project, agentId, (e) => e.filter((x) => x.event_kind === "tool_result").length > before);
  const result = list.filter((e) => e.event_kind === "tool_result").at(-1);
  expect(result.outcome).toBe("succeeded");
  const machines = result.content_blocks.find((b: any) => b.type === "structured_data").value.machines as any[];
  return machines.map((m) => ({ display_name: m.display_name, cwd: m.cwd })).sort((a, b) => a.display_name.localeCompare(b.display_name));
}

async function changeConfig(project: AgentProject, agentId: string, source: string) {
  const reply = await server.api.post(`${project.base}/agents/${agentId}/config`, { source, source_format: "yaml" }, { token: project.token });
  expect(reply.status, reply.text).toBe(200);
}

describe("connected machines after a config change", () => {
  it("releases a dropped machine, binds an added one and gives a kept one its new working directory", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    for (const name of ["kept-box", "dropped-box", "added-box"]) await connectMachine(server.api, project.token, project.orgId, project.projectId, name);
    provider.script({ text: "Ready." });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, byo(project, { name: "kept-box", cwd: "/old" }, { name: "dropped-box" })), "hello");
    expect(await listedMachines(project, agentId)).toEqual([
      { display_name: "dropped-box", cwd: "" },
      { display_name: "kept-box", cwd: "/old" },
    ]);

    await changeConfig(project, agentId, byo(project, { name: "kept-box", cwd: "/new" }, { name: "added-box" }));
    const expected = [
      { display_name: "added-box", cwd: "" },
      { display_name: "kept-box", cwd: "/new" },
    ];
    await eventually(() => listedMachines(project, agentId), (machines) => JSON.stringify(machines) === JSON.stringify(expected));
  }, 60_000);

  it("leaves a machine whose grant was revoked unbound until it is granted again", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const machine = await connectMachine(server.api, project.token, project.orgId, project.projectId, "granted-box");
    provider.script({ text: "Ready." });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, byo(project, { name: "granted-box" })), "hello");
    const grants = await server.api.get(`/api/v1/orgs/${project.orgId}/projects/${project.projectId}/machine-grants`, { token: project.token });
    expect(grants.status, grants.text).toBe(200);
    const { grant } = grants.body.data.find((item: any) => item.grant.machine_id === machine.machineId);
    const revoked = await server.api.delete(`/api/v1/orgs/${project.orgId}/projects/${project.projectId}/machine-grants/${grant.id}`, { token: project.token });
    expect(revoked.status, revoked.text).toBe(204);
    expect(await listedMachines(project, agentId)).toEqual([]);

    const granted = await server.api.post(`/api/v1/orgs/${project.orgId}/projects/${project.projectId}/machine-grants`, { machine_id: machine.machineId }, { token: project.token });
    expect(granted.status, granted.text).toBe(201);
    await eventually(() => listedMachines(project, agentId), (machines) => machines.length === 1);
  }, 60_000);
});
