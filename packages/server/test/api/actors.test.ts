import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { actorForPrincipal, resolveInputActor, upsertExternalActor } from "../../src/modules/actors/service.js";
import { AppError } from "../../src/platform/errors.js";
import type { Principal } from "../../src/platform/http/auth.js";
import { decodeId, encodeId, newUuid } from "../../src/platform/ids.js";
import { collectPages } from "../support/paging.js";
import { useTestServer } from "../support/server.js";

const server = useTestServer();
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ACTOR_ID = /^actr_[a-z2-7]{26}$/;

async function project() {
  const owner = await server.api.userWithOrg();
  const base = `/api/v1/orgs/${owner.org.id}/projects/${owner.project.id}`;
  const ids = { orgId: decodeId("org", owner.org.id)!, projectId: decodeId("project", owner.project.id)! };
  return { ...owner, base, ids, auth: { token: owner.token } };
}

/** Lets the database clock move past the last write, so an update would show in updated_at. */
const tick = () => sleep(5);

describe("PUT actors: upserting external actors", () => {
  it("creates an external actor and answers it", async () => {
    const { base, auth, org, project: proj } = await project();
    const reply = await server.api.put(
      `${base}/actors`,
      { provider_tenant_id: "T01", provider_user_id: "U01", display_name: "Ada", metadata: { team: "core" } },
      auth,
    );
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({
      id: expect.stringMatching(ACTOR_ID),
      org_id: org.id,
      project_id: proj.id,
      provider: "external",
      provider_tenant_id: "T01",
      provider_user_id: "U01",
      display_name: "Ada",
      metadata: { team: "core" },
      created_at: expect.stringMatching(ISO),
      updated_at: reply.body.created_at,
    });
  });

  it("keeps omitted attributes, overwrites given ones (empty included) and leaves an unchanged actor alone", async () => {
    const { base, auth } = await project();
    const put = (body: object) => server.api.put(`${base}/actors`, { provider_tenant_id: "T", provider_user_id: "U", ...body }, auth);
    const created = (await put({ display_name: "Ada", metadata: { a: "1" } })).body;
    await tick();

    const same = await put({ display_name: "Ada", metadata: { a: "1" } });
    expect(same.status).toBe(200);
    expect(same.body).toEqual(created);

    const omitted = await put({});
    expect(omitted.body).toEqual(created);
    const onlyName = await put({ display_name: "Ada" });
    expect(onlyName.body).toEqual(created);

    const renamed = await put({ display_name: "Ada L." });
    expect(renamed.body).toEqual({ ...created, display_name: "Ada L.", updated_at: expect.stringMatching(ISO) });
    expect(renamed.body.updated_at > created.updated_at).toBe(true);
    await tick();

    const emptied = await put({ display_name: "", metadata: {} });
    expect(emptied.body).toMatchObject({ id: created.id, display_name: "", metadata: {}, created_at: created.created_at });
    expect(emptied.body.updated_at > renamed.body.updated_at).toBe(true);

    // Metadata is replaced whole, never merged; key order does not make a change.
    await put({ metadata: { b: "2", c: "3" } });
    await tick();
    const reordered = await put({ metadata: { c: "3", b: "2" } });
    const read = await server.api.get(`${base}/actors/${created.id}`, auth);
    expect(read.body).toEqual(reordered.body);
    expect(read.body.metadata).toEqual({ b: "2", c: "3" });
  });

  it("tells identities apart by tenant; an absent tenant is its own identity and is not shown", async () => {
    const { base, auth } = await project();
    const withTenant = await server.api.put(`${base}/actors`, { provider_tenant_id: "T", provider_user_id: "U" }, auth);
    const otherTenant = await server.api.put(`${base}/actors`, { provider_tenant_id: "T2", provider_user_id: "U" }, auth);
    const noTenant = await server.api.put(`${base}/actors`, { provider_user_id: "U" }, auth);
    const ids = new Set([withTenant.body.id, otherTenant.body.id, noTenant.body.id]);
    expect(ids.size).toBe(3);
    expect(noTenant.body).not.toHaveProperty("provider_tenant_id");
    expect(noTenant.body).not.toHaveProperty("display_name");
    expect(noTenant.body.metadata).toEqual({});
    expect((await server.api.put(`${base}/actors`, { provider_user_id: "U" }, auth)).body.id).toBe(noTenant.body.id);
  });

  it("gives concurrent upserts of one new identity one actor and no errors", async () => {
    const { base, auth } = await project();
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) => server.api.put(`${base}/actors`, { provider_tenant_id: "T", provider_user_id: "race", display_name: `n${i % 2}` }, auth)),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(new Set(replies.map((r) => r.body.id)).size).toBe(1);
    const listed = await server.api.get(`${base}/actors?provider_user_id=race`, auth);
    expect(listed.body.data).toHaveLength(1);
  });

  it("validates the body", async () => {
    const { base, auth } = await project();
    const invalid = async (body: unknown, path: string) => {
      const reply = await server.api.put(`${base}/actors`, body, auth);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.code).toBe("validation_failed");
      expect(reply.body.issues.map((i: { path: string }) => i.path), JSON.stringify(body)).toContain(path);
    };
    await invalid({}, "/provider_user_id");
    await invalid({ provider_user_id: "" }, "/provider_user_id");
    await invalid({ provider_user_id: "u".repeat(129) }, "/provider_user_id");
    await invalid({ provider_user_id: "u", provider_tenant_id: "" }, "/provider_tenant_id");
    await invalid({ provider_user_id: "u", provider_tenant_id: "t".repeat(129) }, "/provider_tenant_id");
    await invalid({ provider_user_id: "u", display_name: "d".repeat(257) }, "/display_name");
    await invalid({ provider_user_id: "u", metadata: { k: 1 } }, "/metadata/k");
    await invalid({ provider_user_id: "u", provider: "svc" }, "/provider");
    await invalid({ provider_user_id: 7 }, "/provider_user_id");
    await invalid({ provider_user_id: "a\u0000b" }, "/provider_user_id");
    await invalid({ provider_user_id: "u", display_name: "\u0000" }, "/display_name");
    await invalid({ provider_user_id: "u", metadata: { "a/b": "\u0000" } }, "/metadata/a~1b");
    expect((await server.api.put(`${base}/actors`, { provider_user_id: "u".repeat(128), display_name: "d".repeat(256) }, auth)).status).toBe(200);

    const huge = await server.api.put(`${base}/actors`, { provider_user_id: "u", display_name: "x".repeat(2 * 1024 * 1024) }, auth);
    expect(huge.status).toBe(413);
    expect(huge.body).toEqual({ error: expect.any(String), code: "request_too_large" });
  });
});

