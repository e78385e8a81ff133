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

/** Follows next_cursor from the first page to the last and returns every item in order. */
async function collect(path: string, auth: Auth): Promise<any[]> {
  return collectPages(api, path, auth);
}

/** An org with an owner and one member of every other org role, each with a display name of its own. */
async function seededOrg(prefix: string) {
  const ownerSession = await api.signup({ display_name: `${prefix} Olive Owner` });
  const ownerToken = await api.pat(ownerSession);
  const created = await api.post("/api/v1/orgs", { name: `${prefix} org` }, { token: ownerToken });
  expect(created.status).toBe(201);
  const org = created.body.org;
  const owner = { session: ownerSession, token: ownerToken, userId: ownerSession.userId };
  const admin = await api.orgMember({ token: ownerToken }, org.id, "admin", { display_name: `${prefix} Alice Admin` });
  const member = await api.orgMember({ token: ownerToken }, org.id, "member", { display_name: `${prefix} Bob Member` });
  return { org, project: created.body.project, owner, admin, member };
}

describe("listing members", () => {
  it("lists every human member with exact fields, newest first, and pages through them once each", async () => {
    const { org, owner, admin, member } = await seededOrg("L1");
    const extra = await api.orgMember({ token: owner.token }, org.id, "member", { display_name: "L1 bob junior" });
    await api.orgKey(owner.session, org.id, "admin"); // org keys are not members in this list

    const all = await api.get(`/api/v1/orgs/${org.id}/members`, { token: owner.token });
    expect(all.status).toBe(200);
    expect(all.body.next_cursor).toBeNull();
    expect(all.body.data).toHaveLength(4);
    const byUser = new Map(all.body.data.map((m: any) => [m.user_id, m]));
    expect(byUser.get(owner.userId)).toEqual({
      user_id: owner.userId,
      email: owner.session.email,
      display_name: "L1 Olive Owner",
      role: "owner",
      created_at: expect.stringMatching(ISO),
    });
    expect(byUser.get(admin.userId)).toEqual({
      user_id: admin.userId,
      email: admin.session.email,
      display_name: "L1 Alice Admin",
      role: "admin",
      created_at: expect.stringMatching(ISO),
    });
    expect(byUser.get(member.userId)).toMatchObject({ role: "member", display_name: "L1 Bob Member" });
    expect(byUser.get(extra.userId)).toMatchObject({ role: "member", display_name: "L1 bob junior" });
    // Newest first: membership creation time descending.
    const times = all.body.data.map((m: any) => m.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    expect(all.body.data[all.body.data.length - 1].user_id).toBe(owner.userId);

    for (const sort of ["-created_at", "created_at", "name", "-name"]) {
      const full = (await api.get(`/api/v1/orgs/${org.id}/members?sort=${sort}`, { token: owner.token })).body.data;
      const paged = await collect(`/api/v1/orgs/${org.id}/members?limit=1&sort=${sort}`, { token: owner.token });
      expect(paged).toEqual(full);
      expect(new Set(paged.map((m) => m.user_id)).size).toBe(4);
    }
  });

  it("sorts by display name in code-point order and filters with a case-insensitive glob", async () => {
    const { org, owner } = await seededOrg("L2");
    await api.orgMember({ token: owner.token }, org.id, "member", { display_name: "L2 bob junior" });
    await api.orgMember({ token: owner.token }, org.id, "member", { display_name: "L2 50% *star*" });
    const names = async (query: string) =>
      (await api.get(`/api/v1/orgs/${org.id}/members?${query}`, { token: owner.token })).body.data.map((m: any) => m.display_name);

    expect(await names("sort=name")).toEqual(["L2 50% *star*", "L2 Alice Admin", "L2 Bob Member", "L2 Olive Owner", "L2 bob junior"]);
    expect(await names("sort=-name")).toEqual(["L2 bob junior", "L2 Olive Owner", "L2 Bob Member", "L2 Alice Admin", "L2 50% *star*"]);
    expect(await names(`sort=name&name=${encodeURIComponent("l2 BOB*")}`)).toEqual(["L2 Bob Member", "L2 bob junior"]);
    expect(await names(`sort=name&name=${encodeURIComponent("*?lice*")}`)).toEqual(["L2 Alice Admin"]);
    expect(await names(`name=${encodeURIComponent("L2 50% \\*star\\*")}`)).toEqual(["L2 50% *star*"]);
    expect(await names(`name=${encodeURIComponent("L2 5_%")}`)).toEqual([]);
    const paged = await collect(`/api/v1/orgs/${org.id}/members?sort=name&limit=2`, { token: owner.token });
    expect(paged.map((m) => m.display_name)).toEqual(await names("sort=name"));

    const badSort = await api.get(`/api/v1/orgs/${org.id}/members?sort=updated_at`, { token: owner.token });
    expect(badSort.status).toBe(400);
    expect(badSort.body).toEqual({ error: expect.any(String), code: "invalid_request" });
    const badCursor = await api.get(`/api/v1/orgs/${org.id}/members?cursor=nonsense`, { token: owner.token });
    expect(badCursor.status).toBe(400);
  });

  it("answers every org role and org key, and 404 to outsiders", async () => {
    const { org, owner, admin, member } = await seededOrg("L3");
    const adminKey = await api.orgKey(owner.session, org.id, "admin");
    const memberKey = await api.orgKey(owner.session, org.id, "member");
    for (const token of [owner.token, admin.token, member.token, adminKey.token, memberKey.token]) {
      expect((await api.get(`/api/v1/orgs/${org.id}/members`, { token })).status).toBe(200);
    }
    const outsider = await api.userWithOrg("Other");
    const reply = await api.get(`/api/v1/orgs/${org.id}/members`, { token: outsider.token });
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({ error: expect.any(String), code: "not_found" });
    expect((await api.get(`/api/v1/orgs/org_aaaaaaaaaaaaaaaaaaaaaaaaaa/members`, { token: owner.token })).status).toBe(404);
    expect((await api.get(`/api/v1/orgs/not-an-id/members`, { token: owner.token })).status).toBe(404);
    expect((await api.get(`/api/v1/orgs/${org.id}/members`)).status).toBe(401);
  });
});

describe("changing member roles", () => {
  it("lets managers change roles and answers with the membership", async () => {
    const { org, owner, admin, member } = await seededOrg("R1");
    const reply = await api.patch(`/api/v1/orgs/${org.id}/members/${member.userId}`, { role: "admin" }, { token: owner.token });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ org_id: org.id, user_id: member.userId, role: "admin", created_at: expect.stringMatching(ISO) });
    // An admin may move admins and members between those two roles.
    const back = await api.patch(`/api/v1/orgs/${org.id}/members/${member.userId}`, { role: "member" }, { token: admin.token });
    expect(back.status).toBe(200);
    expect(back.body.role).toBe("member");
    const same = await api.patch(`/api/v1/orgs/${org.id}/members/${member.userId}`, { role: "member" }, { session: admin.session });
    expect(same.status).toBe(200);
    const listed = await api.get(`/api/v1/orgs/${org.id}/members`, { token: owner.token });
    expect(listed.body.data.find((m: any) => m.user_id === member.userId).role).toBe("member");
  });

  it("keeps owners in charge of owners: admins, members and keys get 403", async () => {
    const { org, owner, admin, member } = await seededOrg("R2");
    const adminKey = await api.orgKey(owner.session, org.id, "admin");
    const cases: Array<[Auth, string, string]> = [
      [{ token: admin.token }, member.userId, "owner"], // making an owner
      [{ token: admin.token }, owner.userId, "admin"], // changing an owner
      [{ token: adminKey.token }, member.userId, "owner"],
      [{ token: adminKey.token }, owner.userId, "member"],
      [{ token: member.token }, admin.userId, "member"], // members cannot manage
      [{ token: member.token }, member.userId, "admin"], // nor promote themselves
    ];
    for (const [auth, userId, role] of cases) {
      const reply = await api.patch(`/api/v1/orgs/${org.id}/members/${userId}`, { role }, auth);
      expect(reply.status).toBe(403);
      expect(reply.body).toEqual({ error: expect.any(String), code: "forbidden" });
    }
    const promoted = await api.patch(`/api/v1/orgs/${org.id}/members/${admin.userId}`, { role: "owner" }, { token: owner.token });
    expect(promoted.status).toBe(200);
    expect(promoted.body.role).toBe("owner");
  });

  it("never leaves an org without an owner", async () => {
    const { org, owner, admin } = await seededOrg("R3");
    const alone = await api.patch(`/api/v1/orgs/${org.id}/members/${owner.userId}`, { role: "admin" }, { token: owner.token });
    expect(alone.status).toBe(409);
    expect(alone.body).toEqual({ error: expect.any(String), code: "conflict" });
    await api.patch(`/api/v1/orgs/${org.id}/members/${admin.userId}`, { role: "owner" }, { token: owner.token });
    const stepDown = await api.patch(`/api/v1/orgs/${org.id}/members/${owner.userId}`, { role: "member" }, { token: owner.token });
    expect(stepDown.status).toBe(200);
    const last = await api.patch(`/api/v1/orgs/${org.id}/members/${admin.userId}`, { role: "admin" }, { token: admin.token });
    expect(last.status).toBe(409);
  });

  it("validates the body and the target", async () => {
    const { org, owner, member } = await seededOrg("R4");
    for (const body of [{ role: "superuser" }, { role: "viewer" }, {}, { role: "admin", extra: 1 }, { role: 3 }]) {
      const reply = await api.patch(`/api/v1/orgs/${org.id}/members/${member.userId}`, body, { token: owner.token });
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({ error: expect.any(String), code: "validation_failed", issues: expect.any(Array) });
    }
    const stranger = await api.signup();
    expect((await api.patch(`/api/v1/orgs/${org.id}/members/${stranger.userId}`, { role: "admin" }, { token: owner.token })).status).toBe(404);
    expect((await api.patch(`/api/v1/orgs/${org.id}/members/usr_bad`, { role: "admin" }, { token: owner.token })).status).toBe(404);
  });
});

