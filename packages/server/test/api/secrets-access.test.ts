import { describe, expect, it } from "vitest";
import { encodeId, newUuid } from "../../src/platform/ids.js";
import { useTestServer } from "../support/server.js";
import { collect, createSecret, generic, GRANT_ID, ISO, sortedBy, VALUE_MARKER } from "./secrets-fixtures.js";

const server = useTestServer();

/** An owner's org with extra projects by name. */
async function orgWithProjects(...projectNames: string[]) {
  const owner = await server.api.userWithOrg();
  const projects: Record<string, any> = { Default: owner.project };
  for (const name of projectNames) {
    const reply = await server.api.post(`/api/v1/orgs/${owner.org.id}/projects`, { name }, { token: owner.token });
    expect(reply.status).toBe(201);
    projects[name] = reply.body;
  }
  return { ...owner, orgId: owner.org.id as string, projects };
}

async function setProjectRole(managerToken: string, orgId: string, userId: string, projectId: string, role: string) {
  const reply = await server.api.put(`/api/v1/orgs/${orgId}/members/${userId}/projects/${projectId}`, { role }, { token: managerToken });
  expect(reply.status, reply.text).toBe(200);
}

describe("grants", () => {
  it("grants a secret to projects, lists the grants with their projects, and revokes them", async () => {
    const { token, orgId, projects } = await orgWithProjects("Alpha", "Beta", "Gamma");
    const secret = await createSecret(server.api, token, orgId, { owner: { kind: "org" }, name: "shared" });
    const grants = `/api/v1/orgs/${orgId}/secrets/${secret.id}/grants`;

    const created = await server.api.post(grants, { target_project_id: projects.Alpha.id }, { token });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(GRANT_ID),
      org_id: orgId,
      secret_id: secret.id,
      target_project_id: projects.Alpha.id,
      created_at: expect.stringMatching(ISO),
    });
    const listed = await server.api.get(grants, { token });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ data: [{ grant: created.body, target_project: projects.Alpha }], next_cursor: null });

    const twice = await server.api.post(grants, { target_project_id: projects.Alpha.id }, { token });
    expect(twice.status).toBe(409);
    expect(twice.body).toEqual({ error: expect.any(String), code: "conflict" });

    const removed = await server.api.delete(`${grants}/${created.body.id}`, { token });
    expect(removed.status).toBe(204);
    expect((await server.api.delete(`${grants}/${created.body.id}`, { token })).status).toBe(404);
    expect((await server.api.get(grants, { token })).body.data).toEqual([]);
    const again = await server.api.post(grants, { target_project_id: projects.Alpha.id }, { token });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(created.body.id);
  });

  it("pages, sorts and filters grants by the target project's name", async () => {
    const { token, orgId, projects } = await orgWithProjects("delta", "Alpha", "charlie", "Bravo", "a*c");
    const secret = await createSecret(server.api, token, orgId, { owner: { kind: "user" }, name: "mine" });
    const grants = `/api/v1/orgs/${orgId}/secrets/${secret.id}/grants`;
    const items: any[] = [];
    for (const name of ["delta", "Alpha", "charlie", "Bravo", "a*c", "Default"]) {
      const reply = await server.api.post(grants, { target_project_id: projects[name].id }, { token });
      expect(reply.status).toBe(201);
      items.push({ id: reply.body.id, name, created_at: reply.body.created_at });
    }
    for (const sort of ["-created_at", "created_at", "name", "-name"]) {
      for (const limit of [1, 4]) {
        const pages = await collect(server.api, `${grants}?sort=${sort}&limit=${limit}`, token);
        expect(pages.map((g) => g.grant.id), `${sort} ${limit}`).toEqual(sortedBy(items, sort).map((g) => g.id));
      }
    }
    const named = async (glob: string) => (await collect(server.api, `${grants}?name=${encodeURIComponent(glob)}`, token)).map((g) => g.target_project.name);
    expect(await named("a*")).toEqual(["a*c", "Alpha"]);
    expect(await named("a\\*c")).toEqual(["a*c"]);
    expect(await named("?ravo")).toEqual(["Bravo"]);
    expect((await server.api.get(`${grants}?sort=updated_at`, { token })).status).toBe(400);
  });

  it("refuses to grant a project its own secret, and projects it cannot reach", async () => {
    const { token, orgId, projects } = await orgWithProjects("Beta");
    const owned = await createSecret(server.api, token, orgId, { owner: { kind: "project", project_id: projects.Default.id }, name: "own" });
    const grants = `/api/v1/orgs/${orgId}/secrets/${owned.id}/grants`;
    const self = await server.api.post(grants, { target_project_id: projects.Default.id }, { token });
    expect(self.status).toBe(409);
    expect(self.body.code).toBe("conflict");
    expect((await server.api.post(grants, { target_project_id: projects.Beta.id }, { token })).status).toBe(201);

    const foreign = await server.api.userWithOrg();
    const elsewhere = await server.api.post(grants, { target_project_id: foreign.project.id }, { token });
    expect(elsewhere.status).toBe(404);
    const unknown = await server.api.post(grants, { target_project_id: encodeId("project", newUuid()) }, { token });
    expect(unknown.status).toBe(404);
    const wrongSecret = await server.api.delete(`/api/v1/orgs/${orgId}/secrets/${owned.id}/grants/${encodeId("secretGrant", newUuid())}`, { token });
    expect(wrongSecret.status).toBe(404);
  });
});

