import { collectPages } from "../support/paging.js";
import { beforeAll, describe, expect, it } from "vitest";
import type { ApiClient, BrowserSession } from "../support/client.js";
import { useTestServer } from "../support/server.js";

const server = useTestServer();
let api: ApiClient;
beforeAll(async () => {
  api = server.api;
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
type Auth = { token?: string; session?: BrowserSession };

async function collect(path: string, auth: Auth): Promise<any[]> {
  return collectPages(api, path, auth);
}

describe("creating organization API keys", () => {
  it("mints a key once through a browser session and stores only its metadata", async () => {
    const owner = await api.userWithOrg("Keys");
    const reply = await api.post(`/api/v1/orgs/${owner.org.id}/api-keys`, { name: "ci runner", org_role: "member" }, { session: owner.session });
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      token: expect.stringMatching(/^svc_org_v1_[0-9A-Za-z]{43}_[0-9A-Za-z]{6}$/),
      api_key: {
        id: expect.stringMatching(/^oak_[a-z2-7]{26}$/),
        org_id: owner.org.id,
        name: "ci runner",
        token_id: expect.stringMatching(/^[0-9a-f]{20}$/),
        org_role: "member",
        created_by_user_id: owner.userId,
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
        last_used_at: null,
        revoked_at: null,
      },
    });
    const got = await api.get(`/api/v1/orgs/${owner.org.id}/api-keys/${reply.body.api_key.id}`, { token: owner.token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(reply.body.api_key);
    expect(got.text).not.toContain(reply.body.token);
    // The key authenticates, and its use is recorded.
    expect((await api.get(`/api/v1/orgs/${owner.org.id}`, { token: reply.body.token })).status).toBe(200);
    const used = await api.get(`/api/v1/orgs/${owner.org.id}/api-keys/${reply.body.api_key.id}`, { token: owner.token });
    expect(used.body.last_used_at).toMatch(ISO);
  });

  it("is for browser sessions of org managers only", async () => {
    const owner = await api.userWithOrg("Keys2");
    const admin = await api.orgMember({ token: owner.token }, owner.org.id, "admin");
    const member = await api.orgMember({ token: owner.token }, owner.org.id, "member");
    const adminKey = await api.orgKey(owner.session, owner.org.id, "admin");
    const path = `/api/v1/orgs/${owner.org.id}/api-keys`;
    const body = { name: "x", org_role: "admin" };

    for (const token of [owner.token, admin.token, adminKey.token]) {
      const reply = await api.post(path, body, { token });
      expect(reply.status).toBe(403);
      expect(reply.body).toEqual({ error: expect.any(String), code: "forbidden" });
    }
    expect((await api.post(path, body, { session: member.session })).status).toBe(403);
    const noCsrf = await api.post(path, body, { session: owner.session, noCsrf: true });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.body.code).toBe("csrf_check_failed");
    const outsider = await api.userWithOrg("Outside");
    expect((await api.post(path, body, { session: outsider.session })).status).toBe(404);
    expect((await api.post(path, body)).status).toBe(401);

    const byAdmin = await api.post(path, { name: "made by admin", org_role: "admin" }, { session: admin.session });
    expect(byAdmin.status).toBe(201);
    expect(byAdmin.body.api_key.created_by_user_id).toBe(admin.userId);
  });

  it("validates the request and keeps active names unique", async () => {
    const owner = await api.userWithOrg("Keys3");
    const path = `/api/v1/orgs/${owner.org.id}/api-keys`;
    for (const body of [{ name: "a", org_role: "owner" }, { name: "a" }, { org_role: "admin" }, { name: " a", org_role: "admin" }, { name: "a", org_role: "admin", x: 1 }]) {
      const reply = await api.post(path, body, { session: owner.session });
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({ error: expect.any(String), code: "validation_failed", issues: expect.any(Array) });
    }
    const first = await api.post(path, { name: "deploy", org_role: "admin" }, { session: owner.session });
    expect(first.status).toBe(201);
    const dup = await api.post(path, { name: "deploy", org_role: "member" }, { session: owner.session });
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ error: expect.any(String), code: "conflict" });
    await api.post(`${path}/${first.body.api_key.id}/revoke`, undefined, { session: owner.session });
    expect((await api.post(path, { name: "deploy", org_role: "member" }, { session: owner.session })).status).toBe(201);
  });
});

