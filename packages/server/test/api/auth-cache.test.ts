import { describe, expect, it } from "vitest";
import { useTestServer } from "../support/server.js";
import { countStatements } from "../support/statements.js";

/*
 * Issue 8, item 4: bearer tokens and access facts are answered from a short-lived per-process cache
 * (SVC_AUTH_CACHE_TTL_MS, 5 s by default). A revocation served by this process takes effect at once;
 * last_used_at is written at most once a minute.
 */
// Statements are counted exactly: no background receipts processor runs beside the requests.
const server = useTestServer({}, { followReceipts: false });


/** Uses a credential often enough that anything cacheable is cached. */
async function warm(path: string, token: string): Promise<void> {
  for (let i = 0; i < 3; i++) expect((await server.api.get(path, { token })).status).toBe(200);
}

describe("auth cache", () => {
  it("looks a new token up once for a burst of requests that all carry it", async () => {
    const owner = await server.api.userWithOrg("Cache burst");
    const token = async (name: string) => (await server.api.post("/api/v1/personal-access-tokens", { name }, { session: owner.session })).body.token as string;
    const [one, other] = [await token("one after another"), await token("all at once")];
    const me = (value: string) => server.api.get("/api/v1/me", { token: value });

    const inTurn = countStatements(server);
    for (let i = 0; i < 10; i++) expect((await me(one)).status).toBe(200);
    const sequential = inTurn().statements;
    // Ten requests at once with a token not yet cached: one lookup (and one last_used_at write), shared,
    // so the burst costs what ten requests in turn cost, the first filling the cache.
    const together = countStatements(server);
    expect((await Promise.all(Array.from({ length: 10 }, () => me(other)))).map((reply) => reply.status)).toEqual(Array.from({ length: 10 }, () => 200));
    expect(together().statements).toBe(sequential);
  });

  it("refuses a revoked organization API key on the very next request", async () => {
    const owner = await server.api.userWithOrg("Cache keys");
    const created = await server.api.post(`/api/v1/orgs/${owner.org.id}/api-keys`, { name: "ci", org_role: "member" }, { session: owner.session });
    const keyPath = `/api/v1/orgs/${owner.org.id}/api-keys/${created.body.api_key.id}`;
    await warm(`/api/v1/orgs/${owner.org.id}`, created.body.token);
    expect((await server.api.post(`${keyPath}/revoke`, undefined, { session: owner.session })).status).toBe(200);
    const after = await server.api.get(`/api/v1/orgs/${owner.org.id}`, { token: created.body.token });
    expect(after.status).toBe(401);
    expect(after.body.code).toBe("unauthorized");
  });

  it("refuses a revoked personal access token on the very next request", async () => {
    const owner = await server.api.userWithOrg("Cache pats");
    const created = await server.api.post("/api/v1/personal-access-tokens", { name: "short" }, { session: owner.session });
    await warm("/api/v1/me", created.body.token);
    const revoked = await server.api.post(`/api/v1/personal-access-tokens/${created.body.token_record.id}/revoke`, undefined, {
      session: owner.session,
    });
    expect(revoked.status).toBe(200);
    expect((await server.api.get("/api/v1/me", { token: created.body.token })).status).toBe(401);
  });

  it("applies a removed membership and a changed role on the very next request", async () => {
    const owner = await server.api.userWithOrg("Cache members");
    const projectPath = `/api/v1/orgs/${owner.org.id}/projects/${owner.project.id}`;
    const admin = await server.api.orgMember({ token: owner.token }, owner.org.id, "admin");
    await warm(projectPath, admin.token);
    expect((await server.api.get(`/api/v1/orgs/${owner.org.id}/api-keys`, { token: admin.token })).status).toBe(200);

    const demoted = await server.api.patch(`/api/v1/orgs/${owner.org.id}/members/${admin.session.userId}`, { role: "member" }, { token: owner.token });
    expect(demoted.status).toBe(200);
    expect((await server.api.get(`/api/v1/orgs/${owner.org.id}/api-keys`, { token: admin.token })).status).toBe(403);
    // An org member without an explicit grant cannot read the project any more.
    expect((await server.api.get(projectPath, { token: admin.token })).status).toBe(404);

    const removed = await server.api.delete(`/api/v1/orgs/${owner.org.id}/members/${admin.session.userId}`, { token: owner.token });
    expect(removed.status).toBe(204);
    expect((await server.api.get(`/api/v1/orgs/${owner.org.id}`, { token: admin.token })).status).toBe(404);
  });

  it("shows a renamed project's new name and forgets a deleted one at once", async () => {
    const owner = await server.api.userWithOrg("Cache projects");
    const created = await server.api.post(`/api/v1/orgs/${owner.org.id}/projects`, { name: "before" }, { token: owner.token });
    const path = `/api/v1/orgs/${owner.org.id}/projects/${created.body.id}`;
    await warm(path, owner.token);
    expect((await server.api.patch(path, { name: "after" }, { token: owner.token })).status).toBe(200);
    expect((await server.api.get(path, { token: owner.token })).body.name).toBe("after");
    expect((await server.api.delete(path, { token: owner.token })).status).toBe(204);
    expect((await server.api.get(path, { token: owner.token })).status).toBe(404);
  });

  it("writes last_used_at once, not on every request", async () => {
    const owner = await server.api.userWithOrg("Cache last use");
    const created = await server.api.post(`/api/v1/orgs/${owner.org.id}/api-keys`, { name: "busy", org_role: "member" }, { session: owner.session });
    const keyPath = `/api/v1/orgs/${owner.org.id}/api-keys/${created.body.api_key.id}`;
    await warm(`/api/v1/orgs/${owner.org.id}`, created.body.token);
    const first = (await server.api.get(keyPath, { token: owner.token })).body.last_used_at as string;
    expect(first).toEqual(expect.any(String));
    await warm(`/api/v1/orgs/${owner.org.id}`, created.body.token);
    expect((await server.api.get(keyPath, { token: owner.token })).body.last_used_at).toBe(first);
  });
});
