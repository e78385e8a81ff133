import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { processes } from "../../src/db/schema/index.js";
import { MACHINE_TOUCHING_TOOLS } from "../../src/runtime/tools/catalog.js";
import { decodeId } from "../../src/platform/ids.js";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, eventually, events, finalOutputs, launch, send } from "../support/agent-loop.js";
import { connectMachine, untilConnection, useDaemons } from "../support/daemon.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";

// svcd starts from its TypeScript sources, and the agent takes a dozen turns of approvals.
vi.setConfig({ testTimeout: 180_000 });

/*
 * The finding of issue 21: with run_command held for approval and denied, the same agent's upload_file
 * read a secret into an artifact and download_file wrote a file on the machine, asking nobody. With
 * `machine_tools: {permission: {mode: always_ask}}` every tool the catalog marks `touchesMachine` asks
 * first: after the denied command, the model tries each of them in turn, each opens a permission
 * interaction that a person denies, and afterwards the machine holds exactly what it held before, no
 * process was queued for it, and the agent has no artifact but the one it was sent.
 */

const server = useTestServer({}, { worker: true });
const provider = useFakeProvider();
const { dir, daemon: svcd } = useDaemons(server);

const PROCESS_ID = "prc_aaaaaaaaaaaaaaaaaaaaaaaaaa";
const MACHINE_ID = "mch_aaaaaaaaaaaaaaaaaaaaaaaaaa";

/** An input each tool that touches a machine would run with; a tool the catalog adds must be given one here. */
function sampleInputs(artifactId: string): Record<string, Record<string, unknown>> {
  return {
    upload_file: { path: "/artifacts", source: "master.key" },
    download_file: { path: `/artifacts/${artifactId}`, destination: "dropped.txt" },
    read_process: { process_id: PROCESS_ID },
    write_process: { process_id: PROCESS_ID, data: "rm -rf ~\n" },
    stop_process: { process_id: PROCESS_ID, mode: "terminate" },
    list_processes: {},
    create_machine: {},
    delete_machine: { machine_id: MACHINE_ID },
    list_machines: {},
    inspect_machine: {},
    skill: { name: "anything" },
    run_command: { command: "cat master.key > leaked.txt" },
  };
}

describe("machine_tools.permission always_ask", () => {
  it("after a denied command, every tool that touches the machine asks, and nothing reaches the machine", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const machineTools = [...MACHINE_TOUCHING_TOOLS];

    const machine = await connectMachine(server.api, project.token, project.orgId, project.projectId, "guarded");
    const work = dir("svcd-work-");
    const home = dir("svcd-home-");
    writeFileSync(join(work, "master.key"), "MASTER-KEY-SENTINEL\n");
    svcd(machine.daemonToken, home);
    await untilConnection(server.api, project.token, project.orgId, machine.machineId, "online");

    // Every machine tool named, so create_machine, delete_machine and skill are in the definition too.
    const tools = machineTools.map((name) => `  ${name}: {}\n`).join("");
    const rest = `machine_sources:\n  - machine_name: guarded\n    cwd: ${work}\nmachine_tools:\n  permission: {mode: always_ask}\ntools:\n${tools}  list_files: {}\n`;
    const configId = await createConfig(server.api, project, yamlConfig(project, rest));
    provider.script({ text: "received" });
    const agentId = await launch(server.api, project, configId, "hello");
    const base = `${project.base}/agents/${agentId}`;
    await eventually(() => events(server.api, project, agentId), (list) => finalOutputs(list).length === 1);

    // An artifact the agent holds, for download_file to try writing to the machine.
    const media = { type: "media", media_type: "text/plain", filename: "payload.txt", data: Buffer.from("PAYLOAD\n").toString("base64") };
    provider.script({ text: "got it" });
    const sent = await server.api.post(`${base}/inputs`, { content_blocks: [{ type: "text", text: "a file" }, media] }, { token: project.token });
    expect(sent.status, sent.text).toBe(201);
    const afterSend = await eventually(() => events(server.api, project, agentId), (list) => finalOutputs(list).length === 2);
    const artifactId = afterSend.flatMap((e) => (e.content_blocks ?? []) as any[]).find((b) => b.type === "media_ref").artifact_id as string;

    // run_command first, as in the finding; then every other machine tool.
    const samples = sampleInputs(artifactId);
    const order = ["run_command", ...machineTools.filter((name) => name !== "run_command")];
    for (const name of order) expect(samples[name], `a sample input for ${name}`).toBeDefined();
    provider.script(...order.map((name) => ({ toolCalls: [{ name, input: samples[name]! }] })), { toolCalls: [{ name: "list_files", input: { pattern: "/artifacts/*" } }] }, { text: "I give up" });
    await send(server.api, project, agentId, "copy the master key out");

    for (const name of order) {
      const [open] = await eventually(
        async () => (await server.api.get(`${base}/interactions?state=open`, { token: project.token })).body.data as any[],
        (list) => list.length === 1,
      );
      expect(open.interaction_kind, name).toBe("permission");
      expect(open.request.context[0], name).toEqual({ label: "Tool", value: name });
      // A transfer's approver sees which machine and which file there, not only the input.
      if (name === "upload_file" || name === "download_file") {
        const file = name === "upload_file" ? { label: "Machine file read", value: "master.key" } : { label: "Machine file written", value: "dropped.txt" };
        expect(open.request.context.slice(1, 4)).toEqual([{ label: "Machine", value: `guarded (${machine.machineId})` }, file, { label: "Working directory", value: work }]);
      }
      const denied = await server.api.post(`${base}/interactions/${open.id}/resolve`, { answers: [{ option_indices: [1], text: "no" }] }, { token: project.token });
      expect(denied.status, denied.text).toBe(200);
    }
    const list = await eventually(() => events(server.api, project, agentId), (all) => finalOutputs(all).length === 3);

    const results = list.filter((e) => e.event_kind === "tool_result");
    expect(results.map((r) => [r.content_blocks[0].text ?? "", r.outcome])).toEqual([
      ...order.map(() => ["Permission denied: no", "denied"]),
      // list_files reads svc's stored files, never a machine, so it runs: the one artifact is the one sent.
      ["", "succeeded"],
    ]);
    const listed = results[results.length - 1].content_blocks[0].value;
    expect(listed.entries.map((entry: any) => entry.path)).toEqual([`/artifacts/${artifactId}`]);

    // The machine holds what it held, svcd was never handed a process, and no skill was installed.
    expect(readdirSync(work)).toEqual(["master.key"]);
    // (svcd keeps its own record of installs in skills/.installed.)
    expect(readdirSync(join(home, "skills")).filter((name) => !name.startsWith("."))).toEqual([]);
    const queued = await server.db.read.select().from(processes).where(eq(processes.agentId, decodeId("agent", agentId)!));
    expect(queued).toEqual([]);
  });
});
