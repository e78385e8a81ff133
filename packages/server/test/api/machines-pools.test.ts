import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { decodeId, encodeId, newUuid } from "../../src/platform/ids.js";
import { collectPages } from "../support/paging.js";
import { useTestServer } from "../support/server.js";
import { createGenericSecret, ISO, orgWithProjects, setProjectRole } from "./machines-fixtures.js";
import { sortedBy } from "./secrets-fixtures.js";

/* Machine pools and project machine pool grants (issue 11, item 2), over HTTP. */
const server = useTestServer({ SVC_MACHINE_PROVIDERS: "local" });
const POOL_ID = /^mpo_[a-z2-7]{26}$/;
const POOL_GRANT_ID = /^pmpg_[a-z2-7]{26}$/;
const poolsOf = (orgId: string) => `/api/v1/orgs/${orgId}/machine-pools`;

async function createPool(token: string, orgId: string, body: Record<string, unknown> = {}) {
  const reply = await server.api.post(poolsOf(orgId), { name: `pool ${Math.random().toString(36).slice(2, 8)}`, provider: "local", max_total_machines: 4, ...body }, { token });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

async function expectIssues(reply: { status: number; body: any; text: string }, ...paths: string[]) {
  expect(reply.status, reply.text).toBe(400);
  expect(reply.body.code).toBe("validation_failed");
  for (const path of paths) expect(reply.body.issues.map((i: any) => i.path), reply.text).toContain(path);
}

describe("machine pools", () => {
  it("creates a local pool, reads it back with its usage, and keeps names unique", async () => {
    const { token, orgId } = await orgWithProjects(server.api);
    const secret = await createGenericSecret(server.api, token, orgId, { kind: "org" }, "npm");
    const created = await server.api.post(
      poolsOf(orgId),
      {
        name: "sandbox-pool",
        provider: "local",
        description: "dev machines",
        default_machine_cpu: 2,
        default_machine_memory_mb: 1024,
        default_machine_env: { NODE_ENV: "test" },
        default_machine_secret_env: { NPM_TOKEN: secret.id },
        default_cwd: "/workspace",
        max_total_machines: 10,
        max_total_memory_mb: 10240,
        min_machine_memory_mb: 512,
        max_machine_memory_mb: 2048,
        delete_after_idle_minutes: 30,
        metadata: { team: "infra" },
      },
      { token },
    );
    expect(created.status, created.text).toBe(201);
    const pool = created.body;
    expect(pool).toEqual({
      id: expect.stringMatching(POOL_ID),
      org_id: orgId,
      name: "sandbox-pool",
      management_kind: "tenant",
      description: "dev machines",
      provider: "local",
      default_machine_cpu: 2,
      default_machine_memory_mb: 1024,
      default_machine_env: { NODE_ENV: "test" },
      default_machine_secret_env: { NPM_TOKEN: secret.id },
      default_machine_provider_options: {},
      default_cwd: "/workspace",
      provider_config: {},
      runtime_protection_enabled: false,
      max_total_machines: 10,
      max_total_cpu: null,
      max_total_memory_mb: 10240,
      min_machine_cpu: null,
      min_machine_memory_mb: 512,
      max_machine_cpu: null,
      max_machine_memory_mb: 2048,
      delete_after_idle_minutes: 30,
      metadata: { team: "infra" },
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    expect(created.text).not.toContain("SENTINEL");
    expect((await server.api.get(`${poolsOf(orgId)}/${pool.id}`, { token })).body).toEqual(pool);
    expect((await server.api.get(poolsOf(orgId), { token })).body.data).toEqual([{ ...pool, usage: { machines: 0, cpu: 0, memory_mb: 0 } }]);
    const twin = await server.api.post(poolsOf(orgId), { name: "sandbox-pool", provider: "local", max_total_machines: 1 }, { token });
    expect(twin.status).toBe(409);
    expect(twin.body.code).toBe("conflict");
  });

  it("refuses providers svc cannot run, inconsistent limits and bad references, each at its path", async () => {
    const { token, orgId, projects } = await orgWithProjects(server.api);
    const projectSecret = await createGenericSecret(server.api, token, orgId, { kind: "project", project_id: projects.Default.id }, "p");
    const orgSecret = await createGenericSecret(server.api, token, orgId, { kind: "org" }, "o");
    const post = (body: Record<string, unknown>) => server.api.post(poolsOf(orgId), { name: `p ${Math.random()}`, provider: "local", max_total_machines: 2, ...body }, { token });
    await expectIssues(await post({ provider: "blaxel" }), "/provider");
    await expectIssues(await post({ provider_config: { workspace: "x" } }), "/provider_config");
    await expectIssues(await post({ default_machine_provider_options: { image: "x" } }), "/default_machine_provider_options");
    await expectIssues(await post({ provider_auth_secret_id: projectSecret.id }), "/provider_auth_secret_id");
    await expectIssues(await post({ provider_auth_secret_id: encodeId("secret", newUuid()) }), "/provider_auth_secret_id");
    await expectIssues(await post({ provider_auth_secret_id: `${orgSecret.id}x` }), "/provider_auth_secret_id");
    await expectIssues(await post({ max_total_machines: undefined }), "/max_total_machines");
    await expectIssues(await post({ max_total_machines: -1 }), "/max_total_machines");
    await expectIssues(await post({ min_machine_cpu: 4, max_machine_cpu: 2 }), "/min_machine_cpu");
    await expectIssues(await post({ default_machine_memory_mb: 4096, max_machine_memory_mb: 2048 }), "/default_machine_memory_mb");
    await expectIssues(await post({ max_machine_cpu: 8, max_total_cpu: 4 }), "/max_machine_cpu");
    await expectIssues(await post({ delete_after_idle_minutes: 3 }), "/delete_after_idle_minutes");
    await expectIssues(await post({ default_machine_secret_env: { P: projectSecret.id } }), "/default_machine_secret_env/P");
    await expectIssues(await post({ default_machine_env: { SVC_HOME: "x" } }), "/default_machine_env/SVC_HOME");
    await expectIssues(await post({ metadata: { observed_platform: "x" } }), "/metadata/observed_platform");
    await expectIssues(await post({ max_total_machines: 2147483648 }), "/max_total_machines");
    expect((await server.api.get(poolsOf(orgId), { token })).body.data).toEqual([]);
  });

  it("takes the reference's CreateMachinePoolRequest, whose provider_auth_secret_id the local provider keeps unused", async () => {
    const { token, orgId } = await orgWithProjects(server.api);
    const credential = await createGenericSecret(server.api, token, orgId, { kind: "org" }, "cred");
    const reply = await server.api.post(
      poolsOf(orgId),
      { name: "reference-shape", provider: "local", default_machine_provider_options: {}, provider_auth_secret_id: credential.id, max_total_machines: 2 },
      { token },
    );
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body.provider_auth_secret_id).toBe(credential.id);
    expect((await server.api.get(`${poolsOf(orgId)}/${reply.body.id}`, { token })).body.provider_auth_secret_id).toBe(credential.id);
    // Kept, so the pool holds its secret as any pool's credential does (the reference's deleteSecret).
    const deleted = await server.api.delete(`/api/v1/orgs/${orgId}/secrets/${credential.id}`, { token });
    expect(deleted.status, deleted.text).toBe(409);
  });

  it("updates the fields given, clears with null, checks the result as a whole, and deletes", async () => {
    const { token, orgId } = await orgWithProjects(server.api);
    const pool = await createPool(token, orgId, { name: "a", max_machine_cpu: 4, default_machine_cpu: 2 });
    await createPool(token, orgId, { name: "b" });
    const path = `${poolsOf(orgId)}/${pool.id}`;
    const updated = await server.api.put(path, { name: "renamed", max_machine_cpu: null, default_machine_env: { A: "1" } }, { token });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({ name: "renamed", max_machine_cpu: null, default_machine_cpu: 2, default_machine_env: { A: "1" }, max_total_machines: 4 });
    const unchanged = await server.api.put(path, {}, { token });
    expect(unchanged.status).toBe(200);
    expect(unchanged.body).toEqual(updated.body);
    await expectIssues(await server.api.put(path, { min_machine_cpu: 3 }, { token }), "/min_machine_cpu");
    await expectIssues(await server.api.put(path, { provider: "local" }, { token }), "/provider");
    const clash = await server.api.put(path, { name: "b" }, { token });
    expect(clash.status).toBe(409);
    expect((await server.api.delete(path, { token })).status).toBe(204);
    expect((await server.api.get(path, { token })).status).toBe(404);
    expect((await server.api.delete(path, { token })).status).toBe(404);
    expect((await server.api.put(path, { name: "x" }, { token })).status).toBe(404);
  });

  it("pages, sorts and filters pools", async () => {
    const { token, orgId } = await orgWithProjects(server.api);
    const items: any[] = [];
    for (const name of ["delta", "Alpha", "charlie", "Bravo"]) items.push(await createPool(token, orgId, { name }));
    const touched = await server.api.put(`${poolsOf(orgId)}/${items[0].id}`, { description: "touched" }, { token });
    items[0] = touched.body;
    for (const sort of ["-created_at", "created_at", "name", "-name", "updated_at", "-updated_at"]) {
      const pages = await collectPages(server.api, `${poolsOf(orgId)}?sort=${sort}&limit=3`, { token });
      expect(pages.map((p) => p.id), sort).toEqual(sortedBy(items, sort).map((p) => p.id));
    }
    const named = await collectPages(server.api, `${poolsOf(orgId)}?name=*r*`, { token });
    expect(named.map((p) => p.name)).toEqual(["Bravo", "charlie"]);
  });

  it("is for org owners and admins only; another organization sees nothing", async () => {
    const { token, orgId, projects } = await orgWithProjects(server.api);
    const pool = await createPool(token, orgId);
    const member = await server.api.orgMember({ token }, orgId, "member");
    await setProjectRole(server.api, token, orgId, member.userId, projects.Default.id, "admin");
    const admin = await server.api.orgMember({ token }, orgId, "admin");
    expect((await server.api.get(poolsOf(orgId), { token: admin.token })).status).toBe(200);
    for (const reply of [
      await server.api.get(poolsOf(orgId), { token: member.token }),
      await server.api.get(`${poolsOf(orgId)}/${pool.id}`, { token: member.token }),
      await server.api.post(poolsOf(orgId), { name: "m", provider: "local", max_total_machines: 1 }, { token: member.token }),
      await server.api.delete(`${poolsOf(orgId)}/${pool.id}`, { token: member.token }),
    ]) {
      expect(reply.status, reply.text).toBe(403);
      expect(reply.body.code).toBe("forbidden");
    }
    const other = await orgWithProjects(server.api);
    for (const reply of [
      await server.api.get(poolsOf(orgId), { token: other.token }),
      await server.api.get(`${poolsOf(orgId)}/${pool.id}`, { token: other.token }),
      await server.api.put(`${poolsOf(orgId)}/${pool.id}`, { name: "x" }, { token: other.token }),
      await server.api.delete(`${poolsOf(orgId)}/${pool.id}`, { token: other.token }),
      await server.api.get(`${poolsOf(other.orgId)}/${pool.id}`, { token: other.token }),
    ]) {
      expect(reply.status, reply.text).toBe(404);
    }
  });
});

describe("a secret a machine pool uses", () => {
  it("cannot be deleted (409, naming the pool) until the pool and its grants stop using it; a connected machine's can", async () => {
    const { token, orgId, projects } = await orgWithProjects(server.api);
    const inPool = await createGenericSecret(server.api, token, orgId, { kind: "org" }, "pool-npm");
    const inGrant = await createGenericSecret(server.api, token, orgId, { kind: "project", project_id: projects.Default.id }, "grant-npm");
    const unused = await createGenericSecret(server.api, token, orgId, { kind: "org" }, "unused");
    const pool = await createPool(token, orgId, { name: "builders", default_machine_secret_env: { NPM_TOKEN: inPool.id } });
    const grants = `/api/v1/orgs/${orgId}/projects/${projects.Default.id}/machine-pool-grants`;
    const grant = await server.api.post(grants, { machine_pool_id: pool.id, default_machine_secret_env_overlay: { GRANT_TOKEN: inGrant.id } }, { token });
    expect(grant.status, grant.text).toBe(201);
    const remove = (secret: { id: string }) => server.api.delete(`/api/v1/orgs/${orgId}/secrets/${secret.id}`, { token });

    for (const secret of [inPool, inGrant]) {
      const refused = await remove(secret);
      expect(refused.status, refused.text).toBe(409);
      expect(refused.body).toMatchObject({ code: "conflict", error: expect.stringContaining('machine pool "builders"') });
      expect((await server.api.get(`/api/v1/orgs/${orgId}/secrets/${secret.id}`, { token })).status).toBe(200);
    }
    expect((await remove(unused)).status).toBe(204);

    expect((await server.api.put(`${poolsOf(orgId)}/${pool.id}`, { default_machine_secret_env: {} }, { token })).status).toBe(200);
    expect((await remove(inPool)).status).toBe(204);
    expect((await server.api.patch(`${grants}/${grant.body.id}`, { default_machine_secret_env_overlay: {} }, { token })).status).toBe(200);
    expect((await remove(inGrant)).status).toBe(204);
  });

  it("keeps a member in the org (409, naming the secret and the pool) while a pool grant uses their granted user secret", async () => {
    const { token, orgId, projects } = await orgWithProjects(server.api);
    // An admin: granting into the project needs project.secrets.manage there.
    const member = await server.api.orgMember({ token }, orgId, "admin");
    const kept = await createGenericSecret(server.api, member.token, orgId, { kind: "user" }, "my npm token");
    const spare = await createGenericSecret(server.api, member.token, orgId, { kind: "user" }, "unused");
    const shared = await server.api.post(`/api/v1/orgs/${orgId}/secrets/${kept.id}/grants`, { target_project_id: projects.Default.id }, { token: member.token });
    expect(shared.status, shared.text).toBe(201);
    const pool = await createPool(token, orgId, { name: "builders" });
    const grants = `/api/v1/orgs/${orgId}/projects/${projects.Default.id}/machine-pool-grants`;
    const grant = await server.api.post(grants, { machine_pool_id: pool.id, default_machine_secret_env_overlay: { NPM_TOKEN: kept.id } }, { token });
    expect(grant.status, grant.text).toBe(201);
    const membership = `/api/v1/orgs/${orgId}/members/${member.userId}`;

    // Removed by a manager, or leaving: either would delete the secret the pool grant hands its machines.
    for (const auth of [{ token }, { token: member.token }]) {
      const refused = await server.api.delete(membership, auth);
      expect(refused.status, refused.text).toBe(409);
      expect(refused.body).toEqual({ code: "conflict", error: expect.stringMatching(/secret "my npm token".*machine pool "builders"/) });
    }
    const available = `/api/v1/orgs/${orgId}/projects/${projects.Default.id}/secrets/${kept.id}`;
    expect((await server.api.get(available, { token })).status).toBe(200);
    expect((await server.api.get(`/api/v1/orgs/${orgId}/secrets/${spare.id}`, { token: member.token })).status).toBe(200);
    expect((await server.api.get(`${grants}/${grant.body.id}`, { token })).body.default_machine_secret_env_overlay).toEqual({ NPM_TOKEN: kept.id });

    expect((await server.api.patch(`${grants}/${grant.body.id}`, { default_machine_secret_env_overlay: {} }, { token })).status).toBe(200);
    expect((await server.api.delete(membership, { token })).status).toBe(204);
    expect((await server.api.get(available, { token })).status).toBe(404);
  });
});

describe("project machine pool grants", () => {
  it("grants a pool with narrower limits and overlays, updates it, and revokes it", async () => {
    const { token, orgId, projects } = await orgWithProjects(server.api, "Beta");
    const pool = await createPool(token, orgId, { name: "sandbox", max_total_machines: 10, max_machine_memory_mb: 2048, default_machine_env: { A: "1" } });
    const projectSecret = await createGenericSecret(server.api, token, orgId, { kind: "project", project_id: projects.Default.id }, "npm");
    const betaSecret = await createGenericSecret(server.api, token, orgId, { kind: "project", project_id: projects.Beta.id }, "beta");
    const grants = `/api/v1/orgs/${orgId}/projects/${projects.Default.id}/machine-pool-grants`;
    const created = await server.api.post(
      grants,
      {
        machine_pool_id: pool.id,
        max_total_machines: 3,
        default_machine_env_overlay: { DEPLOY_ENV: "staging", A: null },
        default_machine_secret_env_overlay: { NPM_TOKEN: projectSecret.id },
        delete_after_idle_minutes: 0,
      },
      { token },
    );
    expect(created.status, created.text).toBe(201);
    const grant = created.body;
    expect(grant).toEqual({
      id: expect.stringMatching(POOL_GRANT_ID),
      org_id: orgId,
      project_id: projects.Default.id,
      machine_pool_id: pool.id,
      description: "",
      default_machine_cpu: null,
      default_machine_memory_mb: null,
      default_machine_env_overlay: { DEPLOY_ENV: "staging", A: null },
      default_machine_secret_env_overlay: { NPM_TOKEN: projectSecret.id },
      default_machine_provider_options_overlay: {},
      default_cwd: "",
      max_total_machines: 3,
      max_total_cpu: null,
      max_total_memory_mb: null,
      min_machine_cpu: null,
      min_machine_memory_mb: null,
      max_machine_cpu: null,
      max_machine_memory_mb: null,
      delete_after_idle_minutes: 0,
      metadata: {},
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    expect(created.text).not.toContain("SENTINEL");
    expect((await server.api.get(`${grants}/${grant.id}`, { token })).body).toEqual(grant);
    const summary = { id: pool.id, org_id: orgId, name: "sandbox", management_kind: "tenant", description: "", provider: "local", created_at: pool.created_at, updated_at: pool.updated_at };
    expect((await server.api.get(grants, { token })).body).toEqual({ data: [{ grant, machine_pool: summary }], next_cursor: null });
    expect((await server.api.post(grants, { machine_pool_id: pool.id }, { token })).status).toBe(409);

    await expectIssues(await server.api.post(`/api/v1/orgs/${orgId}/projects/${projects.Beta.id}/machine-pool-grants`, { machine_pool_id: pool.id, max_total_machines: 11 }, { token }), "/max_total_machines");
    await expectIssues(
      await server.api.post(`/api/v1/orgs/${orgId}/projects/${projects.Beta.id}/machine-pool-grants`, { machine_pool_id: pool.id, default_machine_memory_mb: 4096 }, { token }),
      "/default_machine_memory_mb",
    );
    await expectIssues(
      await server.api.post(grants.replace(projects.Default.id, projects.Beta.id), { machine_pool_id: pool.id, default_machine_secret_env_overlay: { N: projectSecret.id } }, { token }),
      "/default_machine_secret_env_overlay/N",
    );
    await expectIssues(await server.api.post(grants.replace(projects.Default.id, projects.Beta.id), { machine_pool_id: pool.id, delete_after_idle_minutes: 2 }, { token }), "/delete_after_idle_minutes");

    const path = `${grants}/${grant.id}`;
    const patched = await server.api.patch(path, { max_total_machines: null, default_machine_env_overlay: { B: "2" }, description: "narrowed" }, { token });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({
      max_total_machines: null,
      default_machine_env_overlay: { B: "2" },
      default_machine_secret_env_overlay: { NPM_TOKEN: projectSecret.id },
      description: "narrowed",
      delete_after_idle_minutes: 0,
    });
    await expectIssues(await server.api.patch(path, {}, { token }), "");
    await expectIssues(await server.api.patch(path, { max_machine_memory_mb: 4096 }, { token }), "/max_machine_memory_mb");
    await expectIssues(await server.api.patch(path, { default_machine_secret_env_overlay: { X: betaSecret.id } }, { token }), "/default_machine_secret_env_overlay/X");

    expect((await server.api.delete(path, { token })).status).toBe(204);
    expect((await server.api.get(path, { token })).status).toBe(404);
    expect((await server.api.delete(path, { token })).status).toBe(404);
    expect((await server.api.post(grants, { machine_pool_id: encodeId("machinePool", newUuid()) }, { token })).status).toBe(404);
  });

  it("lists a pool grant's machines in the project but not among its explicit grants, and revokes them with it", async () => {
    const { token, orgId, projects } = await orgWithProjects(server.api);
    const pool = await createPool(token, orgId, { name: "p" });
    const project = `/api/v1/orgs/${orgId}/projects/${projects.Default.id}`;
    const poolGrant = (await server.api.post(`${project}/machine-pool-grants`, { machine_pool_id: pool.id }, { token })).body;
    // What the local provider will do when an agent asks for a machine: a pool machine and its generated grant.
    const [machineId, grantId] = [newUuid(), newUuid()];
    const [org, proj] = [decodeId("org", orgId)!, decodeId("project", projects.Default.id)!];
    await server.db.write.execute(
      sql`INSERT INTO machines (id, org_id, machine_pool_id, source_kind, display_name, provider, lifecycle_state, cpu, memory_mb)
          VALUES (${machineId}, ${org}, ${decodeId("machinePool", pool.id)}, 'pool', 'p-1', 'local', 'active', 2, 512)`,
    );
    await server.db.write.execute(
      sql`INSERT INTO project_machine_grants (id, org_id, project_id, machine_id, source_kind, project_machine_pool_grant_id)
          VALUES (${grantId}, ${org}, ${proj}, ${machineId}, 'pool', ${decodeId("machinePoolGrant", poolGrant.id)})`,
    );
    expect((await server.api.get(`${project}/machine-grants`, { token })).body.data).toEqual([]);
    const visible = (await server.api.get(`${project}/machines`, { token })).body.data;
    expect(visible.map((m: any) => [m.source_kind, m.access.sources[0].grant_source_kind])).toEqual([["pool", "pool"]]);
    expect((await server.api.get(`/api/v1/orgs/${orgId}/machines?source_kind=pool`, { token })).body.data).toHaveLength(1);
    expect((await server.api.get(poolsOf(orgId), { token })).body.data[0].usage).toEqual({ machines: 1, cpu: 2, memory_mb: 512 });

    const generated = encodeId("machineGrant", grantId);
    const direct = await server.api.delete(`${project}/machine-grants/${generated}`, { token });
    expect(direct.status).toBe(409);
    expect(direct.body.code).toBe("conflict");
    const poolMachine = `/api/v1/orgs/${orgId}/machines/${encodeId("machine", machineId)}`;
    expect((await server.api.delete(poolMachine, { token })).status).toBe(409);
    expect((await server.api.post(`${poolMachine}/daemon-tokens`, {}, { token })).status).toBe(409);
    expect((await server.api.post(`${project}/machine-grants`, { machine_id: encodeId("machine", machineId) }, { token })).status).toBe(409);

    expect((await server.api.delete(`${project}/machine-pool-grants/${poolGrant.id}`, { token })).status).toBe(204);
    expect((await server.api.get(`${project}/machines`, { token })).body.data).toEqual([]);
    expect((await server.api.delete(`${poolsOf(orgId)}/${pool.id}`, { token })).status).toBe(204);
    expect((await server.api.get(`/api/v1/orgs/${orgId}/machines`, { token })).body.data).toEqual([]);
  });

  it("pages and sorts pool grants by the pool's name and needs project.access_manage", async () => {
    const { token, orgId, projects } = await orgWithProjects(server.api);
    const grants = `/api/v1/orgs/${orgId}/projects/${projects.Default.id}/machine-pool-grants`;
    const items: any[] = [];
    for (const name of ["delta", "Alpha", "charlie"]) {
      const pool = await createPool(token, orgId, { name });
      const grant = (await server.api.post(grants, { machine_pool_id: pool.id }, { token })).body;
      items.push({ id: grant.id, name, created_at: grant.created_at });
    }
    for (const sort of ["-created_at", "created_at", "name", "-name"]) {
      const pages = await collectPages(server.api, `${grants}?sort=${sort}&limit=2`, { token });
      expect(pages.map((g) => g.grant.id), sort).toEqual(sortedBy(items, sort).map((g) => g.id));
    }
    expect((await server.api.get(`${grants}?sort=updated_at`, { token })).status).toBe(400);

    const member = await server.api.orgMember({ token }, orgId, "member");
    await setProjectRole(server.api, token, orgId, member.userId, projects.Default.id, "developer");
    const refused = await server.api.get(grants, { token: member.token });
    expect(refused.status).toBe(403);
    await setProjectRole(server.api, token, orgId, member.userId, projects.Default.id, "admin");
    expect((await server.api.get(grants, { token: member.token })).status).toBe(200);
    const other = await orgWithProjects(server.api);
    expect((await server.api.get(grants, { token: other.token })).status).toBe(404);
    expect((await server.api.get(`${grants}/${items[0].id}`, { token: other.token })).status).toBe(404);
    const foreignPool = await createPool(other.token, other.orgId);
    expect((await server.api.post(grants, { machine_pool_id: foreignPool.id }, { token })).status).toBe(404);
  });
});

describe("machine providers the operator did not enable", () => {
  const bare = useTestServer();

  it("refuse a pool with a 400 naming SVC_MACHINE_PROVIDERS, and nothing is written", async () => {
    const { token, orgId } = await orgWithProjects(bare.api);
    const reply = await bare.api.post(poolsOf(orgId), { name: "local-pool", provider: "local", max_total_machines: 1 }, { token });
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body.code).toBe("validation_failed");
    expect(reply.body.issues).toEqual([{ path: "/provider", message: expect.stringContaining("SVC_MACHINE_PROVIDERS") }]);
    expect((await bare.api.get(poolsOf(orgId), { token })).body.data).toEqual([]);
  });
});
