import { describe, expect, it } from "vitest";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, events, launch } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";

/*
 * POST …/agents/{id}/config answers (reference: updateAgentConfig). Its transaction sends the agent lock,
 * the compile's reads, the replay lookup and the turn read together and judges the answers afterwards,
 * so these pin the order of its checks: an unknown agent before a bad source, a replay before the
 * archived check, and nothing written by a refused change.
 */
const server = useTestServer();
const provider = useFakeProvider({ reset: false });

const MISSING_AGENT = "agt_aaaaaaaaaaaaaaaaaaaaaaaaaa";

async function agentOnFirstConfig(): Promise<{ project: AgentProject; agentId: string; configId: string }> {
  const project = await agentProject(server.api, provider.baseUrl);
  const configId = await createConfig(server.api, project, yamlConfig(project));
  return { project, agentId: await launch(server.api, project, configId), configId };
}

function change(project: AgentProject, agentId: string, body: Record<string, unknown>, key?: string) {
  return server.api.post(`${project.base}/agents/${agentId}/config`, body, { token: project.token, ...(key ? { headers: { "idempotency-key": key } } : {}) });
}

describe("changing an agent's config", () => {
  it("records a config_change input as the next event and makes the config current", async () => {
    const { project, agentId } = await agentOnFirstConfig();
    const reply = await change(project, agentId, { source: yamlConfig(project, "", "You are the second config."), source_format: "yaml" });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.agent_input).toMatchObject({ input_kind: "config_change", state: "resolved" });
    const timeline = await events(server.api, project, agentId);
    expect(timeline.at(-1)).toMatchObject({
      id: reply.body.event_id,
      event_kind: "agent_input",
      agent_input_id: reply.body.agent_input.id,
      input_kind: "config_change",
      agent_config_id: reply.body.agent_config.id,
      sequence: timeline.length,
    });
    const agent = await server.api.get(`${project.base}/agents/${agentId}`, { token: project.token });
    expect(agent.body.agent.current_config_id).toBe(reply.body.agent_config.id);
  });

  it("answers 404 for an unknown agent before it looks at the source, and compiles nothing", async () => {
    const { project } = await agentOnFirstConfig();
    const bad = await change(project, MISSING_AGENT, { source: "model: [not a model", source_format: "yaml" });
    expect(bad.status, bad.text).toBe(404);
    expect(bad.body.code).toBe("not_found");
    const source = yamlConfig(project, "", "Never stored.");
    const good = await change(project, MISSING_AGENT, { source, source_format: "yaml" });
    expect(good.status, good.text).toBe(404);
    // The change's compile was rolled back with it: the same source is a new config afterwards (201, not 200).
    const created = await server.api.post(`${project.base}/agent-configs`, { source, source_format: "yaml" }, { token: project.token });
    expect(created.status, created.text).toBe(201);
  });

  it("answers 400 with the source's issues for a known agent, and appends nothing", async () => {
    const { project, agentId } = await agentOnFirstConfig();
    const before = await events(server.api, project, agentId);
    const reply = await change(project, agentId, { source: "instruction: 7\n", source_format: "yaml" });
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body.code).toBe("validation_failed");
    expect(reply.body.issues.length).toBeGreaterThan(0);
    expect(await events(server.api, project, agentId)).toHaveLength(before.length);
  });

  it("answers 409 when expected_current_config_id is not the current config", async () => {
    const { project, agentId, configId } = await agentOnFirstConfig();
    const first = await change(project, agentId, { source: yamlConfig(project, "", "Second."), source_format: "yaml", expected_current_config_id: configId });
    expect(first.status, first.text).toBe(200);
    const stale = await change(project, agentId, { source: yamlConfig(project, "", "Third."), source_format: "yaml", expected_current_config_id: configId });
    expect(stale.status, stale.text).toBe(409);
    const agent = await server.api.get(`${project.base}/agents/${agentId}`, { token: project.token });
    expect(agent.body.agent.current_config_id).toBe(first.body.agent_config.id);
  });

  it("replays an Idempotency-Key, even after the agent was archived, and refuses a new change to an archived agent", async () => {
    const { project, agentId } = await agentOnFirstConfig();
    const body = { source: yamlConfig(project, "", "Second."), source_format: "yaml" };
    const first = await change(project, agentId, body, "change-1");
    expect(first.status, first.text).toBe(200);
    expect((await server.api.post(`${project.base}/agents/${agentId}/archive`, {}, { token: project.token })).status).toBe(200);
    const replay = await change(project, agentId, body, "change-1");
    expect(replay.status, replay.text).toBe(200);
    expect(replay.body).toEqual(first.body);
    const other = await change(project, agentId, { source: yamlConfig(project, "", "Third."), source_format: "yaml" }, "change-1");
    expect(other.status, other.text).toBe(409);
    expect(other.body.code).toBe("idempotency_key_conflict");
    const archived = await change(project, agentId, { source: yamlConfig(project, "", "Third."), source_format: "yaml" });
    expect(archived.status, archived.text).toBe(409);
  });
});
