import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { agentConfigs } from "../../src/db/schema/index.js";
import { decodeId } from "../../src/platform/ids.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { useTestServer } from "../support/server.js";
import { createIntegration } from "./integrations-fixtures.js";

const server = useTestServer();

async function projectWithIntegration(): Promise<AgentProject & { integrationId: string }> {
  const p = await agentProject(server.api, "http://127.0.0.1:9/v1");
  const integration = await createIntegration(server.api, { integrations: `${p.base}/integrations`, token: p.token }, "eng-team");
  return { ...p, integrationId: integration.id as string };
}

const create = (p: AgentProject, source: string) => server.api.post(`${p.base}/agent-configs`, { source, source_format: "yaml" }, { token: p.token });

describe("agent configs: integration tools (int__<name>__<operation>)", () => {
  it("compiles an operation the project's integration offers: the kind's schema, the entry's permission, the integration's id", async () => {
    const p = await projectWithIntegration();
    const source = yamlConfig(p, "tools:\n  int__eng-team__read: {}\n  int__eng-team__post_message:\n    permission:\n      mode: always_ask\n");
    const reply = await create(p, source);
    expect(reply.status, reply.text).toBe(201);
    const [row] = await server.db.read.select().from(agentConfigs).where(eq(agentConfigs.id, decodeId("agentConfig", reply.body.id)!));
    const tools = row!.compiledDefinition.tools;
    const integrationId = decodeId("integration", p.integrationId);
    expect(tools.filter((t) => t.name.startsWith("int__"))).toEqual([
      {
        name: "int__eng-team__post_message",
        type: "built_in",
        description: expect.stringContaining("Posts a message"),
        inputSchema: expect.objectContaining({ required: ["text"] }),
        permission: "always_ask",
        integration: { integrationId, kind: "slack_thread", operation: "post_message" },
      },
      {
        name: "int__eng-team__read",
        type: "built_in",
        description: expect.stringContaining("Reads the messages"),
        inputSchema: expect.objectContaining({ properties: expect.objectContaining({ cursor: expect.any(Object) }) }),
        permission: "always_allow",
        integration: { integrationId, kind: "slack_thread", operation: "read" },
      },
    ]);
  });

  it("refuses an unknown integration, an unknown operation and a malformed name, each at its key's line and column", async () => {
    const p = await projectWithIntegration();
    const source = yamlConfig(p, "tools:\n  int__ops__read: {}\n  int__eng-team__delete: {}\n  int__eng-team: {}\n  int__eng-team__read:\n    enabled: maybe\n");
    const reply = await create(p, source);
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body.code).toBe("validation_failed");
    const lines = source.split("\n");
    const at = (key: string) => ({ line: lines.findIndex((l) => l.startsWith(`  ${key}:`)) + 1, column: 3 });
    expect(reply.body.issues).toEqual([
      { path: "/tools/int__eng-team", message: expect.stringContaining("int__<integration name>__<operation>"), ...at("int__eng-team") },
      { path: "/tools/int__eng-team__read/enabled", message: expect.stringContaining("true or false"), line: at("int__eng-team__read").line + 1, column: 14 },
      { path: "/tools/int__ops__read", message: expect.stringContaining('unknown integration "ops"'), ...at("int__ops__read") },
      { path: "/tools/int__eng-team__delete", message: expect.stringContaining('has no operation "delete"'), ...at("int__eng-team__delete") },
    ]);
  });

  it("compiles a disabled entry to no tool, and still checks that it names a real operation", async () => {
    const p = await projectWithIntegration();
    const ok = await create(p, yamlConfig(p, "tools:\n  int__eng-team__read:\n    enabled: false\n"));
    expect(ok.status, ok.text).toBe(201);
    const [row] = await server.db.read.select().from(agentConfigs).where(eq(agentConfigs.id, decodeId("agentConfig", ok.body.id)!));
    expect(row!.compiledDefinition.tools).toEqual([]);
    const bad = await create(p, yamlConfig(p, "tools:\n  int__eng-team__nope:\n    enabled: false\n"));
    expect(bad.status).toBe(400);
  });
});