describe("GET actors", () => {
  it("lists in created_at, id order, pages through every size, and filters exactly", async () => {
    const { base, auth } = await project();
    const made: any[] = [];
    for (const [tenant, user] of [["A", "1"], ["A", "2"], ["B", "1"], [undefined, "1"], ["A", "3"]] as const) {
      const reply = await server.api.put(`${base}/actors`, { ...(tenant ? { provider_tenant_id: tenant } : {}), provider_user_id: user }, auth);
      made.push(reply.body);
    }
    const order = [...made].sort((a, b) => (a.created_at === b.created_at ? (decodeId("actor", a.id)! < decodeId("actor", b.id)! ? -1 : 1) : a.created_at < b.created_at ? -1 : 1));
    for (const limit of [1, 2, 3, 50]) {
      const all = await collectPages(server.api, `${base}/actors?limit=${limit}`, auth, (page) => expect(page.body.data.length).toBeLessThanOrEqual(limit));
      expect(all, `limit ${limit}`).toEqual(order);
    }
    const ids = async (query: string) => (await collectPages(server.api, `${base}/actors?${query}`, auth)).map((a) => a.id);
    expect(await ids("provider_tenant_id=A")).toEqual(order.filter((a) => a.provider_tenant_id === "A").map((a) => a.id));
    expect(await ids("provider_tenant_id=")).toEqual([made[3].id]);
    expect(await ids("provider_user_id=1")).toEqual(order.filter((a) => a.provider_user_id === "1").map((a) => a.id));
    expect(await ids("provider_tenant_id=A&provider_user_id=2&limit=1")).toEqual([made[1].id]);
    expect(await ids("provider=external")).toHaveLength(5);
    expect(await ids("provider=svc")).toEqual([]);
    expect(await ids("provider=integration")).toEqual([]);
  });

  it("refuses bad query parameters with 400 invalid_request", async () => {
    const { base, auth } = await project();
    for (const query of ["provider=slack", "limit=0", "limit=101", "cursor=not-a-cursor", "provider_user_id=", "unknown=1"]) {
      const reply = await server.api.get(`${base}/actors?${query}`, auth);
      expect(reply.status, query).toBe(400);
      expect(reply.body.code, query).toBe("invalid_request");
    }
  });

  it("reads one actor of the project; other projects' and unknown ids are 404", async () => {
    const { base, auth, org } = await project();
    const actor = (await server.api.put(`${base}/actors`, { provider_user_id: "U" }, auth)).body;
    expect((await server.api.get(`${base}/actors/${actor.id}`, auth)).body).toEqual(actor);
    const other = await server.api.post(`/api/v1/orgs/${org.id}/projects`, { name: "Other" }, auth);
    expect((await server.api.get(`/api/v1/orgs/${org.id}/projects/${other.body.id}/actors/${actor.id}`, auth)).status).toBe(404);
    expect((await server.api.get(`${base}/actors/${encodeId("actor", newUuid())}`, auth)).status).toBe(404);
    expect((await server.api.get(`${base}/actors/actr_short`, auth)).status).toBe(404);
    expect((await server.api.get(`${base}/actors/${org.id}`, auth)).status).toBe(404);
  });
});