describe("removing members", () => {
  it("lets managers remove members and anyone leave, with owners protected", async () => {
    const { org, owner, admin, member } = await seededOrg("D1");
    const other = await api.orgMember({ token: owner.token }, org.id, "member");
    const adminKey = await api.orgKey(owner.session, org.id, "admin");

    const byMember = await api.delete(`/api/v1/orgs/${org.id}/members/${other.userId}`, { token: member.token });
    expect(byMember.status).toBe(403);
    expect((await api.delete(`/api/v1/orgs/${org.id}/members/${owner.userId}`, { token: admin.token })).status).toBe(403);
    expect((await api.delete(`/api/v1/orgs/${org.id}/members/${owner.userId}`, { token: adminKey.token })).status).toBe(403);

    const leave = await api.delete(`/api/v1/orgs/${org.id}/members/${member.userId}`, { token: member.token });
    expect(leave.status).toBe(204);
    expect(leave.text).toBe("");
    expect((await api.get(`/api/v1/orgs/${org.id}`, { token: member.token })).status).toBe(404);
    expect((await api.delete(`/api/v1/orgs/${org.id}/members/${member.userId}`, { token: owner.token })).status).toBe(404);

    expect((await api.delete(`/api/v1/orgs/${org.id}/members/${other.userId}`, { token: adminKey.token })).status).toBe(204);
    expect((await api.delete(`/api/v1/orgs/${org.id}/members/${admin.userId}`, { session: owner.session })).status).toBe(204);
    const members = await api.get(`/api/v1/orgs/${org.id}/members`, { token: owner.token });
    expect(members.body.data.map((m: any) => m.user_id)).toEqual([owner.userId]);
  });

  it("refuses to let the last owner leave, but a second owner makes it possible", async () => {
    const { org, owner, admin } = await seededOrg("D2");
    const refused = await api.delete(`/api/v1/orgs/${org.id}/members/${owner.userId}`, { token: owner.token });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ error: expect.any(String), code: "conflict" });
    await api.patch(`/api/v1/orgs/${org.id}/members/${admin.userId}`, { role: "owner" }, { token: owner.token });
    expect((await api.delete(`/api/v1/orgs/${org.id}/members/${owner.userId}`, { token: owner.token })).status).toBe(204);
    const me = await api.get("/api/v1/me", { token: owner.token });
    expect(me.body.orgs).toEqual([]);
    expect((await api.delete(`/api/v1/orgs/${org.id}/members/${admin.userId}`, { token: admin.token })).status).toBe(409);
  });
});

