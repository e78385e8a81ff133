import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeProvider, type FakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { agentProject, yamlConfig } from "../support/agents.js";
import { MACHINE_TOUCHING_TOOLS } from "../../src/runtime/tools/catalog.js";
import { useTestServer } from "../support/server.js";

const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true" });
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await fake?.close();
});

const NO_PARAMETERS = { type: "object", properties: {}, additionalProperties: false };
const MODES = [
  { name: "always_allow", label: "Always allow", description: expect.any(String), parameters_schema: NO_PARAMETERS },
  { name: "always_ask", label: "Always ask", description: expect.any(String), parameters_schema: NO_PARAMETERS },
  { name: "always_deny", label: "Always deny", description: expect.any(String), parameters_schema: NO_PARAMETERS },
];

describe("the tools that touch a machine", () => {
  // What `machine_tools.permission` covers (docs/agent-configs.md); internal, since the reference's
  // ToolCatalogEntry is a closed object.
  it("are every tool that reaches a machine or changes the machines and processes an agent holds", () => {
    expect([...MACHINE_TOUCHING_TOOLS].sort()).toEqual([
      "create_machine",
      "delete_machine",
      "download_file",
      "inspect_machine",
      "list_machines",
      "list_processes",
      "read_process",
      "run_command",
      "skill",
      "stop_process",
      "upload_file",
      "write_process",
    ]);
  });
});

describe("the tool catalog", () => {
  it("lists the built-in tools svc runs and the permission defaults of every kind of tool", async () => {
    const { token } = await server.api.userWithOrg();
    const reply = await server.api.get("/api/v1/tool-catalog", { token });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      built_in_tools: [
        {
          name: "ask_question",
          description: expect.stringContaining("multiple-choice questions"),
          default_permission: { mode: "always_allow", parameters: {} },
          permission_modes: MODES,
        },
        {
          name: "await_delegates",
          description: expect.stringContaining("Wait until each of the given delegates"),
          default_permission: { mode: "always_allow", parameters: {} },
          permission_modes: MODES,
        },
        {
          name: "create_machine",
          description: expect.stringContaining("Make a new machine from a machine pool"),
          default_permission: { mode: "always_allow", parameters: {} },
          permission_modes: MODES,
        },
        {
          name: "delegate",
          description: expect.stringContaining("Hand a task to one of your delegates"),
          default_permission: { mode: "always_allow", parameters: {} },
          permission_modes: MODES,
        },
        {
          name: "delete_machine",
          description: expect.stringContaining("Delete a machine you made from a pool"),
          default_permission: { mode: "always_allow", parameters: {} },
          permission_modes: MODES,
        },
        {
          name: "download_file",
          description: expect.stringContaining("Copy one of your artifacts (/artifacts/art_…) or a file of an attached memory store (/memory/<store>/<file>) to a file on an attached machine"),
          default_permission: { mode: "always_allow", parameters: {} },
          permission_modes: MODES,
        },
        {
          name: "inspect_machine",
          description: expect.stringContaining("ready to run commands"),
          default_permission: { mode: "always_allow", parameters: {} },
          permission_modes: MODES,
        },
        {
          name: "list_files",
          description: expect.stringContaining("List files stored in svc"),
          default_permission: { mode: "always_allow", parameters: {} },
          permission_modes: MODES,
        },
        {
          name: "list_interaction_handlers",
          description: expect.stringContaining("List the interaction handlers"),
          default_permission: { mode: "always_allow", parameters: {} },
          permission_modes: MODES,
        },
        {
          name: "list_machines",
          description: expect.stringContaining("List the machines attached to you"),
          default_permission: { mode: "always_allow", parameters: {} },
          permission_modes: MODES,
        },
        {
          name: "list_processes",
          description: expect.stringContaining("processes that have not ended"),
          default_permission: { mode: "always_allow", parameters: {} },
          permission_modes: MODES,
        },
        {
          name: "message_delegate",
          description: expect.stringContaining("Send a follow-up message to one of your own delegates"),
          default_permission: { mode: "always_allow", parameters: {} },
          permission_modes: MODES,
        },
        {
          name: "read_file",
          description: expect.stringContaining("Read part of a UTF-8 text file"),
          default_permission: { mode: "always_allow", parameters: {} },
          permission_modes: MODES,
        },
        {
          name: "read_process",
          description: expect.stringContaining("Read a process's output from a byte cursor"),
          default_permission: { mode: "always_allow", parameters: {} },
          permission_modes: MODES,
        },
        {
          name: "run_command",
          description: expect.stringContaining("Run a shell command on a machine attached to you"),
          default_permission: { mode: "always_allow", parameters: {} },
          permission_modes: MODES,
        },
        {
          name: "search_files",
          description: expect.stringContaining("Search the text of one file"),
          default_permission: { mode: "always_allow", parameters: {} },
          permission_modes: MODES,
        },
        {
          name: "set_interaction_handler",
          description: expect.stringContaining("Choose where your next questions and approvals are shown"),
          default_permission: { mode: "always_allow", parameters: {} },
          permission_modes: MODES,
        },
        {
          name: "skill",
          description: expect.stringContaining("skills attached to you"),
          default_permission: { mode: "always_allow", parameters: {} },
          permission_modes: MODES,
        },
        {
          name: "stop_process",
          description: expect.stringContaining("Stop a running process"),
          default_permission: { mode: "always_allow", parameters: {} },
          permission_modes: MODES,
        },
        {
          name: "upload_file",
          description: expect.stringContaining("Copy one regular file (at most 10 MiB, not empty) from an attached machine into svc"),
          default_permission: { mode: "always_allow", parameters: {} },
          permission_modes: MODES,
        },
        {
          name: "write_file",
          description: expect.stringContaining("in a memory store attached to you with write access (/memory/<store>/<file>)"),
          default_permission: { mode: "always_allow", parameters: {} },
          permission_modes: MODES,
        },
        {
          name: "write_process",
          description: expect.stringContaining("Send input to a running process"),
          default_permission: { mode: "always_allow", parameters: {} },
          permission_modes: MODES,
        },
      ],
      custom_tool_permissions: { default_permission: { mode: "always_allow", parameters: {} }, permission_modes: MODES },
      mcp_tool_permissions: { default_permission: { mode: "always_ask", parameters: {} }, permission_modes: MODES },
    });
  });

  it("is open to any authenticated caller, organization keys included, and to nobody else", async () => {
    const { session, org } = await server.api.userWithOrg();
    const key = await server.api.orgKey(session, org.id, "member");
    expect((await server.api.get("/api/v1/tool-catalog", { token: key.token })).status).toBe(200);
    expect((await server.api.get("/api/v1/tool-catalog", { session })).status).toBe(200);
    const anonymous = await server.api.get("/api/v1/tool-catalog");
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.code).toBe("unauthorized");
  });

  it("names exactly the built-in tools a config may use, in every mode they offer", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const catalog = (await server.api.get("/api/v1/tool-catalog", { token: p.token })).body;
    for (const tool of catalog.built_in_tools) {
      for (const mode of tool.permission_modes) {
        const source = yamlConfig(p, `tools:\n  ${tool.name}:\n    permission: {mode: ${mode.name}}\n`);
        const reply = await server.api.post(`${p.base}/agent-configs`, { source, source_format: "yaml" }, { token: p.token });
        expect(reply.status, `${tool.name} ${mode.name}: ${reply.text}`).toBe(201);
      }
    }
  });
});
