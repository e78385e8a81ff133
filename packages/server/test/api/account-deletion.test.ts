import { describe, expect, it } from "vitest";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, launch } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";
import { skillZip, uploadSkill } from "./skills-fixtures.js";

/** DELETE /me (deleteCurrentUser): what goes with an account, what stays, and when it is refused. */
const server = useTestServer({ SVC_MACHINE_PROVIDERS: "local" });
const provider = useFakeProvider({ reset: false });
const api = () => server.api;

const unauthorized = { error: expect.any(String), code: "unauthorized" };

describe("deleting one's account", () => {
  it("answers 204, ends every session and token, and frees the email for a new account", async () => {
    const session = await api().signup({ email: "leaving@example.com", password: "first password" });
    const other = await api().login("leaving@example.com", "first password");
    const token = await api().pat(session);

    const reply = await api().delete("/api/v1/me", { session });
    expect(reply.status, reply.text).toBe(204);
    expect(reply.text).toBe("");

    for (const auth of [{ session }, { session: other }, { token }]) {
      const me = await api().get("/api/v1/me", auth);
      expect(me.status).toBe(401);
      expect(me.body).toEqual(unauthorized);
    }
    expect((await api().post("/api/auth/login", { email: "leaving@example.com", password: "first password" })).status).toBe(401);

    const again = await api().signup({ email: "Leaving@Example.com", password: "second password" });
    expect(again.userId).not.toBe(session.userId);
    expect((await api().get("/api/v1/me", { session: again })).body).toEqual({
      user: { id: again.userId, email: "Leaving@Example.com", display_name: expect.any(String) },
      orgs: [],
    });
    // The new account's token list starts empty: nothing of the old account carried over.
    expect((await api().get("/api/v1/personal-access-tokens", { session: again })).body).toEqual({ data: [], next_cursor: null });
  });

  it("accepts a personal access token", async () => {
    const session = await api().signup();
    const token = await api().pat(session);
    expect((await api().delete("/api/v1/me", { token })).status).toBe(204);
    expect((await api().get("/api/v1/me", { token })).status).toBe(401);
  });

  it("refuses a browser session without the CSRF header, and organization API keys", async () => {
    const { session, org } = await api().userWithOrg();
    const noCsrf = await api().delete("/api/v1/me", { session, noCsrf: true });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.body.code).toBe("csrf_check_failed");
    const { token: orgKey } = await api().orgKey(session, org.id, "admin");
    const byKey = await api().delete("/api/v1/me", { token: orgKey });
    expect(byKey.status).toBe(403);
    expect(byKey.body).toEqual({ error: expect.any(String), code: "forbidden" });
    expect((await api().get("/api/v1/me", { session })).status).toBe(200);
  });
});

describe("the last owner of an organization", () => {
  it("is refused with 409 naming the org, keeps everything, and may leave once another member owns it", async () => {
    const owner = await api().userWithOrg("Solo Works");
    const refused = await api().delete("/api/v1/me", { token: owner.token });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ error: expect.stringContaining(`"Solo Works" (${owner.org.id})`), code: "conflict" });
    const me = await api().get("/api/v1/me", { token: owner.token });
    expect(me.status).toBe(200);
    expect(me.body.orgs).toEqual([expect.objectContaining({ id: owner.org.id, role: "owner" })]);

    // An admin is not an owner: still refused.
    const admin = await api().orgMember({ token: owner.token }, owner.org.id, "admin");
    expect((await api().delete("/api/v1/me", { token: owner.token })).status).toBe(409);

    const heir = await api().orgMember({ token: owner.token }, owner.org.id, "owner");
    expect((await api().delete("/api/v1/me", { token: owner.token })).status).toBe(204);

    const org = `/api/v1/orgs/${owner.org.id}`;
    expect((await api().get(org, { token: heir.token })).status).toBe(200);
    expect((await api().get(`${org}/projects/${owner.project.id}`, { token: heir.token })).status).toBe(200);
    const members = await api().get(`${org}/members`, { token: heir.token });
    expect(members.body.data.map((m: { user_id: string }) => m.user_id).sort()).toEqual([admin.userId, heir.userId].sort());
  });

  it("refuses while the user is the only owner of any one of several orgs", async () => {
    const user = await api().userWithOrg("Shared Co");
    await api().orgMember({ token: user.token }, user.org.id, "owner");
    const second = await api().post("/api/v1/orgs", { name: "Mine Alone" }, { token: user.token });
    expect(second.status).toBe(201);
    const refused = await api().delete("/api/v1/me", { token: user.token });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toContain(`"Mine Alone" (${second.body.org.id})`);
    expect(refused.body.error).not.toContain("Shared Co");
    expect((await api().delete(`/api/v1/orgs/${second.body.org.id}`, { token: user.token })).status).toBe(204);
    expect((await api().delete("/api/v1/me", { token: user.token })).status).toBe(204);
  });
});

