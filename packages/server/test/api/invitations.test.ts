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
let counter = 0;
const uniqueEmail = (tag: string) => `${tag}-${++counter}-${Date.now()}@example.com`;

async function collect(path: string, auth: Auth): Promise<any[]> {
  return collectPages(api, path, auth);
}

/** A signed-up user with a personal token, for the invitee side. */
async function person(email = uniqueEmail("invitee")) {
  const session = await api.signup({ email });
  return { session, token: await api.pat(session), userId: session.userId, email };
}

describe("inviting", () => {
  it("creates an invitation with exact fields and lists it for the org", async () => {
    const owner = await api.userWithOrg("Invite Co");
    const email = uniqueEmail("New.Person");
    const reply = await api.post(`/api/v1/orgs/${owner.org.id}/invitations`, { email, role: "admin" }, { token: owner.token });
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      id: expect.stringMatching(/^oinv_[a-z2-7]{26}$/),
      org_id: owner.org.id,
      org_name: "Invite Co",
      email,
      org_role: "admin",
      created_at: expect.stringMatching(ISO),
    });
    const listed = await api.get(`/api/v1/orgs/${owner.org.id}/invitations`, { token: owner.token });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ data: [reply.body], next_cursor: null });
  });

  it("lists an org's invitations newest first, visiting each once across pages", async () => {
    const owner = await api.userWithOrg("Many");
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const reply = await api.post(`/api/v1/orgs/${owner.org.id}/invitations`, { email: uniqueEmail("m"), role: "member" }, { session: owner.session });
      expect(reply.status).toBe(201);
      ids.push(reply.body.id);
    }
    const full = (await api.get(`/api/v1/orgs/${owner.org.id}/invitations`, { token: owner.token })).body.data;
    const times = full.map((i: any) => i.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    const paged = await collect(`/api/v1/orgs/${owner.org.id}/invitations?limit=2`, { token: owner.token });
    expect(paged).toEqual(full);
    expect(new Set(paged.map((i) => i.id))).toEqual(new Set(ids));
  });

  it("validates the request and refuses duplicates and existing members", async () => {
    const owner = await api.userWithOrg("Strict");
    const path = `/api/v1/orgs/${owner.org.id}/invitations`;
    for (const body of [
      { email: "x@example.com", role: "owner" },
      { email: "x@example.com", role: "viewer" },
      { email: "not-an-email", role: "member" },
      { email: "x@example.com" },
      { role: "member" },
      { email: "x@example.com", role: "member", extra: true },
    ]) {
      const reply = await api.post(path, body, { token: owner.token });
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({ error: expect.any(String), code: "validation_failed", issues: expect.any(Array) });
    }
    const email = uniqueEmail("dup");
    expect((await api.post(path, { email, role: "member" }, { token: owner.token })).status).toBe(201);
    const again = await api.post(path, { email: email.toUpperCase(), role: "admin" }, { token: owner.token });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: expect.any(String), code: "conflict" });

    const member = await api.orgMember({ token: owner.token }, owner.org.id, "member");
    const existing = await api.post(path, { email: member.session.email.toUpperCase(), role: "member" }, { token: owner.token });
    expect(existing.status).toBe(409);
    expect(existing.body.code).toBe("conflict");
    const ownerSelf = await api.post(path, { email: owner.session.email, role: "admin" }, { token: owner.token });
    expect(ownerSelf.status).toBe(409);
  });

  it("is for org managers: owners, admins and admin keys; members get 403, outsiders 404", async () => {
    const owner = await api.userWithOrg("Matrix");
    const admin = await api.orgMember({ token: owner.token }, owner.org.id, "admin");
    const member = await api.orgMember({ token: owner.token }, owner.org.id, "member");
    const adminKey = await api.orgKey(owner.session, owner.org.id, "admin");
    const memberKey = await api.orgKey(owner.session, owner.org.id, "member");
    const outsider = await api.userWithOrg("Outsider");
    const path = `/api/v1/orgs/${owner.org.id}/invitations`;

    const expected: Array<[string, Auth, number]> = [
      ["owner", { token: owner.token }, 201],
      ["admin", { token: admin.token }, 201],
      ["admin key", { token: adminKey.token }, 201],
      ["member", { token: member.token }, 403],
      ["member key", { token: memberKey.token }, 403],
      ["outsider", { token: outsider.token }, 404],
    ];
    let made: any;
    for (const [who, auth, status] of expected) {
      const created = await api.post(path, { email: uniqueEmail(who.replace(" ", "")), role: "member" }, auth);
      expect([who, created.status]).toEqual([who, status]);
      if (status === 201) made = created.body;
      const listed = await api.get(path, auth);
      expect([who, listed.status]).toEqual([who, status === 201 ? 200 : status]);
    }
    for (const [who, auth, status] of expected.filter(([, , s]) => s !== 201)) {
      expect([who, (await api.delete(`${path}/${made.id}`, auth)).status]).toEqual([who, status]);
    }
    expect((await api.delete(`${path}/${made.id}`, { token: adminKey.token })).status).toBe(204);
  });
});

