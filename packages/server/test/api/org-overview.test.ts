import { describe, expect, it } from "vitest";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, launch } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";
import { countStatements } from "../support/statements.js";

/** GET /orgs/{orgID}/overview (getOrgOverview): what the caller can see, bounded, in a fixed number of statements. */
// Statements are counted exactly: no background receipts processor runs beside the requests.
const server = useTestServer({}, { followReceipts: false });
const provider = useFakeProvider({ reset: false });
const api = () => server.api;

interface Item {
  id: string;
  project_id?: string;
  updated_at: string;
}

/** A project of the org with the org's model granted, as `agentProject` sets up its default project. */
async function addProject(owner: AgentProject, name: string): Promise<AgentProject> {
  const created = await api().post(`/api/v1/orgs/${owner.orgId}/projects`, { name }, { token: owner.token });
  expect(created.status, created.text).toBe(201);
  const base = `/api/v1/orgs/${owner.orgId}/projects/${created.body.id}`;
  const grant = await api().post(`${base}/model-grants`, { configured_model_id: owner.configuredModelId }, { token: owner.token });
  expect(grant.status, grant.text).toBe(201);
  return { ...owner, projectId: created.body.id, base };
}

async function addProfile(project: AgentProject, name: string): Promise<string> {
  const config = await createConfig(api(), project, yamlConfig(project));
  const reply = await api().post(`${project.base}/agent-profiles`, { name, config }, { token: project.token });
  expect(reply.status, reply.text).toBe(201);
  return reply.body.id as string;
}

/** An org with projects Default, Alpha and Beta, 7 agents (one archived) and 6 profiles spread over them. */
async function busyOrg() {
  const owner = await agentProject(api(), provider.baseUrl);
  const alpha = await addProject(owner, "Alpha");
  const beta = await addProject(owner, "Beta");
  const agents: Record<string, string[]> = { [owner.projectId]: [], [alpha.projectId]: [], [beta.projectId]: [] };
  const profiles: Record<string, string[]> = { [owner.projectId]: [], [alpha.projectId]: [], [beta.projectId]: [] };
  for (const [project, count] of [[owner, 1], [alpha, 2], [beta, 4]] as const) {
    const config = await createConfig(api(), project, yamlConfig(project));
    for (let i = 0; i < count; i++) agents[project.projectId]!.push(await launch(api(), project, config));
  }
  for (const [project, count] of [[owner, 2], [alpha, 2], [beta, 2]] as const) {
    for (let i = 0; i < count; i++) profiles[project.projectId]!.push(await addProfile(project, `${project.projectId.slice(-6)}-${i}`));
  }
  // Archived agents leave the overview, however recently they changed.
  const archived = agents[beta.projectId]!.pop()!;
  expect((await api().post(`${beta.base}/agents/${archived}/archive`, {}, { token: owner.token })).status).toBe(200);
  return { owner, alpha, beta, agents, profiles, archived };
}

