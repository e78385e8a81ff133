import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeProvider, type FakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { collectPages } from "../support/paging.js";
import { useTestServer } from "../support/server.js";
import { ISO } from "./models-fixtures.js";

const server = useTestServer({ SVC_ALLOW_PRIVATE_NETWORK: "true" });
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await fake?.close();
});

const APRF_ID = /^aprf_[a-z2-7]{26}$/;

/** A config of the project with its own instruction; returns the AgentConfig body. */
async function config(p: AgentProject, instruction: string) {
  const reply = await server.api.post(`${p.base}/agent-configs`, { source: yamlConfig(p, "", instruction), source_format: "yaml" }, { token: p.token });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

function createProfile(p: AgentProject, body: Record<string, unknown>, options: { token?: string; key?: string } = {}) {
  return server.api.post(`${p.base}/agent-profiles`, body, {
    token: options.token ?? p.token,
    headers: options.key ? { "idempotency-key": options.key } : {},
  });
}

describe("agent profiles", () => {
  it("keeps a description and the mcp_tool switch, set at creation or by PATCH, each member on its own", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const auth = { token: p.token };
    const a = await config(p, "A");
    const created = await createProfile(p, { name: "Tool", config: a.id, description: "Answers questions about invoices.", mcp_tool: true });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ name: "Tool", description: "Answers questions about invoices.", mcp_tool: true });
    const path = `${p.base}/agent-profiles/${created.body.id}`;
    const off = await server.api.patch(path, { mcp_tool: false }, auth);
    expect(off.status, off.text).toBe(200);
    expect(off.body).toMatchObject({ name: "Tool", description: "Answers questions about invoices.", mcp_tool: false });
    const described = await server.api.patch(path, { description: "", name: "Tool 2" }, auth);
    expect(described.body).toMatchObject({ name: "Tool 2", description: "", mcp_tool: false });
    expect((await server.api.get(path, auth)).body).toEqual(described.body);
    const unchanged = await server.api.patch(path, { mcp_tool: false }, auth);
    expect(unchanged.body).toEqual(described.body);

    const empty = await server.api.patch(path, {}, auth);
    expect(empty.status).toBe(400);
    expect(empty.body.code).toBe("validation_failed");
    const long = await server.api.patch(path, { description: "x".repeat(1025) }, auth);
    expect(long.status).toBe(400);
    expect(long.body.issues[0].path).toBe("/description");
    const notBoolean = await createProfile(p, { name: "Other", config: a.id, mcp_tool: "yes" });
    expect(notBoolean.status).toBe(400);
  });

  it("creates, reads, renames and deletes a profile", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const auth = { token: p.token };
    const a = await config(p, "A");
    const created = await createProfile(p, { name: "Support", config: a.id });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(APRF_ID),
      org_id: p.orgId,
      project_id: p.projectId,
      name: "Support",
      current_config_id: a.id,
      current_generation: 1,
      current_config: a,
      description: "",
      mcp_tool: false,
      created_at: expect.stringMatching(ISO),
      updated_at: created.body.created_at,
    });
    const path = `${p.base}/agent-profiles/${created.body.id}`;
    expect((await server.api.get(path, auth)).body).toEqual(created.body);

    const renamed = await server.api.patch(path, { name: "Customer support" }, auth);
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({ name: "Customer support", current_generation: 1, current_config_id: a.id });
    expect(Date.parse(renamed.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.body.updated_at));
    const unchanged = await server.api.patch(path, { name: "Customer support" }, auth);
    expect(unchanged.body).toEqual(renamed.body);

    const other = await createProfile(p, { name: "Other", config: a.id });
    expect(other.status).toBe(201);
    const taken = await server.api.patch(path, { name: "Other" }, auth);
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe("conflict");
    const twin = await createProfile(p, { name: "Other", config: a.id });
    expect(twin.status).toBe(409);
    expect(twin.body.code).toBe("conflict");

    const deleted = await server.api.delete(path, auth);
    expect(deleted.status).toBe(204);
    expect((await server.api.get(path, auth)).status).toBe(404);
    expect((await server.api.delete(path, auth)).status).toBe(404);
    // The config outlives the profile.
    expect((await server.api.get(`${p.base}/agent-configs/${a.id}`, auth)).status).toBe(200);
  });

  it("moves to a new generation only from the expected config", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const auth = { token: p.token };
    const [a, b, c] = [await config(p, "A"), await config(p, "B"), await config(p, "C")];
    const profile = (await createProfile(p, { name: "Gen", config: a.id })).body;
    const update = (body: Record<string, unknown>) => server.api.post(`${p.base}/agent-profiles/${profile.id}/config`, body, auth);

    const second = await update({ config: b.id, expected_current_config_id: a.id });
    expect(second.status, second.text).toBe(200);
    expect(second.body).toMatchObject({ current_config_id: b.id, current_generation: 2, current_config: b });

    // A retry of the same change finds it done: no new generation, even with the now stale expectation.
    const retried = await update({ config: b.id, expected_current_config_id: a.id });
    expect(retried.status).toBe(200);
    expect(retried.body).toEqual(second.body);

    const stale = await update({ config: c.id, expected_current_config_id: a.id });
    expect(stale.status).toBe(409);
    expect(stale.body).toEqual({ error: expect.stringContaining(b.id), code: "conflict" });

    const back = await update({ config: a.id, expected_current_config_id: b.id });
    expect(back.body).toMatchObject({ current_config_id: a.id, current_generation: 3 });
    expect((await server.api.get(`${p.base}/agent-profiles/${profile.id}`, auth)).body).toEqual(back.body);

    const missing = await update({ config: `acfg_${"a".repeat(26)}`, expected_current_config_id: a.id });
    expect(missing.status).toBe(404);
    const malformed = await update({ config: "cfg_1", expected_current_config_id: a.id });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe("validation_failed");
  });

  it("replays a create with the same Idempotency-Key and refuses the key for another request", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const [a, b] = [await config(p, "A"), await config(p, "B")];
    const first = await createProfile(p, { name: "Keyed", config: a.id }, { key: "create-keyed" });
    expect(first.status).toBe(201);
    const replay = await createProfile(p, { name: "Keyed", config: a.id }, { key: "create-keyed" });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);

    // Still the same creation after the profile moved on.
    const moved = await server.api.post(
      `${p.base}/agent-profiles/${first.body.id}/config`,
      { config: b.id, expected_current_config_id: a.id },
      { token: p.token },
    );
    const later = await createProfile(p, { name: "Keyed", config: a.id }, { key: "create-keyed" });
    expect(later.status).toBe(200);
    expect(later.body).toEqual(moved.body);

    for (const body of [{ name: "Keyed", config: b.id }, { name: "Renamed", config: a.id }]) {
      const reused = await createProfile(p, body, { key: "create-keyed" });
      expect(reused.status, JSON.stringify(body)).toBe(409);
      expect(reused.body.code).toBe("idempotency_key_conflict");
    }
    const list = await server.api.get(`${p.base}/agent-profiles`, { token: p.token });
    expect(list.body.data.map((profile: { id: string }) => profile.id)).toEqual([first.body.id]);
  });

  it("gives racing creates with one Idempotency-Key one profile", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const a = await config(p, "A");
    const replies = await Promise.all(Array.from({ length: 5 }, () => createProfile(p, { name: "Raced", config: a.id }, { key: "race" })));
    expect(new Set(replies.map((reply) => reply.body.id)).size).toBe(1);
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 200, 200, 200, 201]);
  });

  it("refuses configs the project does not have", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const elsewhere = await agentProject(server.api, fake.baseUrl);
    const foreign = await config(elsewhere, "Not yours");
    expect((await createProfile(p, { name: "X", config: foreign.id })).status).toBe(404);
    expect((await createProfile(p, { name: "X", config: `acfg_${"a".repeat(26)}` })).status).toBe(404);
    const bad = await createProfile(p, { name: " padded", config: foreign.id, extra: true });
    expect(bad.status).toBe(400);
    expect(bad.body.issues.map((i: { path: string }) => i.path).sort()).toEqual(["/extra", "/name"]);
  });

  it("lists profiles newest first, by name, filtered by a glob, in pages", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const auth = { token: p.token };
    const a = await config(p, "A");
    const names = ["beta", "Alpha one", "gamma", "alpha two", "delta"];
    const ids: string[] = [];
    for (const name of names) ids.push((await createProfile(p, { name, config: a.id })).body.id);

    const base = `${p.base}/agent-profiles`;
    const newest = await server.api.get(base, auth);
    expect(newest.body.data.map((x: { id: string }) => x.id)).toEqual([...ids].reverse());
    expect(newest.body.next_cursor).toBeNull();
    expect(newest.body.data[0].current_config).toEqual(a);

    const pages: number[] = [];
    const byName = await collectPages(server.api, `${base}?sort=name&limit=2`, auth, (reply) => pages.push(reply.body.data.length));
    expect(byName.map((x) => x.name)).toEqual(["Alpha one", "alpha two", "beta", "delta", "gamma"]);
    expect(pages).toEqual([2, 2, 1]);
    const oldest = await collectPages(server.api, `${base}?sort=created_at&limit=3`, auth);
    expect(oldest.map((x) => x.id)).toEqual(ids);

    const alphas = await server.api.get(`${base}?name=ALPHA*`, auth);
    expect(alphas.body.data.map((x: { name: string }) => x.name)).toEqual(["alpha two", "Alpha one"]);
    const single = await server.api.get(`${base}?name=?eta`, auth);
    expect(single.body.data.map((x: { name: string }) => x.name)).toEqual(["beta"]);
    for (const query of ["limit=0", "sort=size", "cursor=junk"]) {
      const reply = await server.api.get(`${base}?${query}`, auth);
      expect(reply.status, query).toBe(400);
      expect(reply.body.code).toBe("invalid_request");
    }
  });

  it("lets readers read, and only project managers change profiles", async () => {
    const p = await agentProject(server.api, fake.baseUrl);
    const owner = { token: p.token };
    const a = await config(p, "A");
    const b = await config(p, "B");
    const profile = (await createProfile(p, { name: "Guarded", config: a.id })).body;
    const path = `${p.base}/agent-profiles/${profile.id}`;
    const withRole = async (role: string) => {
      const member = await server.api.orgMember(owner, p.orgId, "member");
      const set = await server.api.put(`/api/v1/orgs/${p.orgId}/members/${member.userId}/projects/${p.projectId}`, { role }, owner);
      expect(set.status, set.text).toBe(200);
      return member.token;
    };

    for (const role of ["viewer", "operator"]) {
      const token = await withRole(role);
      expect((await server.api.get(path, { token })).status, role).toBe(200);
      expect((await server.api.get(`${p.base}/agent-profiles`, { token })).status, role).toBe(200);
      expect((await createProfile(p, { name: `by ${role}`, config: a.id }, { token })).status, role).toBe(403);
      expect((await server.api.patch(path, { name: "Mine" }, { token })).status, role).toBe(403);
      expect((await server.api.post(`${path}/config`, { config: b.id, expected_current_config_id: a.id }, { token })).status, role).toBe(403);
      expect((await server.api.delete(path, { token })).status, role).toBe(403);
    }
    const developer = await withRole("developer");
    expect((await createProfile(p, { name: "by developer", config: a.id }, { token: developer })).status).toBe(201);

    const stranger = (await server.api.userWithOrg("Elsewhere")).token;
    expect((await server.api.get(path, { token: stranger })).status).toBe(404);
    expect((await server.api.delete(path, { token: stranger })).status).toBe(404);
    expect((await server.api.get(path, owner)).body.name).toBe("Guarded");
  });
});
