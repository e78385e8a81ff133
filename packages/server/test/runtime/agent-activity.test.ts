import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, eventually, finalOutputs, launch, providerRequests, untilEvents } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";

/*
 * The Agent resource's `activity` (what the agent is doing now) and the list's `activity` and `state`
 * filters, through HTTP, with a real worker and a fake provider speaking the real wire protocol.
 */

const server = useTestServer({}, { worker: true });
const provider = useFakeProvider();

async function agentOf(project: AgentProject, agentId: string) {
  const got = await server.api.get(`${project.base}/agents/${agentId}`, { token: project.token });
  expect(got.status, got.text).toBe(200);
  return got.body.agent;
}

const activityOf = async (project: AgentProject, agentId: string) => (await agentOf(project, agentId)).activity;

const untilActivity = (project: AgentProject, agentId: string, status: string) =>
  eventually(() => activityOf(project, agentId), (a) => a.status === status);

async function listIds(project: AgentProject, query: string): Promise<string[]> {
  const listed = await server.api.get(`${project.base}/agents${query}`, { token: project.token });
  expect(listed.status, listed.text).toBe(200);
  return listed.body.data.map((a: { id: string }) => a.id);
}

/** A loopback port nothing listens on: connecting to it is refused. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe("agent activity", () => {
  it("is idle after a launch with nothing to do, and shows in the list", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)));
    const activity = await untilActivity(project, agentId, "idle");
    expect(activity.since).toMatch(/^\d{4}-\d\d-\d\dT/);
    const listed = await server.api.get(`${project.base}/agents`, { token: project.token });
    expect(listed.body.data[0].activity).toMatchObject({ status: "idle" });
  });

  it("is running while the model is called, then cancelled after a cancel", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    provider.script({ hang: true });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)), "take your time");
    await providerRequests(provider, 1);
    expect(await activityOf(project, agentId)).toMatchObject({ status: "running", detail: "calling the model" });
    expect(await listIds(project, "?activity=running")).toEqual([agentId]);
    const cancel = await server.api.post(`${project.base}/agents/${agentId}/cancel`, {}, { token: project.token });
    expect(cancel.status, cancel.text).toBe(200);
    expect(await activityOf(project, agentId)).toMatchObject({ status: "cancelled" });
    expect(await listIds(project, "?activity=running")).toEqual([]);
    expect(await listIds(project, "?activity=cancelled")).toEqual([agentId]);
  });

  it("is waiting for a person while a question is open, with how many", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const question = { questions: [{ prompt: "Which colour?", options: [{ label: "red" }, { label: "blue" }] }] };
    provider.script({ toolCalls: [{ name: "ask_question", input: question }] }, { text: "Blue it is." });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project, "tools:\n  ask_question: {}\n")), "ask me");
    const activity = await untilActivity(project, agentId, "waiting");
    expect(activity).toMatchObject({ status: "waiting", open_interactions: 1, detail: "an answer (ask_question)" });
    expect(await listIds(project, "?activity=waiting,retrying")).toEqual([agentId]);
    expect(await listIds(project, "?activity=idle")).toEqual([]);
  });

  it("is failed with the error after a terminal model error", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    provider.script({ error: { status: 400, message: "bad request body" } });
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)), "hello");
    await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    const activity = await untilActivity(project, agentId, "failed");
    expect(activity.detail).toContain("bad request body");
    expect(await listIds(project, "?activity=failed")).toEqual([agentId]);
  });

  it("is retrying at once when the provider refuses connections, worded as the timeline words it", async () => {
    const project = await agentProject(server.api, `http://127.0.0.1:${await closedPort()}/v1`);
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)), "hello");
    const activity = await untilActivity(project, agentId, "retrying");
    expect(activity.max_attempts).toBe(8);
    expect(activity.attempt).toBeGreaterThanOrEqual(1);
    expect(activity.detail).toContain(`attempt ${activity.attempt} of 8; svc tries again in`);
    expect(activity.next_attempt_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(Date.parse(activity.next_attempt_at)).toBeGreaterThanOrEqual(Date.parse(activity.since));
    expect(await listIds(project, "?activity=retrying")).toEqual([agentId]);
    // Archiving ends the retries: the agent is archived, and only the archived list shows it.
    const archived = await server.api.post(`${project.base}/agents/${agentId}/archive`, undefined, { token: project.token });
    expect(archived.status, archived.text).toBe(200);
    expect(archived.body.agent.activity).toMatchObject({ status: "archived", since: archived.body.agent.archived_at });
    expect(await listIds(project, "")).toEqual([]);
    expect(await listIds(project, "?state=archived")).toEqual([agentId]);
    expect(await listIds(project, "?activity=archived")).toEqual([agentId]);
    expect(await listIds(project, "?activity=retrying")).toEqual([]);
  });

  it("refuses an unknown activity or state with 400 in the error envelope", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    for (const query of ["?activity=busy", "?activity=running,", "?state=deleted"]) {
      const listed = await server.api.get(`${project.base}/agents${query}`, { token: project.token });
      expect(listed.status, query).toBe(400);
      expect(listed.body.code).toBe("invalid_request");
    }
  });
});