/** Every item of `path`'s list, as the list shows it. */
async function listed(path: string, token: string): Promise<Item[]> {
  const reply = await api().get(`${path}?limit=100`, { token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.data;
}

/** `shown` is the newest `limit` of `all` by updated_at, newest first. */
function expectNewest(shown: Item[], all: Item[], limit: number) {
  expect(shown).toHaveLength(Math.min(limit, all.length));
  const times = shown.map((item) => item.updated_at);
  expect([...times].sort().reverse()).toEqual(times);
  const left = all.filter((item) => !shown.some((s) => s.id === item.id));
  for (const item of left) expect(item.updated_at <= times.at(-1)!).toBe(true);
  // Each item is the resource exactly as its own list shows it.
  for (const item of shown) expect(all).toContainEqual(item);
}

describe("the org overview", () => {
  it("shows an owner every project newest first, and the 5 most recently updated active agents and profiles", async () => {
    const { owner, alpha, beta, archived } = await busyOrg();
    const reply = await api().get(`/api/v1/orgs/${owner.orgId}/overview`, { token: owner.token });
    expect(reply.status, reply.text).toBe(200);
    expect(Object.keys(reply.body).sort()).toEqual(["projects", "recent_agent_profiles", "recent_agents"]);

    const projects = await listed(`/api/v1/orgs/${owner.orgId}/projects`, owner.token);
    expect(reply.body.projects).toEqual(projects);
    expect(reply.body.projects.map((p: Item) => p.id)).toEqual([beta.projectId, alpha.projectId, owner.projectId]);

    const bases = [owner.base, alpha.base, beta.base];
    const agents = (await Promise.all(bases.map((base) => listed(`${base}/agents`, owner.token)))).flat();
    expect(agents).toHaveLength(6);
    expectNewest(reply.body.recent_agents, agents, 5);
    expect(reply.body.recent_agents.map((a: Item) => a.id)).not.toContain(archived);

    const profiles = (await Promise.all(bases.map((base) => listed(`${base}/agent-profiles`, owner.token)))).flat();
    expect(profiles).toHaveLength(6);
    expectNewest(reply.body.recent_agent_profiles, profiles, 5);
  });

  it("puts the profile changed last first", async () => {
    const { owner, profiles } = await busyOrg();
    const oldest = profiles[owner.projectId]![0]!;
    const overview = `/api/v1/orgs/${owner.orgId}/overview`;
    expect((await api().get(overview, { token: owner.token })).body.recent_agent_profiles.map((p: Item) => p.id)).not.toContain(oldest);
    const renamed = await api().patch(`${owner.base}/agent-profiles/${oldest}`, { name: "renamed" }, { token: owner.token });
    expect(renamed.status, renamed.text).toBe(200);
    expect((await api().get(overview, { token: owner.token })).body.recent_agent_profiles[0]).toEqual(renamed.body);
  });

  it("shows a member only the projects granted to them, and their agents and profiles", async () => {
    const { owner, alpha, agents, profiles } = await busyOrg();
    const member = await api().orgMember({ token: owner.token }, owner.orgId, "member");
    const overview = `/api/v1/orgs/${owner.orgId}/overview`;
    expect((await api().get(overview, { token: member.token })).body).toEqual({ projects: [], recent_agents: [], recent_agent_profiles: [] });

    const grant = await api().put(`/api/v1/orgs/${owner.orgId}/members/${member.userId}/projects/${alpha.projectId}`, { role: "viewer" }, { token: owner.token });
    expect(grant.status, grant.text).toBe(200);
    const reply = await api().get(overview, { token: member.token });
    expect(reply.status).toBe(200);
    expect(reply.body.projects).toEqual([
      expect.objectContaining({ id: alpha.projectId, access: { can_read: true, can_manage: false, can_manage_access: false, can_operate: false } }),
    ]);
    expect(reply.body.recent_agents.map((a: Item) => a.id).sort()).toEqual([...agents[alpha.projectId]!].sort());
    expect(reply.body.recent_agent_profiles.map((p: Item) => p.id).sort()).toEqual([...profiles[alpha.projectId]!].sort());

    // An org key acts as the org with its own roles: an admin key sees every project.
    const { token: adminKey } = await api().orgKey(owner.session, owner.orgId, "admin");
    const byKey = await api().get(overview, { token: adminKey });
    expect(byKey.status).toBe(200);
    expect(byKey.body.projects).toHaveLength(3);
    expect(byKey.body.recent_agents).toHaveLength(5);
  });

  it("is a 404 for an org the caller cannot see, and for a malformed id", async () => {
    const { owner } = await busyOrg();
    const outsider = await api().userWithOrg();
    const hidden = await api().get(`/api/v1/orgs/${owner.orgId}/overview`, { token: outsider.token });
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual({ error: expect.any(String), code: "not_found" });
    expect((await api().get(`/api/v1/orgs/org_nope/overview`, { token: owner.token })).status).toBe(404);
    expect((await api().get(`/api/v1/orgs/${owner.orgId}/overview`)).status).toBe(401);
  });

  it("reads in three statements after access, however many projects the org has", async () => {
    const owner = await agentProject(api(), provider.baseUrl);
    await launch(api(), owner, await createConfig(api(), owner, yamlConfig(owner)));
    const member = await api().orgMember({ token: owner.token }, owner.orgId, "member");
    const read = async (token: string) => {
      const overview = () => api().get(`/api/v1/orgs/${owner.orgId}/overview`, { token });
      expect((await overview()).status).toBe(200); // fills the access cache
      const stop = countStatements(server);
      const reply = await overview();
      const count = stop();
      expect(reply.status).toBe(200);
      return { statements: count.statements, transactions: count.transactions };
    };
    const cost = { statements: 3, transactions: 1 };
    expect(await read(owner.token)).toEqual(cost);
    expect(await read(member.token)).toEqual(cost);

    for (let i = 0; i < 8; i++) {
      const project = await addProject(owner, `More ${i}`);
      await launch(api(), project, await createConfig(api(), project, yamlConfig(project)));
      await addProfile(project, `profile-${i}`);
      const granted = await api().put(`/api/v1/orgs/${owner.orgId}/members/${member.userId}/projects/${project.projectId}`, { role: "viewer" }, { token: owner.token });
      expect(granted.status).toBe(200);
    }
    expect(await read(owner.token)).toEqual(cost);
    expect(await read(member.token)).toEqual(cost);
  });
});