describe("reading keys", () => {
  it("lists every key, revoked ones included, newest first, one page after another", async () => {
    const owner = await api.userWithOrg("List");
    const created: any[] = [];
    for (let i = 0; i < 5; i++) created.push((await api.orgKey(owner.session, owner.org.id, i % 2 ? "admin" : "member", `k${i}`)).key);
    const revoked = await api.post(`/api/v1/orgs/${owner.org.id}/api-keys/${created[1].id}/revoke`, undefined, { session: owner.session });

    const full = await api.get(`/api/v1/orgs/${owner.org.id}/api-keys`, { token: owner.token });
    expect(full.status).toBe(200);
    expect(full.body.next_cursor).toBeNull();
    expect(full.body.data).toHaveLength(5);
    expect(full.body.data.find((k: any) => k.id === created[1].id)).toEqual(revoked.body);
    const times = full.body.data.map((k: any) => k.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    const paged = await collect(`/api/v1/orgs/${owner.org.id}/api-keys?limit=2`, { token: owner.token });
    expect(paged).toEqual(full.body.data);
    expect(new Set(paged.map((k) => k.id))).toEqual(new Set(created.map((k) => k.id)));
    expect((await api.get(`/api/v1/orgs/${owner.org.id}/api-keys?limit=0`, { token: owner.token })).status).toBe(400);
  });

  it("needs org.manage: owners, admins and admin keys read; members and member keys get 403", async () => {
    const owner = await api.userWithOrg("Read");
    const admin = await api.orgMember({ token: owner.token }, owner.org.id, "admin");
    const member = await api.orgMember({ token: owner.token }, owner.org.id, "member");
    const adminKey = await api.orgKey(owner.session, owner.org.id, "admin");
    const memberKey = await api.orgKey(owner.session, owner.org.id, "member");
    const paths = [
      `/api/v1/orgs/${owner.org.id}/api-keys`,
      `/api/v1/orgs/${owner.org.id}/api-keys/${memberKey.key.id}`,
      `/api/v1/orgs/${owner.org.id}/api-keys/${memberKey.key.id}/projects`,
    ];
    for (const path of paths) {
      for (const auth of [{ token: owner.token }, { session: owner.session }, { token: admin.token }, { token: adminKey.token }]) {
        expect([path, (await api.get(path, auth)).status]).toEqual([path, 200]);
      }
      for (const auth of [{ token: member.token }, { token: memberKey.token }]) {
        expect([path, (await api.get(path, auth)).status]).toEqual([path, 403]);
      }
    }
    const missing = `/api/v1/orgs/${owner.org.id}/api-keys/oak_aaaaaaaaaaaaaaaaaaaaaaaaaa`;
    expect((await api.get(missing, { token: owner.token })).status).toBe(404);
    expect((await api.get(`/api/v1/orgs/${owner.org.id}/api-keys/pat_aaaaaaaaaaaaaaaaaaaaaaaaaa`, { token: owner.token })).status).toBe(404);
  });
});

describe("changing and revoking keys", () => {
  it("renames a key and changes its role through a session only", async () => {
    const owner = await api.userWithOrg("Patch");
    const { token, key } = await api.orgKey(owner.session, owner.org.id, "member", "before");
    await api.orgKey(owner.session, owner.org.id, "member", "taken");
    const path = `/api/v1/orgs/${owner.org.id}/api-keys/${key.id}`;

    for (const auth of [{ token: owner.token }, { token }]) {
      expect((await api.patch(path, { name: "x" }, auth)).status).toBe(403);
    }
    expect((await api.get(`/api/v1/orgs/${owner.org.id}/api-keys`, { token })).status).toBe(403);

    const renamed = await api.patch(path, { name: "after" }, { session: owner.session });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ ...key, name: "after", updated_at: expect.stringMatching(ISO), last_used_at: expect.stringMatching(ISO) });
    const promoted = await api.patch(path, { org_role: "admin" }, { session: owner.session });
    expect(promoted.status).toBe(200);
    expect(promoted.body.org_role).toBe("admin");
    // The new role takes effect at once: an admin key may read key metadata.
    expect((await api.get(`/api/v1/orgs/${owner.org.id}/api-keys`, { token })).status).toBe(200);
    const both = await api.patch(path, { name: "both", org_role: "member" }, { session: owner.session });
    expect(both.body).toMatchObject({ name: "both", org_role: "member" });
    expect((await api.get(`/api/v1/orgs/${owner.org.id}/api-keys`, { token })).status).toBe(403);

    const dup = await api.patch(path, { name: "taken" }, { session: owner.session });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe("conflict");
    for (const body of [{}, { org_role: "owner" }, { name: "" }, { name: "ok", extra: 1 }]) {
      const reply = await api.patch(path, body, { session: owner.session });
      expect(reply.status).toBe(400);
      expect(reply.body.code).toBe("validation_failed");
    }
  });

  it("revokes for good: idempotent, 401 for the key, its roles gone, no more changes", async () => {
    const owner = await api.userWithOrg("Revoke");
    const { token, key } = await api.orgKey(owner.session, owner.org.id, "admin", "doomed");
    const base = `/api/v1/orgs/${owner.org.id}/api-keys/${key.id}`;
    await api.put(`${base}/projects/${owner.project.id}`, { role: "developer" }, { session: owner.session });
    expect((await api.get(`/api/v1/orgs/${owner.org.id}`, { token })).status).toBe(200);

    for (const auth of [{ token: owner.token }, { token }]) {
      const refused = await api.post(`${base}/revoke`, undefined, auth);
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe("forbidden");
    }

    const revoked = await api.post(`${base}/revoke`, undefined, { session: owner.session });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({
      ...key,
      org_role: "",
      updated_at: expect.stringMatching(ISO),
      last_used_at: expect.stringMatching(ISO),
      revoked_at: expect.stringMatching(ISO),
    });
    const again = await api.post(`${base}/revoke`, undefined, { session: owner.session });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(revoked.body);

    const rejected = await api.get(`/api/v1/orgs/${owner.org.id}`, { token });
    expect(rejected.status).toBe(401);
    expect(rejected.body).toEqual({ error: expect.any(String), code: "unauthorized" });
    expect((await api.get(`${base}/projects`, { token: owner.token })).body).toEqual({ data: [] });

    const patch = await api.patch(base, { name: "revived" }, { session: owner.session });
    expect(patch.status).toBe(409);
    expect(patch.body).toEqual({ error: expect.any(String), code: "state_transition_conflict" });
    const grant = await api.put(`${base}/projects/${owner.project.id}`, { role: "viewer" }, { session: owner.session });
    expect(grant.status).toBe(409);
    expect(grant.body.code).toBe("state_transition_conflict");
    expect((await api.delete(`${base}/projects/${owner.project.id}`, { session: owner.session })).status).toBe(404);
    expect((await api.post(`/api/v1/orgs/${owner.org.id}/api-keys/oak_aaaaaaaaaaaaaaaaaaaaaaaaaa/revoke`, undefined, { session: owner.session })).status).toBe(404);
  });
});

