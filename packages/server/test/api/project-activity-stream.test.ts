import { describe, expect, it } from "vitest";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, launch, untilEvents, finalOutputs } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";
import { refusedStream, SseStream, type SseFrame } from "../support/sse.js";

/*
 * GET …/projects/{projectID}/activity/stream: an `agent` frame (the agent as the list shows it) whenever one of
 * the project's agents changes what it is doing, with a real worker and a fake provider.
 */

const server = useTestServer({}, { worker: true });
const provider = useFakeProvider();

const follow = (project: AgentProject, token = project.token) => SseStream.open(`${server.url}${project.base}/activity/stream`, { token });

/** Frames until one about `agentId` satisfies `check`; every frame read on the way is returned too. */
async function untilAgentFrame(stream: SseStream, agentId: string, check: (agent: any) => boolean): Promise<SseFrame[]> {
  const seen: SseFrame[] = [];
  for (;;) {
    const [frame] = await stream.frames(1);
    seen.push(frame!);
    if (frame!.event === "agent" && frame!.json.id === agentId && check(frame!.json)) return seen;
  }
}

describe("a project's activity stream", () => {
  it("shows an agent launched, running and idle as the list shows it, and archived", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const config = await createConfig(server.api, project, yamlConfig(project));
    const stream = await follow(project);
    try {
      provider.script({ text: "Hello there." });
      const agentId = await launch(server.api, project, config, "hello");
      const seen = await untilAgentFrame(stream, agentId, (agent) => agent.activity.status === "idle");
      const statuses = seen.filter((f) => f.json?.id === agentId).map((f) => f.json.activity.status);
      // Every frame is a change: the same view is never sent twice in a row.
      for (let i = 1; i < seen.length; i++) expect(seen[i]!.data).not.toBe(seen[i - 1]!.data);
      expect(statuses.at(-1)).toBe("idle");
      expect(seen.every((f) => f.event === "agent" && f.id === undefined)).toBe(true);
      await untilEvents(server.api, project, agentId, (events) => finalOutputs(events).length === 1);

      const listed = await server.api.get(`${project.base}/agents`, { token: project.token });
      const idle = seen.at(-1)!.json;
      expect(idle).toEqual(listed.body.data[0]);

      const archived = await server.api.post(`${project.base}/agents/${agentId}/archive`, {}, { token: project.token });
      expect(archived.status, archived.text).toBe(200);
      const [last] = (await untilAgentFrame(stream, agentId, (agent) => agent.state === "archived")).slice(-1);
      expect(last!.json).toMatchObject({ id: agentId, state: "archived", activity: { status: "archived" } });
    } finally {
      stream.close();
    }
  });

  it("shows an agent waiting for a person, with what it waits for", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const question = { questions: [{ prompt: "Which colour?", options: [{ label: "red" }, { label: "blue" }] }] };
    provider.script({ toolCalls: [{ name: "ask_question", input: question }] }, { text: "Blue it is." });
    const config = await createConfig(server.api, project, yamlConfig(project, "tools:\n  ask_question: {}\n"));
    const stream = await follow(project);
    try {
      const agentId = await launch(server.api, project, config, "ask me");
      const [waiting] = (await untilAgentFrame(stream, agentId, (agent) => agent.activity.status === "waiting")).slice(-1);
      expect(waiting!.json.activity).toMatchObject({ status: "waiting", open_interactions: 1, detail: "an answer (ask_question)" });
    } finally {
      stream.close();
    }
  });

  it("shows only the project's own agents", async () => {
    const mine = await agentProject(server.api, provider.baseUrl);
    const other = await agentProject(server.api, provider.baseUrl);
    const stream = await follow(mine);
    try {
      provider.script({ text: "Theirs." }, { text: "Mine." });
      const theirs = await launch(server.api, other, await createConfig(server.api, other, yamlConfig(other)), "theirs");
      await untilEvents(server.api, other, theirs, (events) => finalOutputs(events).length === 1);
      const own = await launch(server.api, mine, await createConfig(server.api, mine, yamlConfig(mine)), "mine");
      const seen = await untilAgentFrame(stream, own, (agent) => agent.activity.status === "idle");
      expect(seen.map((f) => f.json.id).filter((id) => id !== own)).toEqual([]);
    } finally {
      stream.close();
    }
  });

  it("is refused without a credential (401) and to another organization (404)", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const stranger = await server.api.userWithOrg("Elsewhere");
    expect((await refusedStream(`${server.url}${project.base}/activity/stream`)).status).toBe(401);
    const refused = await refusedStream(`${server.url}${project.base}/activity/stream`, { token: stranger.token });
    expect(refused.status).toBe(404);
    expect(refused.json).toMatchObject({ code: "not_found" });
  });
});