describe("member project access", () => {
  it("grants, lists, changes and removes a member's explicit project role", async () => {
    const { org, owner, admin, member } = await seededOrg("P1");
    const p2 = (await api.post(`/api/v1/orgs/${org.id}/projects`, { name: "Second" }, { token: owner.token })).body;
    const path = `/api/v1/orgs/${org.id}/members/${member.userId}/projects`;

    expect((await api.get(`/api/v1/orgs/${org.id}/projects/${p2.id}`, { token: member.token })).status).toBe(404);
    expect((await api.get(`/api/v1/orgs/${org.id}/projects`, { token: member.token })).body.data).toEqual([]);
    expect((await api.get(path, { token: owner.token })).body).toEqual({ data: [] });

    const granted = await api.put(`${path}/${p2.id}`, { role: "viewer" }, { token: owner.token });
    expect(granted.status).toBe(200);
    expect(granted.body).toEqual({ project_id: p2.id, project_name: "Second", role: "viewer", created_at: expect.stringMatching(ISO) });

    const visible = await api.get(`/api/v1/orgs/${org.id}/projects`, { token: member.token });
    expect(visible.body.data.map((p: any) => p.id)).toEqual([p2.id]);
    expect(visible.body.data[0].access).toEqual({ can_read: true, can_manage: false, can_manage_access: false, can_operate: false });

    const changed = await api.put(`${path}/${p2.id}`, { role: "operator" }, { token: admin.token });
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual({ ...granted.body, role: "operator" });

    for (const auth of [{ token: owner.token }, { token: admin.token }, { token: member.token }]) {
      const listed = await api.get(path, auth);
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual({ data: [changed.body] });
    }
    // Owners and admins hold admin everywhere implicitly; only explicit grants are listed.
    expect((await api.get(`/api/v1/orgs/${org.id}/members/${admin.userId}/projects`, { token: owner.token })).body).toEqual({ data: [] });

    const removed = await api.delete(`${path}/${p2.id}`, { token: owner.token });
    expect(removed.status).toBe(204);
    expect((await api.get(`/api/v1/orgs/${org.id}/projects/${p2.id}`, { token: member.token })).status).toBe(404);
    expect((await api.get(path, { token: owner.token })).body).toEqual({ data: [] });
    expect((await api.delete(`${path}/${p2.id}`, { token: owner.token })).status).toBe(404);
  });

  it("applies the project role matrix to access management", async () => {
    const { org, owner, member } = await seededOrg("P2");
    const project = (await api.post(`/api/v1/orgs/${org.id}/projects`, { name: "Matrix" }, { token: owner.token })).body;
    const hidden = (await api.post(`/api/v1/orgs/${org.id}/projects`, { name: "Hidden" }, { token: owner.token })).body;
    const target = await api.orgMember({ token: owner.token }, org.id, "member");
    const expected: Record<string, number> = { admin: 200, developer: 403, operator: 403, viewer: 403 };
    for (const [role, status] of Object.entries(expected)) {
      await api.put(`/api/v1/orgs/${org.id}/members/${member.userId}/projects/${project.id}`, { role }, { token: owner.token });
      const set = await api.put(`/api/v1/orgs/${org.id}/members/${target.userId}/projects/${project.id}`, { role: "viewer" }, { token: member.token });
      expect([role, set.status]).toEqual([role, status]);
      const del = await api.delete(`/api/v1/orgs/${org.id}/members/${target.userId}/projects/${project.id}`, { token: member.token });
      expect([role, del.status]).toEqual([role, status === 200 ? 204 : status]);
      // Reading someone else's grants needs org.manage whatever the project role.
      expect((await api.get(`/api/v1/orgs/${org.id}/members/${target.userId}/projects`, { token: member.token })).status).toBe(403);
      // A project the member cannot see at all is a 404.
      const invisible = await api.put(`/api/v1/orgs/${org.id}/members/${target.userId}/projects/${hidden.id}`, { role: "viewer" }, { token: member.token });
      expect(invisible.status).toBe(404);
    }
    // A member reads their own grants; the loop left them a viewer.
    const selfView = await api.get(`/api/v1/orgs/${org.id}/members/${member.userId}/projects`, { token: member.token });
    expect(selfView.body.data).toEqual([{ project_id: project.id, project_name: "Matrix", role: "viewer", created_at: expect.stringMatching(ISO) }]);
  });

  it("validates roles, targets and projects", async () => {
    const { org, owner, project } = await seededOrg("P3");
    const member = await api.orgMember({ token: owner.token }, org.id, "member");
    const path = `/api/v1/orgs/${org.id}/members/${member.userId}/projects/${project.id}`;
    for (const body of [{ role: "owner" }, { role: "member" }, {}, { role: "viewer", x: true }]) {
      const reply = await api.put(path, body, { token: owner.token });
      expect(reply.status).toBe(400);
      expect(reply.body.code).toBe("validation_failed");
    }
    const stranger = await api.signup();
    expect((await api.put(`/api/v1/orgs/${org.id}/members/${stranger.userId}/projects/${project.id}`, { role: "viewer" }, { token: owner.token })).status).toBe(404);
    expect((await api.get(`/api/v1/orgs/${org.id}/members/${stranger.userId}/projects`, { token: owner.token })).status).toBe(404);
    const elsewhere = await api.userWithOrg("Elsewhere");
    expect((await api.put(`/api/v1/orgs/${org.id}/members/${member.userId}/projects/${elsewhere.project.id}`, { role: "viewer" }, { token: owner.token })).status).toBe(404);
    expect((await api.put(`/api/v1/orgs/${org.id}/members/${member.userId}/projects/proj_x`, { role: "viewer" }, { token: owner.token })).status).toBe(404);
  });
});

