import { collectPages } from "../support/paging.js";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../support/server.js";

const server = useTestServer();

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Walks every page of a list and returns the names in order. */
async function allNames(path: string, token: string, limit: number): Promise<string[]> {
  const sep = path.includes("?") ? "&" : "?";
  const items = await collectPages(server.api, `${path}${sep}limit=${limit}`, { token }, (reply) =>
    expect(reply.body.data.length).toBeLessThanOrEqual(limit),
  );
  return items.map((p: { name: string }) => p.name);
}

describe("organizations", () => {
  it("creates an org with a first project and the creator as owner", async () => {
    const session = await server.api.signup();
    const token = await server.api.pat(session);
    const reply = await server.api.post("/api/v1/orgs", { name: "Acme" }, { token });
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      org: { id: expect.stringMatching(/^org_[a-z2-7]{26}$/), name: "Acme", created_at: expect.stringMatching(ISO), updated_at: expect.stringMatching(ISO) },
      project: {
        id: expect.stringMatching(/^proj_[a-z2-7]{26}$/),
        org_id: reply.body.org.id,
        name: "Default",
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
      },
      membership: { org_id: reply.body.org.id, user_id: session.userId, role: "owner", created_at: expect.stringMatching(ISO) },
    });
    const me = await server.api.get("/api/v1/me", { token });
    expect(me.body.orgs).toEqual([{ id: reply.body.org.id, name: "Acme", role: "owner", created_at: reply.body.org.created_at }]);
    const got = await server.api.get(`/api/v1/orgs/${reply.body.org.id}`, { token });
    expect(got.body).toEqual(reply.body.org);
  });

  it("replays a creation with the same Idempotency-Key and refuses a different request under it", async () => {
    const { token } = await server.api.userWithOrg();
    const headers = { "idempotency-key": "create-org-1" };
    const first = await server.api.post("/api/v1/orgs", { name: "Once" }, { token, headers });
    const again = await server.api.post("/api/v1/orgs", { name: "Once" }, { token, headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const different = await server.api.post("/api/v1/orgs", { name: "Other" }, { token, headers });
    expect(different.status).toBe(409);
    expect(different.body.code).toBe("idempotency_key_conflict");
  });

  it("lets only the owner delete an org, and then it is gone", async () => {
    const owner = await server.api.userWithOrg("Doomed");
    const outsider = await server.api.userWithOrg("Elsewhere");
    const path = `/api/v1/orgs/${owner.org.id}`;
    expect((await server.api.delete(path, { token: outsider.token })).status).toBe(404);
    const deleted = await server.api.delete(path, { token: owner.token });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe("");
    expect((await server.api.get(path, { token: owner.token })).status).toBe(404);
    expect((await server.api.get(`${path}/projects/${owner.project.id}`, { token: owner.token })).status).toBe(404);
  });
});