describe("secrets available to a project", () => {
  it("shows owned secrets as direct and granted ones with their grant, with filters", async () => {
    const { token, orgId, projects } = await orgWithProjects("Beta");
    const p1 = projects.Default.id;
    const direct = await createSecret(server.api, token, orgId, { owner: { kind: "project", project_id: p1 }, name: "direct", metadata: { env: "prod" } });
    const orgShared = await createSecret(server.api, token, orgId, {
      owner: { kind: "org" },
      name: "org-shared",
      metadata: { env: "prod" },
      material: { kind: "aws_credentials", access_key_id: "a", secret_access_key: "b" },
    });
    const userShared = await createSecret(server.api, token, orgId, { owner: { kind: "user" }, name: "user-shared" });
    const notShared = await createSecret(server.api, token, orgId, { owner: { kind: "org" }, name: "not-shared" });
    const elsewhere = await createSecret(server.api, token, orgId, { owner: { kind: "project", project_id: projects.Beta.id }, name: "beta-only" });
    const grant = async (secretId: string) =>
      (await server.api.post(`/api/v1/orgs/${orgId}/secrets/${secretId}/grants`, { target_project_id: p1 }, { token })).body;
    const orgGrant = await grant(orgShared.id);
    const userGrant = await grant(userShared.id);

    const base = `/api/v1/orgs/${orgId}/projects/${p1}/secrets`;
    const all = await server.api.get(base, { token });
    expect(all.status).toBe(200);
    expect(all.text).not.toContain(VALUE_MARKER);
    expect(all.body).toEqual({
      data: [
        { secret: userShared, availability: { source: "grant", project_id: p1, grant_id: userGrant.id } },
        { secret: orgShared, availability: { source: "grant", project_id: p1, grant_id: orgGrant.id } },
        { secret: direct, availability: { source: "direct", project_id: p1 } },
      ],
      next_cursor: null,
    });
    const names = async (query: string) => {
      const reply = await server.api.get(`${base}${query}`, { token });
      expect(reply.status, query).toBe(200);
      return reply.body.data.map((a: any) => a.secret.name).sort();
    };
    expect(await names("?availability_source=direct")).toEqual(["direct"]);
    expect(await names("?availability_source=grant")).toEqual(["org-shared", "user-shared"]);
    expect(await names("?owner_kind=org")).toEqual(["org-shared"]);
    expect(await names("?owner_kind=user&availability_source=grant")).toEqual(["user-shared"]);
    expect(await names("?owner_kind=project&availability_source=grant")).toEqual([]);
    expect(await names("?kind=aws_credentials")).toEqual(["org-shared"]);
    expect(await names("?metadata[env]=prod")).toEqual(["direct", "org-shared"]);
    expect(await names("?metadata[env]=prod&availability_source=grant")).toEqual(["org-shared"]);
    expect(await names("?name=*SHARED")).toEqual(["org-shared", "user-shared"]);
    const paged = await collect(server.api, `${base}?sort=name&limit=1`, token);
    expect(paged.map((a) => a.secret.name)).toEqual(["direct", "org-shared", "user-shared"]);
    for (const query of ["?availability_source=inherited", "?owner_project_id=" + p1, "?mcp_oauth_flow_id=" + encodeId("mcpOAuthFlow", newUuid())]) {
      expect((await server.api.get(`${base}${query}`, { token })).status, query).toBe(400);
    }

    const one = await server.api.get(`${base}/${orgShared.id}`, { token });
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ secret: orgShared, availability: { source: "grant", project_id: p1, grant_id: orgGrant.id } });
    expect((await server.api.get(`${base}/${direct.id}`, { token })).body.availability).toEqual({ source: "direct", project_id: p1 });
    for (const hidden of [notShared, elsewhere]) {
      const reply = await server.api.get(`${base}/${hidden.id}`, { token });
      expect(reply.status).toBe(404);
      expect(reply.body.code).toBe("not_found");
    }

    await server.api.delete(`/api/v1/orgs/${orgId}/secrets/${orgShared.id}/grants/${orgGrant.id}`, { token });
    expect(await names("")).toEqual(["direct", "user-shared"]);
    expect((await server.api.get(`${base}/${orgShared.id}`, { token })).status).toBe(404);
    const beta = await server.api.get(`/api/v1/orgs/${orgId}/projects/${projects.Beta.id}/secrets`, { token });
    expect(beta.body.data.map((a: any) => [a.secret.name, a.availability.source])).toEqual([["beta-only", "direct"]]);
  });
});