describe("tenancy", () => {
  it("answers 404 to a user or key of another org on every member route", async () => {
    const a = await seededOrg("TA");
    const b = await seededOrg("TB");
    const keyA = await api.orgKey(a.owner.session, a.org.id, "admin");
    const base = `/api/v1/orgs/${b.org.id}/members`;
    for (const auth of [{ token: a.owner.token }, { session: a.owner.session }, { token: keyA.token }]) {
      const replies = [
        await api.get(base, auth),
        await api.patch(`${base}/${b.member.userId}`, { role: "admin" }, auth),
        await api.delete(`${base}/${b.member.userId}`, auth),
        await api.get(`${base}/${b.member.userId}/projects`, auth),
        await api.put(`${base}/${b.member.userId}/projects/${b.project.id}`, { role: "viewer" }, auth),
        await api.delete(`${base}/${b.member.userId}/projects/${b.project.id}`, auth),
        // Org A's own path with org B's people and projects finds nothing either.
        await api.patch(`/api/v1/orgs/${a.org.id}/members/${b.member.userId}`, { role: "admin" }, auth),
      ];
      expect(replies.map((r) => r.status)).toEqual([404, 404, 404, 404, 404, 404, 404]);
      for (const reply of replies) expect(reply.body.code).toBe("not_found");
    }
    const aPath = `/api/v1/orgs/${a.org.id}/members/${a.member.userId}/projects/${b.project.id}`;
    expect((await api.put(aPath, { role: "viewer" }, { token: a.owner.token })).status).toBe(404);
  });
});