describe("answering invitations", () => {
  it("shows a user their pending invitations from every org, oldest first, paged", async () => {
    const invitee = await person(uniqueEmail("Pending.User"));
    const others = await person();
    const orgs: Array<{ owner: Awaited<ReturnType<ApiClient["userWithOrg"]>>; invitation: any }> = [];
    for (const name of ["First", "Second", "Third"]) {
      const owner = await api.userWithOrg(name);
      const invited = await api.post(`/api/v1/orgs/${owner.org.id}/invitations`, { email: invitee.email.toUpperCase(), role: "member" }, { token: owner.token });
      expect(invited.status).toBe(201);
      orgs.push({ owner, invitation: invited.body });
    }
    const mine = await api.get("/api/v1/invitations", { token: invitee.token });
    expect(mine.status).toBe(200);
    expect(mine.body.next_cursor).toBeNull();
    expect(mine.body.data).toHaveLength(3);
    const times = mine.body.data.map((i: any) => i.created_at);
    expect([...times].sort()).toEqual(times);
    expect(new Set(mine.body.data.map((i: any) => i.id))).toEqual(new Set(orgs.map((o) => o.invitation.id)));
    expect(mine.body.data.find((i: any) => i.id === orgs[0]!.invitation.id)).toEqual({
      ...orgs[0]!.invitation,
      org_name: "First",
      email: invitee.email.toUpperCase(),
    });
    const paged = await collect("/api/v1/invitations?limit=1", { session: invitee.session });
    expect(paged).toEqual(mine.body.data);

    expect((await api.get("/api/v1/invitations", { token: others.token })).body).toEqual({ data: [], next_cursor: null });
    const key = await api.orgKey(orgs[0]!.owner.session, orgs[0]!.owner.org.id, "admin");
    expect((await api.get("/api/v1/invitations", { token: key.token })).status).toBe(403);
    expect((await api.get("/api/v1/invitations")).status).toBe(401);
  });

  it("accepting joins the org with the invited role and consumes the invitation", async () => {
    const owner = await api.userWithOrg("Joinable");
    const invitee = await person();
    const invitation = (await api.post(`/api/v1/orgs/${owner.org.id}/invitations`, { email: invitee.email, role: "admin" }, { token: owner.token })).body;

    const stranger = await person();
    expect((await api.post(`/api/v1/invitations/${invitation.id}/accept`, undefined, { token: stranger.token })).status).toBe(404);
    expect((await api.post(`/api/v1/invitations/${invitation.id}/decline`, undefined, { token: stranger.token })).status).toBe(404);
    const key = await api.orgKey(owner.session, owner.org.id, "admin");
    expect((await api.post(`/api/v1/invitations/${invitation.id}/accept`, undefined, { token: key.token })).status).toBe(403);

    const accepted = await api.post(`/api/v1/invitations/${invitation.id}/accept`, undefined, { session: invitee.session });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual(invitation);

    const me = await api.get("/api/v1/me", { token: invitee.token });
    expect(me.body.orgs).toEqual([{ id: owner.org.id, name: "Joinable", role: "admin", created_at: expect.stringMatching(ISO) }]);
    const members = await api.get(`/api/v1/orgs/${owner.org.id}/members`, { token: owner.token });
    expect(members.body.data.find((m: any) => m.user_id === invitee.userId)).toMatchObject({ role: "admin", email: invitee.email });
    // An admin now: manages the org and sees every project.
    expect((await api.get(`/api/v1/orgs/${owner.org.id}/invitations`, { token: invitee.token })).status).toBe(200);
    expect((await api.get(`/api/v1/orgs/${owner.org.id}/projects/${owner.project.id}`, { token: invitee.token })).status).toBe(200);

    expect((await api.get("/api/v1/invitations", { token: invitee.token })).body.data).toEqual([]);
    expect((await api.get(`/api/v1/orgs/${owner.org.id}/invitations`, { token: owner.token })).body.data).toEqual([]);
    expect((await api.post(`/api/v1/invitations/${invitation.id}/accept`, undefined, { token: invitee.token })).status).toBe(404);
    expect((await api.post(`/api/v1/invitations/${invitation.id}/decline`, undefined, { token: invitee.token })).status).toBe(404);
    const reinvite = await api.post(`/api/v1/orgs/${owner.org.id}/invitations`, { email: invitee.email, role: "member" }, { token: owner.token });
    expect(reinvite.status).toBe(409);
  });

  it("a member-role invitation gives no project access until granted", async () => {
    const owner = await api.userWithOrg("Members");
    const invitee = await person();
    const invitation = (await api.post(`/api/v1/orgs/${owner.org.id}/invitations`, { email: invitee.email, role: "member" }, { token: owner.token })).body;
    expect((await api.post(`/api/v1/invitations/${invitation.id}/accept`, undefined, { token: invitee.token })).body.org_role).toBe("member");
    expect((await api.get(`/api/v1/orgs/${owner.org.id}`, { token: invitee.token })).status).toBe(200);
    expect((await api.get(`/api/v1/orgs/${owner.org.id}/projects`, { token: invitee.token })).body.data).toEqual([]);
    expect((await api.get(`/api/v1/orgs/${owner.org.id}/invitations`, { token: invitee.token })).status).toBe(403);
  });

  it("declining removes the invitation without joining, and the org may invite again", async () => {
    const owner = await api.userWithOrg("Declined");
    const invitee = await person();
    const invitation = (await api.post(`/api/v1/orgs/${owner.org.id}/invitations`, { email: invitee.email, role: "member" }, { token: owner.token })).body;
    const declined = await api.post(`/api/v1/invitations/${invitation.id}/decline`, undefined, { session: invitee.session });
    expect(declined.status).toBe(200);
    expect(declined.body).toEqual(invitation);
    expect((await api.get(`/api/v1/orgs/${owner.org.id}`, { token: invitee.token })).status).toBe(404);
    expect((await api.get("/api/v1/invitations", { token: invitee.token })).body.data).toEqual([]);
    expect((await api.post(`/api/v1/invitations/${invitation.id}/accept`, undefined, { token: invitee.token })).status).toBe(404);
    expect((await api.post(`/api/v1/orgs/${owner.org.id}/invitations`, { email: invitee.email, role: "member" }, { token: owner.token })).status).toBe(201);
  });

  it("a revoked invitation can no longer be accepted", async () => {
    const owner = await api.userWithOrg("Revoker");
    const invitee = await person();
    const invitation = (await api.post(`/api/v1/orgs/${owner.org.id}/invitations`, { email: invitee.email, role: "member" }, { token: owner.token })).body;
    const revoked = await api.delete(`/api/v1/orgs/${owner.org.id}/invitations/${invitation.id}`, { session: owner.session });
    expect(revoked.status).toBe(204);
    expect(revoked.text).toBe("");
    expect((await api.post(`/api/v1/invitations/${invitation.id}/accept`, undefined, { token: invitee.token })).status).toBe(404);
    expect((await api.delete(`/api/v1/orgs/${owner.org.id}/invitations/${invitation.id}`, { token: owner.token })).status).toBe(404);
    expect((await api.get(`/api/v1/orgs/${owner.org.id}`, { token: invitee.token })).status).toBe(404);
    expect((await api.post(`/api/v1/invitations/oinv_bad/accept`, undefined, { token: invitee.token })).status).toBe(404);
  });
});

describe("tenancy", () => {
  it("a user or key of org A gets 404 on org B's invitations", async () => {
    const a = await api.userWithOrg("A");
    const b = await api.userWithOrg("B");
    const keyA = await api.orgKey(a.session, a.org.id, "admin");
    const invitation = (await api.post(`/api/v1/orgs/${b.org.id}/invitations`, { email: uniqueEmail("b"), role: "member" }, { token: b.token })).body;
    for (const auth of [{ token: a.token }, { token: keyA.token }, { session: a.session }]) {
      const replies = [
        await api.get(`/api/v1/orgs/${b.org.id}/invitations`, auth),
        await api.post(`/api/v1/orgs/${b.org.id}/invitations`, { email: uniqueEmail("x"), role: "member" }, auth),
        await api.delete(`/api/v1/orgs/${b.org.id}/invitations/${invitation.id}`, auth),
        await api.delete(`/api/v1/orgs/${a.org.id}/invitations/${invitation.id}`, auth),
      ];
      expect(replies.map((r) => r.status)).toEqual([404, 404, 404, 404]);
    }
    expect((await api.get(`/api/v1/orgs/${b.org.id}/invitations`, { token: b.token })).body.data).toEqual([invitation]);
  });
});