describe("permissions", () => {
  it("reads need agent.read and upserts agent.operate; invisible projects are 404", async () => {
    const { base, auth, org, project: proj, session } = await project();
    const actor = (await server.api.put(`${base}/actors`, { provider_user_id: "U" }, auth)).body;
    const stranger = await server.api.userWithOrg("Elsewhere");
    const member = await server.api.orgMember(auth, org.id, "member");
    const setRole = async (role: string) => {
      const reply = await server.api.put(`/api/v1/orgs/${org.id}/members/${member.userId}/projects/${proj.id}`, { role }, auth);
      expect(reply.status, reply.text).toBe(200);
    };
    const statuses = async (token: string) => [
      (await server.api.get(`${base}/actors`, { token })).status,
      (await server.api.get(`${base}/actors/${actor.id}`, { token })).status,
      (await server.api.put(`${base}/actors`, { provider_user_id: "V" }, { token })).status,
    ];
    expect(await statuses(stranger.token)).toEqual([404, 404, 404]);
    expect(await statuses(member.token)).toEqual([404, 404, 404]);
    await setRole("viewer");
    expect(await statuses(member.token)).toEqual([200, 200, 403]);
    await setRole("operator");
    expect(await statuses(member.token)).toEqual([200, 200, 200]);

    // A member-role org key sees nothing until it is given project roles; an admin key acts on every project.
    const memberKey = await server.api.orgKey(session, org.id, "member");
    expect(await statuses(memberKey.token)).toEqual([404, 404, 404]);
    const adminKey = await server.api.orgKey(session, org.id, "admin");
    expect(await statuses(adminKey.token)).toEqual([200, 200, 200]);
    expect((await server.api.get(`${base}/actors`)).status).toBe(401);
  });
});

describe("attribution helpers for other modules", () => {
  it("gives a user their svc actor, made once, named after them, and refuses a user naming an actor", async () => {
    const { base, auth, ids, userId } = await project();
    const me = await server.api.get("/api/v1/me", auth);
    const principal: Principal = { kind: "user", userId: decodeId("user", userId)!, via: "pat", patId: newUuid() };
    const first = await server.db.tx((tx) => resolveInputActor(tx, principal, ids.orgId, ids.projectId, undefined));
    await tick();
    const again = await server.db.tx((tx) => actorForPrincipal(tx, principal, ids.orgId, ids.projectId));
    expect(again).toEqual(first);
    expect(first).toMatchObject({ provider: "svc", providerTenantId: "", providerUserId: userId, displayName: me.body.user.display_name, userId: principal.userId });

    const listed = await server.api.get(`${base}/actors?provider=svc`, auth);
    expect(listed.body.data).toEqual([
      {
        id: encodeId("actor", first!.id),
        org_id: expect.any(String),
        project_id: expect.any(String),
        provider: "svc",
        provider_user_id: userId,
        display_name: me.body.user.display_name,
        metadata: {},
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
      },
    ]);

    const refused = await server.db
      .tx((tx) => resolveInputActor(tx, principal, ids.orgId, ids.projectId, { provider_user_id: "someone" }))
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe("invalid_request");
    expect((refused as AppError).message).toMatch(/omit actor/);
  });

  it("attributes an org key to the external actor it names, or to no one", async () => {
    const { ids, base, auth } = await project();
    const key: Principal = { kind: "org_api_key", keyId: newUuid(), orgId: ids.orgId };
    expect(await server.db.tx((tx) => actorForPrincipal(tx, key, ids.orgId, ids.projectId))).toBeNull();
    expect(await server.db.tx((tx) => resolveInputActor(tx, key, ids.orgId, ids.projectId, undefined))).toBeNull();
    const named = await server.db.tx((tx) => resolveInputActor(tx, key, ids.orgId, ids.projectId, { provider_user_id: "ext", display_name: "Ext" }));
    expect(named).toMatchObject({ provider: "external", providerUserId: "ext", displayName: "Ext" });
    const direct = await server.db.tx((tx) => upsertExternalActor(tx, ids.orgId, ids.projectId, { provider_user_id: "ext" }));
    expect(direct).toEqual(named);
    // Issues point into the request body the params came from.
    const bad = await server.db
      .tx((tx) => resolveInputActor(tx, key, ids.orgId, ids.projectId, { provider_user_id: "e\u0000" }))
      .catch((err: unknown) => err);
    expect((bad as AppError).details.issues).toEqual([{ path: "/actor/provider_user_id", message: expect.stringMatching(/U\+0000/) }]);
    expect((await server.api.get(`${base}/actors`, auth)).body.data).toHaveLength(1);
  });
});