describe("what goes with the account and what stays", () => {
  it("removes the memberships and the user's own secrets; projects the user made stay", async () => {
    const owner = await api().userWithOrg();
    const orgId = owner.org.id as string;
    const leaver = await api().orgMember({ token: owner.token }, orgId, "admin");
    const secret = await api().post(
      `/api/v1/orgs/${orgId}/secrets`,
      { owner: { kind: "user" }, name: "my key", material: { kind: "generic", value: "private" } },
      { token: leaver.token },
    );
    expect(secret.status, secret.text).toBe(201);
    const grant = await api().post(`/api/v1/orgs/${orgId}/secrets/${secret.body.id}/grants`, { target_project_id: owner.project.id }, { token: leaver.token });
    expect(grant.status, grant.text).toBe(201);
    const made = await api().post(`/api/v1/orgs/${orgId}/projects`, { name: "Made by the leaver" }, { token: leaver.token });
    expect(made.status).toBe(201);
    const available = `/api/v1/orgs/${orgId}/projects/${owner.project.id}/secrets`;
    const secretIds = async () => (await api().get(available, { token: owner.token })).body.data.map((s: any) => s.secret.id);
    expect(await secretIds()).toContain(secret.body.id);

    expect((await api().delete("/api/v1/me", { token: leaver.token })).status).toBe(204);

    expect(await secretIds()).not.toContain(secret.body.id);
    const members = await api().get(`/api/v1/orgs/${orgId}/members`, { token: owner.token });
    expect(members.body.data.map((m: { user_id: string }) => m.user_id)).toEqual([owner.userId]);
    expect((await api().get(`/api/v1/orgs/${orgId}/projects/${made.body.id}`, { token: owner.token })).status).toBe(200);
  });

  it("refuses while an active agent attaches the user's skill; archived, the skill goes with the account and the agent stays", async () => {
    const project = await agentProject(api(), provider.baseUrl);
    const leaver = await api().orgMember({ token: project.token }, project.orgId, "admin");
    const auth = { token: leaver.token };
    const skill = await uploadSkill(server.url, auth, project.orgId, { kind: "user" }, skillZip("personal-notes"));
    const grant = await api().post(`/api/v1/orgs/${project.orgId}/skills/${skill.id}/grants`, { target_project_id: project.projectId }, auth);
    expect(grant.status, grant.text).toBe(201);
    const config = await createConfig(api(), { ...project, token: leaver.token }, yamlConfig(project, `skills: [${skill.id}]\n`));
    const agentId = await launch(api(), { ...project, token: leaver.token }, config);

    const refused = await api().delete("/api/v1/me", auth);
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ error: expect.stringContaining('"personal-notes"'), code: "conflict" });
    expect((await api().get(`/api/v1/orgs/${project.orgId}/skills/${skill.id}`, auth)).status).toBe(200);

    expect((await api().post(`${project.base}/agents/${agentId}/archive`, {}, auth)).status).toBe(200);
    expect((await api().delete("/api/v1/me", auth)).status).toBe(204);

    const skills = await api().get(`${project.base}/skills`, { token: project.token });
    expect(skills.body.data).toEqual([]);
    const agent = await api().get(`${project.base}/agents/${agentId}`, { token: project.token });
    expect(agent.status).toBe(200);
    expect(agent.body.agent).toMatchObject({ id: agentId, state: "archived" });
  });

  it("refuses while a machine pool grant uses the user's secret, until it stops", async () => {
    const owner = await api().userWithOrg();
    const orgId = owner.org.id as string;
    const leaver = await api().orgMember({ token: owner.token }, orgId, "admin");
    const secret = await api().post(
      `/api/v1/orgs/${orgId}/secrets`,
      { owner: { kind: "user" }, name: "my npm token", material: { kind: "generic", value: "npm" } },
      { token: leaver.token },
    );
    expect(secret.status, secret.text).toBe(201);
    const shared = await api().post(`/api/v1/orgs/${orgId}/secrets/${secret.body.id}/grants`, { target_project_id: owner.project.id }, { token: leaver.token });
    expect(shared.status, shared.text).toBe(201);
    const pool = await api().post(`/api/v1/orgs/${orgId}/machine-pools`, { name: "builders", provider: "local", max_total_machines: 1 }, { token: owner.token });
    expect(pool.status, pool.text).toBe(201);
    const grants = `/api/v1/orgs/${orgId}/projects/${owner.project.id}/machine-pool-grants`;
    const grant = await api().post(grants, { machine_pool_id: pool.body.id, default_machine_secret_env_overlay: { NPM_TOKEN: secret.body.id } }, { token: owner.token });
    expect(grant.status, grant.text).toBe(201);

    const refused = await api().delete("/api/v1/me", { token: leaver.token });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ error: expect.stringContaining('machine pool "builders"'), code: "conflict" });
    expect((await api().get(`/api/v1/orgs/${orgId}/secrets/${secret.body.id}`, { token: leaver.token })).status).toBe(200);

    expect((await api().patch(`${grants}/${grant.body.id}`, { default_machine_secret_env_overlay: {} }, { token: owner.token })).status).toBe(200);
    expect((await api().delete("/api/v1/me", { token: leaver.token })).status).toBe(204);
  });
});