describe("projects", () => {
  it("creates, reads, renames and deletes a project", async () => {
    const { token, org } = await server.api.userWithOrg();
    const base = `/api/v1/orgs/${org.id}/projects`;
    const created = await server.api.post(base, { name: "Billing" }, { token });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^proj_/),
      org_id: org.id,
      name: "Billing",
      created_at: expect.stringMatching(ISO),
      updated_at: created.body.created_at,
    });
    const access = { can_read: true, can_manage: true, can_manage_access: true, can_operate: true };
    const got = await server.api.get(`${base}/${created.body.id}`, { token });
    expect(got.body).toEqual({ ...created.body, access });

    const renamed = await server.api.patch(`${base}/${created.body.id}`, { name: "Invoicing" }, { token });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe("Invoicing");
    expect(Date.parse(renamed.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.body.updated_at));

    expect((await server.api.post(base, { name: "Invoicing" }, { token })).body.code).toBe("conflict");
    expect((await server.api.patch(`${base}/${created.body.id}`, { name: "Default" }, { token })).status).toBe(409);

    expect((await server.api.delete(`${base}/${created.body.id}`, { token })).status).toBe(204);
    expect((await server.api.get(`${base}/${created.body.id}`, { token })).status).toBe(404);
    expect((await server.api.delete(`${base}/${created.body.id}`, { token })).status).toBe(404);
  });

  it("replays project creation under an Idempotency-Key", async () => {
    const { token, org } = await server.api.userWithOrg();
    const base = `/api/v1/orgs/${org.id}/projects`;
    const headers = { "idempotency-key": "p-1" };
    const first = await server.api.post(base, { name: "Once" }, { token, headers });
    const again = await server.api.post(base, { name: "Once" }, { token, headers });
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(again.body).toEqual(first.body);
    expect((await server.api.post(base, { name: "Twice" }, { token, headers })).body.code).toBe("idempotency_key_conflict");
  });

  it("pages through every project exactly once under every sort", async () => {
    const { token, org } = await server.api.userWithOrg();
    const base = `/api/v1/orgs/${org.id}/projects`;
    const names = ["delta", "Alpha", "charlie", "bravo", "echo", "Foxtrot", "golf"];
    for (const name of names) expect((await server.api.post(base, { name }, { token })).status).toBe(201);
    const all = ["Default", ...names];
    const newestFirst = [...all].reverse();
    expect(await allNames(base, token, 3)).toEqual(newestFirst);
    expect(await allNames(`${base}?sort=-created_at`, token, 2)).toEqual(newestFirst);
    expect(await allNames(`${base}?sort=created_at`, token, 2)).toEqual(all);
    const byCodePoint = [...all].sort();
    expect(await allNames(`${base}?sort=name`, token, 3)).toEqual(byCodePoint);
    expect(await allNames(`${base}?sort=-name`, token, 1)).toEqual([...byCodePoint].reverse());

    // Renaming bumps updated_at, which moves the project to the front of -updated_at.
    const list = await server.api.get(`${base}?name=bravo`, { token });
    await server.api.patch(`${base}/${list.body.data[0].id}`, { name: "bravo2" }, { token });
    const updated = await allNames(`${base}?sort=-updated_at`, token, 2);
    expect(updated[0]).toBe("bravo2");
    expect([...updated].sort()).toEqual([...all.map((n) => (n === "bravo" ? "bravo2" : n))].sort());
  });

  it("filters by a case-insensitive glob with escapes", async () => {
    const { token, org } = await server.api.userWithOrg();
    const base = `/api/v1/orgs/${org.id}/projects`;
    for (const name of ["web-app", "Web-API", "worker", "100%", "a_b", "axb", "star*", "stars", "q?", "qx", "back\\slash"]) {
      expect((await server.api.post(base, { name }, { token })).status).toBe(201);
    }
    const names = async (glob: string) => (await allNames(`${base}?sort=name&name=${encodeURIComponent(glob)}`, token, 100)).sort();
    expect(await names("web-*")).toEqual(["Web-API", "web-app"]);
    expect(await names("WEB-AP?")).toEqual(["Web-API", "web-app"]);
    expect(await names("w*r")).toEqual(["worker"]);
    expect(await names("100%")).toEqual(["100%"]);
    expect(await names("1%")).toEqual([]);
    expect(await names("a_b")).toEqual(["a_b"]);
    expect(await names("a?b")).toEqual(["a_b", "axb"]);
    expect(await names("star\\*")).toEqual(["star*"]);
    expect(await names("star*")).toEqual(["star*", "stars"]);
    expect(await names("q\\?")).toEqual(["q?"]);
    expect(await names("back\\\\slash")).toEqual(["back\\slash"]);
    expect(await names("*")).toHaveLength(12);
    expect(await names("nothing*")).toEqual([]);
  });
});

describe("tenancy", () => {
  it("never shows one organization's data to another's credentials", async () => {
    const a = await server.api.userWithOrg("A");
    const b = await server.api.userWithOrg("B");
    const paths = [
      `/api/v1/orgs/${a.org.id}`,
      `/api/v1/orgs/${a.org.id}/projects`,
      `/api/v1/orgs/${a.org.id}/projects/${a.project.id}`,
      `/api/v1/orgs/${b.org.id}/projects/${a.project.id}`,
    ];
    for (const path of paths) {
      const reply = await server.api.get(path, { token: b.token });
      expect(reply.status, path).toBe(404);
      expect(reply.body.code).toBe("not_found");
    }
    expect((await server.api.patch(`/api/v1/orgs/${b.org.id}/projects/${a.project.id}`, { name: "x" }, { token: b.token })).status).toBe(404);
    expect((await server.api.delete(`/api/v1/orgs/${b.org.id}/projects/${a.project.id}`, { token: b.token })).status).toBe(404);
    expect((await server.api.post(`/api/v1/orgs/${a.org.id}/projects`, { name: "intruder" }, { token: b.token })).status).toBe(404);
    const me = await server.api.get("/api/v1/me", { token: b.token });
    expect(me.body.orgs.map((o: { id: string }) => o.id)).toEqual([b.org.id]);
  });
});