describe("permissions", () => {
  it("gives each caller the union of what it may list, and never another user's secrets", async () => {
    const { token, orgId, projects } = await orgWithProjects("Beta");
    const [p1, p2] = [projects.Default.id, projects.Beta.id];
    const member = await server.api.orgMember({ token }, orgId, "member");
    const admin = await server.api.orgMember({ token }, orgId, "admin");
    await setProjectRole(token, orgId, member.userId, p1, "developer");
    await createSecret(server.api, token, orgId, { owner: { kind: "org" }, name: "org" });
    await createSecret(server.api, token, orgId, { owner: { kind: "project", project_id: p1 }, name: "p1" });
    await createSecret(server.api, token, orgId, { owner: { kind: "project", project_id: p2 }, name: "p2" });
    await createSecret(server.api, token, orgId, { owner: { kind: "user" }, name: "owner-own" });
    await createSecret(server.api, member.token, orgId, { owner: { kind: "user" }, name: "member-own" });
    await createSecret(server.api, admin.token, orgId, { owner: { kind: "user" }, name: "admin-own" });

    const names = async (who: string, query = "") => {
      const reply = await server.api.get(`/api/v1/orgs/${orgId}/secrets${query}`, { token: who });
      expect(reply.status, reply.text).toBe(200);
      return reply.body.data.map((s: { name: string }) => s.name).sort();
    };
    expect(await names(token)).toEqual(["org", "owner-own", "p1", "p2"]);
    expect(await names(admin.token)).toEqual(["admin-own", "org", "p1", "p2"]);
    expect(await names(member.token)).toEqual(["member-own", "p1"]);
    expect(await names(member.token, "?owner_kind=user")).toEqual(["member-own"]);
    expect(await names(token, "?owner_kind=user")).toEqual(["owner-own"]);
    expect(await names(member.token, `?owner_kind=project&owner_project_id=${p1}`)).toEqual(["p1"]);
    expect(await names(member.token, "?kind=generic&name=*own")).toEqual(["member-own"]);

    // A slice the member may not list is an error, not an empty page.
    const orgSlice = await server.api.get(`/api/v1/orgs/${orgId}/secrets?owner_kind=org`, { token: member.token });
    expect(orgSlice.status).toBe(403);
    expect(orgSlice.body.code).toBe("forbidden");
    const p2Slice = await server.api.get(`/api/v1/orgs/${orgId}/secrets?owner_kind=project&owner_project_id=${p2}`, { token: member.token });
    expect(p2Slice.status).toBe(404);
    await setProjectRole(token, orgId, member.userId, p2, "viewer");
    const viewerSlice = await server.api.get(`/api/v1/orgs/${orgId}/secrets?owner_kind=project&owner_project_id=${p2}`, { token: member.token });
    expect(viewerSlice.status).toBe(403);
    expect(await names(member.token)).toEqual(["member-own", "p1"]);
  });

  it("lets a member manage only what its roles allow, hiding what it cannot read", async () => {
    const { token, orgId, projects } = await orgWithProjects("Beta");
    const [p1, p2] = [projects.Default.id, projects.Beta.id];
    const member = await server.api.orgMember({ token }, orgId, "member");
    const orgSecret = await createSecret(server.api, token, orgId, { owner: { kind: "org" }, name: "org" });
    const ownerOwn = await createSecret(server.api, token, orgId, { owner: { kind: "user" }, name: "owner-own" });
    const p1Secret = await createSecret(server.api, token, orgId, { owner: { kind: "project", project_id: p1 }, name: "p1" });
    const as = member.token;
    const create = (owner: unknown, name: string) => server.api.post(`/api/v1/orgs/${orgId}/secrets`, { owner, name, material: generic() }, { token: as });

    // No project role: org secrets are off limits, projects are invisible, user secrets are its own.
    expect((await create({ kind: "org" }, "x")).status).toBe(403);
    expect((await create({ kind: "project", project_id: p1 }, "x")).status).toBe(404);
    const own = await create({ kind: "user" }, "mine");
    expect(own.status).toBe(201);
    expect(own.body.owner).toEqual({ kind: "user", user_id: member.userId });
    for (const hidden of [orgSecret, ownerOwn, p1Secret]) {
      const base = `/api/v1/orgs/${orgId}/secrets/${hidden.id}`;
      expect((await server.api.get(base, { token: as })).status).toBe(404);
      expect((await server.api.patch(base, { name: "stolen" }, { token: as })).status).toBe(404);
      expect((await server.api.post(`${base}/versions`, { material: generic() }, { token: as })).status).toBe(404);
      expect((await server.api.get(`${base}/grants`, { token: as })).status).toBe(404);
      expect((await server.api.post(`${base}/grants`, { target_project_id: p1 }, { token: as })).status).toBe(404);
      expect((await server.api.delete(base, { token: as })).status).toBe(404);
    }
    expect((await server.api.get(`/api/v1/orgs/${orgId}/projects/${p1}/secrets`, { token: as })).status).toBe(404);
    // The owner cannot see the member's own secret either.
    expect((await server.api.get(`/api/v1/orgs/${orgId}/secrets/${own.body.id}`, { token })).status).toBe(404);
    expect((await server.api.delete(`/api/v1/orgs/${orgId}/secrets/${own.body.id}`, { token })).status).toBe(404);

    // Viewer: reads the project, but not its secrets.
    await setProjectRole(token, orgId, member.userId, p1, "viewer");
    expect((await create({ kind: "project", project_id: p1 }, "x")).status).toBe(403);
    expect((await server.api.get(`/api/v1/orgs/${orgId}/projects/${p1}/secrets`, { token: as })).status).toBe(403);
    expect((await server.api.get(`/api/v1/orgs/${orgId}/secrets/${p1Secret.id}`, { token: as })).status).toBe(404);

    // Developer: manages the project's secrets, and may grant them only where it manages secrets too.
    await setProjectRole(token, orgId, member.userId, p1, "developer");
    expect((await server.api.get(`/api/v1/orgs/${orgId}/secrets/${p1Secret.id}`, { token: as })).body).toEqual(p1Secret);
    const made = await create({ kind: "project", project_id: p1 }, "made-by-member");
    expect(made.status).toBe(201);
    const renamed = await server.api.patch(`/api/v1/orgs/${orgId}/secrets/${made.body.id}`, { name: "renamed" }, { token: as });
    expect(renamed.status).toBe(200);
    const grantP2 = () => server.api.post(`/api/v1/orgs/${orgId}/secrets/${made.body.id}/grants`, { target_project_id: p2 }, { token: as });
    expect((await grantP2()).status).toBe(404);
    await setProjectRole(token, orgId, member.userId, p2, "operator");
    expect((await grantP2()).status).toBe(403);
    await setProjectRole(token, orgId, member.userId, p2, "developer");
    const granted = await grantP2();
    expect(granted.status).toBe(201);
    // Its own user secret can be granted to a project where it manages secrets.
    expect((await server.api.post(`/api/v1/orgs/${orgId}/secrets/${own.body.id}/grants`, { target_project_id: p1 }, { token: as })).status).toBe(201);
    expect(
      (await server.api.get(`/api/v1/orgs/${orgId}/projects/${p1}/secrets/${own.body.id}`, { token })).body.availability.source,
    ).toBe("grant");
    expect((await server.api.delete(`/api/v1/orgs/${orgId}/secrets/${made.body.id}`, { token: as })).status).toBe(204);
  });

  it("lets the target project's secret managers revoke a grant they could not have made", async () => {
    const { token, orgId, projects } = await orgWithProjects("Beta");
    const member = await server.api.orgMember({ token }, orgId, "member");
    await setProjectRole(token, orgId, member.userId, projects.Beta.id, "developer");
    const orgSecret = await createSecret(server.api, token, orgId, { owner: { kind: "org" }, name: "org" });
    const grants = `/api/v1/orgs/${orgId}/secrets/${orgSecret.id}/grants`;
    const toBeta = (await server.api.post(grants, { target_project_id: projects.Beta.id }, { token })).body;
    const toDefault = (await server.api.post(grants, { target_project_id: projects.Default.id }, { token })).body;

    expect((await server.api.get(grants, { token: member.token })).status).toBe(404);
    expect((await server.api.delete(`${grants}/${toDefault.id}`, { token: member.token })).status).toBe(404);
    const available = await server.api.get(`/api/v1/orgs/${orgId}/projects/${projects.Beta.id}/secrets/${orgSecret.id}`, { token: member.token });
    expect(available.status).toBe(200);
    expect(available.body.availability).toEqual({ source: "grant", project_id: projects.Beta.id, grant_id: toBeta.id });
    expect((await server.api.delete(`${grants}/${toBeta.id}`, { token: member.token })).status).toBe(204);
    expect((await server.api.get(grants, { token })).body.data.map((g: any) => g.grant.id)).toEqual([toDefault.id]);
  });

  it("lets organization API keys act on org and project secrets, never on user secrets", async () => {
    const { token, session, orgId, projects } = await orgWithProjects();
    const p1 = projects.Default.id;
    await createSecret(server.api, token, orgId, { owner: { kind: "org" }, name: "org" });
    await createSecret(server.api, token, orgId, { owner: { kind: "project", project_id: p1 }, name: "p1" });
    const ownerOwn = await createSecret(server.api, token, orgId, { owner: { kind: "user" }, name: "owner-own" });
    const admin = await server.api.orgKey(session, orgId, "admin");
    const member = await server.api.orgKey(session, orgId, "member");
    const names = async (key: string, query = "") => {
      const reply = await server.api.get(`/api/v1/orgs/${orgId}/secrets${query}`, { token: key });
      expect(reply.status, reply.text).toBe(200);
      return reply.body.data.map((s: { name: string }) => s.name).sort();
    };

    expect(await names(admin.token)).toEqual(["org", "p1"]);
    expect(await names(admin.token, "?owner_kind=user")).toEqual([]);
    const post = (key: string, owner: unknown, name: string) =>
      server.api.post(`/api/v1/orgs/${orgId}/secrets`, { owner, name, material: generic() }, { token: key });
    expect((await post(admin.token, { kind: "org" }, "by-key")).status).toBe(201);
    const userOwned = await post(admin.token, { kind: "user" }, "by-key");
    expect(userOwned.status).toBe(403);
    expect(userOwned.body.code).toBe("forbidden");
    expect((await server.api.get(`/api/v1/orgs/${orgId}/secrets/${ownerOwn.id}`, { token: admin.token })).status).toBe(404);

    expect(await names(member.token)).toEqual([]);
    expect((await server.api.get(`/api/v1/orgs/${orgId}/secrets?owner_kind=org`, { token: member.token })).status).toBe(403);
    const role = await server.api.put(`/api/v1/orgs/${orgId}/api-keys/${member.key.id}/projects/${p1}`, { role: "developer" }, { session });
    expect(role.status, role.text).toBe(200);
    expect(await names(member.token)).toEqual(["p1"]);
    expect((await post(member.token, { kind: "project", project_id: p1 }, "by-member-key")).status).toBe(201);
  });

  it("never shows one organization's secrets to another", async () => {
    const a = await orgWithProjects();
    const b = await orgWithProjects();
    const secret = await createSecret(server.api, a.token, a.orgId, { owner: { kind: "org" }, name: "a-secret" });
    const grant = (await server.api.post(`/api/v1/orgs/${a.orgId}/secrets/${secret.id}/grants`, { target_project_id: a.project.id }, { token: a.token })).body;
    const paths: Array<[string, string, unknown?]> = [
      ["GET", `/api/v1/orgs/${a.orgId}/secrets`],
      ["POST", `/api/v1/orgs/${a.orgId}/secrets`, { owner: { kind: "user" }, name: "x", material: generic() }],
      ["GET", `/api/v1/orgs/${a.orgId}/secrets/${secret.id}`],
      ["GET", `/api/v1/orgs/${b.orgId}/secrets/${secret.id}`],
      ["PATCH", `/api/v1/orgs/${b.orgId}/secrets/${secret.id}`, { name: "x" }],
      ["DELETE", `/api/v1/orgs/${b.orgId}/secrets/${secret.id}`],
      ["POST", `/api/v1/orgs/${b.orgId}/secrets/${secret.id}/versions`, { material: generic() }],
      ["GET", `/api/v1/orgs/${a.orgId}/secrets/${secret.id}/grants`],
      ["POST", `/api/v1/orgs/${b.orgId}/secrets/${secret.id}/grants`, { target_project_id: b.project.id }],
      ["DELETE", `/api/v1/orgs/${b.orgId}/secrets/${secret.id}/grants/${grant.id}`],
      ["GET", `/api/v1/orgs/${a.orgId}/projects/${a.project.id}/secrets`],
      ["GET", `/api/v1/orgs/${b.orgId}/projects/${a.project.id}/secrets`],
      ["GET", `/api/v1/orgs/${b.orgId}/projects/${b.project.id}/secrets/${secret.id}`],
    ];
    for (const [method, path, body] of paths) {
      const reply = await server.api.request(method, path, { token: b.token, body });
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.body).toEqual({ error: expect.any(String), code: "not_found" });
    }
    const owner = await server.api.post(`/api/v1/orgs/${b.orgId}/secrets`, { owner: { kind: "project", project_id: a.project.id }, name: "x", material: generic() }, { token: b.token });
    expect(owner.status).toBe(404);
    expect((await server.api.get(`/api/v1/orgs/${a.orgId}/secrets/${secret.id}/grants`, { token: a.token })).body.data).toHaveLength(1);
  });

  it("deletes a member's own secrets in an org when they leave it, and only there", async () => {
    const owner = await orgWithProjects();
    const other = await orgWithProjects();
    const member = await server.api.orgMember({ token: owner.token }, owner.orgId, "member");
    const otherInvite = await server.api.post(`/api/v1/orgs/${other.orgId}/invitations`, { email: member.session.email, role: "member" }, { token: other.token });
    expect((await server.api.post(`/api/v1/invitations/${otherInvite.body.id}/accept`, undefined, { token: member.token })).status).toBe(200);
    const mine = await createSecret(server.api, member.token, owner.orgId, { owner: { kind: "user" }, name: "mine" });
    const kept = await createSecret(server.api, member.token, other.orgId, { owner: { kind: "user" }, name: "kept" });

    const removed = await server.api.delete(`/api/v1/orgs/${owner.orgId}/members/${member.userId}`, { token: owner.token });
    expect(removed.status).toBe(204);
    const rejoin = await server.api.post(`/api/v1/orgs/${owner.orgId}/invitations`, { email: member.session.email, role: "member" }, { token: owner.token });
    expect((await server.api.post(`/api/v1/invitations/${rejoin.body.id}/accept`, undefined, { token: member.token })).status).toBe(200);
    expect((await server.api.get(`/api/v1/orgs/${owner.orgId}/secrets/${mine.id}`, { token: member.token })).status).toBe(404);
    expect(await collect(server.api, `/api/v1/orgs/${owner.orgId}/secrets?owner_kind=user`, member.token)).toEqual([]);
    expect((await server.api.get(`/api/v1/orgs/${other.orgId}/secrets/${kept.id}`, { token: member.token })).status).toBe(200);
  });
});
