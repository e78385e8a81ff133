import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { agentConfigs } from "../../src/db/schema/index.js";
import { decodeId } from "../../src/platform/ids.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { connectMachine } from "../support/daemon.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";

/*
 * The `machine_tools` section: one permission for every tool the catalog marks `touches_machine`, as a
 * floor a tool entry may only raise. Compiled modes are read from the stored definition, which the worker
 * runs and which has no HTTP surface of its own.
 */

const server = useTestServer();
const provider = useFakeProvider();

function create(p: AgentProject, source: string) {
  return server.api.post(`${p.base}/agent-configs`, { source, source_format: "yaml" }, { token: p.token });
}

async function compiledModes(configId: string): Promise<Record<string, string>> {
  const [row] = await server.db.read.select().from(agentConfigs).where(eq(agentConfigs.id, decodeId("agentConfig", configId)!));
  return Object.fromEntries(row!.compiledDefinition.tools.map((tool) => [tool.name, tool.permission]));
}

/** A project with a connected machine named `box`, and the config text that attaches it. */
async function projectWithMachine() {
  const p = await agentProject(server.api, provider.baseUrl);
  await connectMachine(server.api, p.token, p.orgId, p.projectId, "box");
  return { p, sources: "machine_sources:\n  - machine_name: box\n" };
}

async function issuesOf(p: AgentProject, source: string) {
  const reply = await create(p, source);
  expect(reply.status, reply.text).toBe(400);
  expect(reply.body.code).toBe("validation_failed");
  return reply.body.issues as Array<{ path: string; message: string; line?: number; column?: number }>;
}

describe("machine_tools.permission", () => {
  it("compiles every tool that touches a machine to the mode, keeps stricter entries, and leaves other tools alone", async () => {
    const { p, sources } = await projectWithMachine();
    const tools = "tools:\n  ask_question: {}\n  run_command: {}\n  stop_process: {permission: {mode: always_deny}}\n  create_machine: {}\n  skill: {}\n";
    const reply = await create(p, yamlConfig(p, `${sources}machine_tools:\n  permission: {mode: always_ask}\n${tools}`));
    expect(reply.status, reply.text).toBe(201);
    expect(await compiledModes(reply.body.id)).toEqual({
      ask_question: "always_allow",
      create_machine: "always_ask",
      download_file: "always_ask",
      inspect_machine: "always_ask",
      list_machines: "always_ask",
      list_processes: "always_ask",
      // read_file and search_files read svc's stored files, never a machine.
      read_file: "always_allow",
      read_process: "always_ask",
      run_command: "always_ask",
      search_files: "always_allow",
      skill: "always_ask",
      stop_process: "always_deny",
      upload_file: "always_ask",
      write_process: "always_ask",
    });

    // The reference's defaults stand without the section: the same tools, every one always_allow but the denied one.
    const plain = await create(p, yamlConfig(p, `${sources}${tools}`));
    expect(plain.status, plain.text).toBe(201);
    const modes = await compiledModes(plain.body.id);
    expect(Object.keys(modes)).toEqual(Object.keys(await compiledModes(reply.body.id)));
    expect(Object.entries(modes).filter(([, mode]) => mode !== "always_allow")).toEqual([["stop_process", "always_deny"]]);
    expect(plain.body.effective_definition_hash).not.toBe(reply.body.effective_definition_hash);

    // always_deny fences off the machine entirely; always_allow changes nothing.
    const fenced = await create(p, yamlConfig(p, `${sources}machine_tools: {permission: {mode: always_deny}}\n`));
    expect(fenced.status, fenced.text).toBe(201);
    expect(Object.entries(await compiledModes(fenced.body.id)).filter(([, mode]) => mode !== "always_deny")).toEqual([
      ["read_file", "always_allow"],
      ["search_files", "always_allow"],
    ]);
    const allowing = await create(p, yamlConfig(p, `${sources}machine_tools: {permission: {mode: always_allow}}\n${tools}`));
    expect(allowing.body.effective_definition_hash).toBe(plain.body.effective_definition_hash);
  });

  it("refuses a tool entry that would loosen a machine tool under it, at the entry's mode", async () => {
    const { p, sources } = await projectWithMachine();
    const rest = `${sources}machine_tools:\n  permission: {mode: always_ask}\ntools:\n  upload_file: {permission: {mode: always_allow}}\n  ask_question: {permission: {mode: always_allow}}\n`;
    expect(await issuesOf(p, yamlConfig(p, rest))).toEqual([
      {
        path: "/tools/upload_file/permission/mode",
        message: "always_allow is looser than machine_tools.permission (always_ask), which covers upload_file; a tool entry may only make a machine tool stricter",
        line: 11,
        column: 36,
      },
    ]);
  });

  it("reports a bad section at the place it goes wrong", async () => {
    const { p, sources } = await projectWithMachine();
    expect(await issuesOf(p, yamlConfig(p, `${sources}machine_tools:\n  permission: {mode: sometimes}\n`))).toEqual([
      { path: "/machine_tools/permission/mode", message: 'must be one of: always_allow, always_ask, always_deny; got "sometimes"', line: 9, column: 22 },
    ]);
    expect(await issuesOf(p, yamlConfig(p, "machine_tools:\n  mode: always_ask\n"))).toEqual([
      { path: "/machine_tools/mode", message: "unknown key; expected one of: permission", line: 7, column: 3 },
      { path: "/machine_tools/permission", message: "is required: {mode: …}, the permission of every tool that touches a machine", line: 6, column: 1 },
    ]);
    expect(await issuesOf(p, yamlConfig(p, "machine_tools: always_ask\n"))).toEqual([
      { path: "/machine_tools", message: 'must be an object such as {permission: {mode: always_ask}}; got "always_ask"', line: 6, column: 16 },
    ]);
  });
});
