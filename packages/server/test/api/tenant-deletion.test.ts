import { describe, expect, it } from "vitest";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, launch, send } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";

/*
 * Deleting a project or an organization removes everything in it, agents with their inputs, actors,
 * profiles and configs included (issue 9, F1: once an agent had an input, both answered 500 and deleted
 * nothing). No worker runs here, so the agents' inputs are still queued when the deletion comes.
 */
const server = useTestServer();
const provider = useFakeProvider({ reset: false });

/** A project whose agent has inputs attributed to the user and to an external actor, and a profile. */
async function busyProject(): Promise<AgentProject & { agentId: string }> {
  const project = await agentProject(server.api, provider.baseUrl);
  const configId = await createConfig(server.api, project, yamlConfig(project));
  const agentId = await launch(server.api, project, configId, "hello");
  await send(server.api, project, agentId, "a second input");
  const { token } = await server.api.orgKey(project.session, project.orgId, "admin");
  const external = await server.api.post(
    `${project.base}/agents/${agentId}/inputs`,
    { content_blocks: [{ type: "text", text: "from outside" }], actor: { provider_user_id: "u-1", display_name: "Outsider" } },
    { token },
  );
  expect(external.status, external.text).toBe(201);
  const profile = await server.api.post(`${project.base}/agent-profiles`, { name: "helper", config: configId }, { token: project.token });
  expect(profile.status, profile.text).toBe(201);
  return { ...project, agentId };
}

describe("deleting a tenant's data", () => {
  it("deletes a project whose agents have inputs, actors and profiles, and nothing of it remains", async () => {
    const project = await busyProject();
    const deleted = await server.api.delete(project.base, { token: project.token });
    expect(deleted.status, deleted.text).toBe(204);
    expect((await server.api.get(project.base, { token: project.token })).status).toBe(404);
    expect((await server.api.get(`${project.base}/agents/${project.agentId}`, { token: project.token })).status).toBe(404);
    expect((await server.api.get(`/api/v1/orgs/${project.orgId}`, { token: project.token })).status).toBe(200);
  });

  it("deletes an organization whose agents have inputs, actors and profiles", async () => {
    const project = await busyProject();
    const deleted = await server.api.delete(`/api/v1/orgs/${project.orgId}`, { token: project.token });
    expect(deleted.status, deleted.text).toBe(204);
    expect((await server.api.get(`/api/v1/orgs/${project.orgId}`, { token: project.token })).status).toBe(404);
  });

  it("tells an org member who cannot see a project nothing about it: 404 for a real one as for a made-up one (F7)", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const member = await server.api.orgMember({ token: project.token }, project.orgId);
    const madeUp = project.base.replace(/proj_[a-z2-7]{26}$/, `proj_${"a".repeat(26)}`);
    expect((await server.api.delete(project.base, { token: member.token })).status).toBe(404);
    expect((await server.api.delete(madeUp, { token: member.token })).status).toBe(404);
    // Once the member has a role on the project, the project is theirs to see but not to delete.
    const granted = await server.api.put(`/api/v1/orgs/${project.orgId}/members/${member.userId}/projects/${project.projectId}`, { role: "admin" }, { token: project.token });
    expect(granted.status, granted.text).toBe(200);
    expect((await server.api.delete(project.base, { token: member.token })).status).toBe(403);
    expect((await server.api.get(project.base, { token: project.token })).status).toBe(200);
  });
});