describe("what an organization key may do", () => {
  it("a member-role key sees no project until granted one, then exactly that one", async () => {
    const owner = await api.userWithOrg("Scope");
    const second = (await api.post(`/api/v1/orgs/${owner.org.id}/projects`, { name: "Second" }, { token: owner.token })).body;
    const { token, key } = await api.orgKey(owner.session, owner.org.id, "member");
    const projects = `/api/v1/orgs/${owner.org.id}/projects`;

    expect((await api.get(projects, { token })).body).toEqual({ data: [], next_cursor: null });
    expect((await api.get(`${projects}/${second.id}`, { token })).status).toBe(404);
    expect((await api.get(`${projects}/${owner.project.id}`, { token })).status).toBe(404);
    expect((await api.get("/api/v1/me", { token })).status).toBe(403);
    expect((await api.get("/api/v1/invitations", { token })).status).toBe(403);

    const grantPath = `/api/v1/orgs/${owner.org.id}/api-keys/${key.id}/projects/${second.id}`;
    expect((await api.put(grantPath, { role: "viewer" }, { token: owner.token })).status).toBe(403);
    const granted = await api.put(grantPath, { role: "viewer" }, { session: owner.session });
    expect(granted.status).toBe(200);
    expect(granted.body).toEqual({ project_id: second.id, project_name: "Second", role: "viewer", created_at: expect.stringMatching(ISO) });

    const visible = await api.get(projects, { token });
    expect(visible.body.data.map((p: any) => p.id)).toEqual([second.id]);
    expect(visible.body.data[0].access).toEqual({ can_read: true, can_manage: false, can_manage_access: false, can_operate: false });
    expect((await api.get(`${projects}/${second.id}`, { token })).status).toBe(200);
    expect((await api.get(`${projects}/${owner.project.id}`, { token })).status).toBe(404);
    // A viewer key cannot manage the project it sees.
    expect((await api.patch(`${projects}/${second.id}`, { name: "Renamed" }, { token })).status).toBe(403);

    const listed = await api.get(`/api/v1/orgs/${owner.org.id}/api-keys/${key.id}/projects`, { token: owner.token });
    expect(listed.body).toEqual({ data: [granted.body] });
    const upgraded = await api.put(grantPath, { role: "developer" }, { session: owner.session });
    expect(upgraded.body).toEqual({ ...granted.body, role: "developer" });
    expect((await api.patch(`${projects}/${second.id}`, { name: "Renamed" }, { token })).status).toBe(200);

    expect((await api.delete(grantPath, { token: owner.token })).status).toBe(403);
    expect((await api.delete(grantPath, { session: owner.session })).status).toBe(204);
    expect((await api.get(projects, { token })).body.data).toEqual([]);
    expect((await api.delete(grantPath, { session: owner.session })).status).toBe(404);
    expect((await api.put(grantPath, { role: "manager" }, { session: owner.session })).status).toBe(400);
  });

  it("an admin-role key sees every project and manages the org, but never keys", async () => {
    const owner = await api.userWithOrg("AdminKey");
    const { token } = await api.orgKey(owner.session, owner.org.id, "admin");
    const listed = await api.get(`/api/v1/orgs/${owner.org.id}/projects`, { token });
    expect(listed.body.data.map((p: any) => p.id)).toEqual([owner.project.id]);
    expect((await api.post(`/api/v1/orgs/${owner.org.id}/projects`, { name: "By key" }, { token })).status).toBe(201);
    expect((await api.post(`/api/v1/orgs/${owner.org.id}/api-keys`, { name: "child", org_role: "admin" }, { token })).status).toBe(403);
    expect((await api.delete(`/api/v1/orgs/${owner.org.id}`, { token })).status).toBe(403);
  });

  it("project access for keys follows the project role matrix", async () => {
    const owner = await api.userWithOrg("KeyMatrix");
    const project = (await api.post(`/api/v1/orgs/${owner.org.id}/projects`, { name: "M" }, { token: owner.token })).body;
    const person = await api.orgMember({ token: owner.token }, owner.org.id, "member");
    const { key } = await api.orgKey(owner.session, owner.org.id, "member");
    const path = `/api/v1/orgs/${owner.org.id}/api-keys/${key.id}/projects/${project.id}`;
    expect((await api.put(path, { role: "viewer" }, { session: person.session })).status).toBe(404);
    const expected: Record<string, number> = { admin: 200, developer: 403, operator: 403, viewer: 403 };
    for (const [role, status] of Object.entries(expected)) {
      await api.put(`/api/v1/orgs/${owner.org.id}/members/${person.userId}/projects/${project.id}`, { role }, { token: owner.token });
      expect([role, (await api.put(path, { role: "operator" }, { session: person.session })).status]).toEqual([role, status]);
      expect([role, (await api.delete(path, { session: person.session })).status]).toEqual([role, status === 200 ? 204 : status]);
    }
  });
});

