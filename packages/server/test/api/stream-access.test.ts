import { describe, expect, it } from "vitest";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, launch } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";
import { SseStream, type SseFrame } from "../support/sse.js";

/*
 * Open event streams re-check their caller's access (SVC_STREAM_ACCESS_RECHECK_MS, here 1 s): a revoked key
 * or a member removed from the org stops receiving, with an `error` frame that ends the stream (spec, Events:
 * after an error frame the client reconnects, and the reconnect is refused).
 */
const server = useTestServer({ SVC_STREAM_ACCESS_RECHECK_MS: "1000" });
const provider = useFakeProvider();

/** Frames until the first `error` frame, which is returned; the stream must end right after it. */
async function errorFrame(stream: SseStream): Promise<SseFrame> {
  for (;;) {
    const [frame] = await stream.frames(1, 15_000);
    if (frame!.event !== "error") continue;
    await expect(stream.next(15_000)).rejects.toThrow("the stream ended");
    return frame!;
  }
}

async function agentOf(project: Awaited<ReturnType<typeof agentProject>>) {
  return launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)));
}

describe("an open event stream whose caller loses access", () => {
  it("ends an agent's timeline stream with `unauthorized` once its org API key is revoked", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const agentId = await agentOf(project);
    const { token, key } = await server.api.orgKey(project.session, project.orgId, "admin");
    const stream = await SseStream.open(`${server.url}${project.base}/agents/${agentId}/events/stream`, { token });
    try {
      const revoked = await server.api.post(`/api/v1/orgs/${project.orgId}/api-keys/${key.id}/revoke`, undefined, { session: project.session });
      expect(revoked.status, revoked.text).toBe(200);
      const frame = await errorFrame(stream);
      expect(frame.json).toMatchObject({ code: "unauthorized" });
      expect(frame.json.error).toEqual(expect.any(String));
    } finally {
      stream.close();
    }
  });

  it("ends a project's activity stream with `forbidden` once its follower is removed from the org", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const admin = await server.api.orgMember({ session: project.session }, project.orgId, "admin");
    const stream = await SseStream.open(`${server.url}${project.base}/activity/stream`, { token: admin.token });
    try {
      const removed = await server.api.delete(`/api/v1/orgs/${project.orgId}/members/${admin.userId}`, { session: project.session });
      expect(removed.status, removed.text).toBe(204);
      expect((await errorFrame(stream)).json).toMatchObject({ code: "forbidden" });
    } finally {
      stream.close();
    }
  });

  it("keeps the stream of a caller who keeps access, past several checks", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const agentId = await agentOf(project);
    const stream = await SseStream.open(`${server.url}${project.base}/agents/${agentId}/events/stream`, { token: project.token });
    try {
      const launched = await stream.frames(1);
      expect(launched.map((f) => f.event)).toEqual(["agent_input"]);
      const meanwhile = await stream.quiet(3_500);
      expect(meanwhile.filter((item) => item.kind === "frame")).toEqual([]);
      // A config change is appended at once (an input waits for a worker to admit it).
      const changed = await server.api.post(`${project.base}/agents/${agentId}/config`, { source: yamlConfig(project), source_format: "yaml" }, { token: project.token });
      expect(changed.status, changed.text).toBe(200);
      const [input] = await stream.frames(1);
      expect(input).toMatchObject({ event: "agent_input" });
    } finally {
      stream.close();
    }
  });
});