describe("tenancy", () => {
  it("a user or key of org A gets 404 on org B's keys", async () => {
    const a = await api.userWithOrg("A");
    const b = await api.userWithOrg("B");
    const keyA = await api.orgKey(a.session, a.org.id, "admin");
    const keyB = await api.orgKey(b.session, b.org.id, "member");
    const base = `/api/v1/orgs/${b.org.id}/api-keys`;
    const keyPath = `${base}/${keyB.key.id}`;
    for (const auth of [{ token: a.token }, { token: keyA.token }, { session: a.session }]) {
      const reads = [await api.get(base, auth), await api.get(keyPath, auth), await api.get(`${keyPath}/projects`, auth)];
      expect(reads.map((r) => r.status)).toEqual([404, 404, 404]);
      // Org B's key under org A's path is not found either.
      expect((await api.get(`/api/v1/orgs/${a.org.id}/api-keys/${keyB.key.id}`, auth)).status).toBe(404);
      expect((await api.get(`/api/v1/orgs/${b.org.id}`, auth)).status).toBe(404);
    }
    // Changes are session-only; a session of org A finds nothing in org B.
    const writes = [
      await api.post(base, { name: "x", org_role: "member" }, { session: a.session }),
      await api.patch(keyPath, { name: "x" }, { session: a.session }),
      await api.post(`${keyPath}/revoke`, undefined, { session: a.session }),
      await api.put(`${keyPath}/projects/${b.project.id}`, { role: "viewer" }, { session: a.session }),
      await api.delete(`${keyPath}/projects/${b.project.id}`, { session: a.session }),
      await api.post(`/api/v1/orgs/${a.org.id}/api-keys/${keyB.key.id}/revoke`, undefined, { session: a.session }),
      await api.put(`/api/v1/orgs/${a.org.id}/api-keys/${keyA.key.id}/projects/${b.project.id}`, { role: "viewer" }, { session: a.session }),
    ];
    expect(writes.map((r) => r.status)).toEqual([404, 404, 404, 404, 404, 404, 404]);
    expect((await api.get(keyPath, { token: b.token })).body.revoked_at).toBeNull();
  });
});
