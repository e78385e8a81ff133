import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { rawRows } from "../../src/platform/db/index.js";
import { decodeId, encodeId, newUuid } from "../../src/platform/ids.js";
import { collectPages } from "../support/paging.js";
import { useTestServer } from "../support/server.js";
import { createGenericSecret, createMachine, DAEMON_TOKEN, grantMachine, GRANT_ID, ISO, MACHINE_ID, orgWithProjects, setProjectRole, TOKEN_ID } from "./machines-fixtures.js";
import { sortedBy } from "./secrets-fixtures.js";

/*
 * BYO machines and their daemon tokens (issue 11, item 1), over HTTP. What waits for the daemon (its
 * routes renewing the lease) is stood in for by writing the lease columns, so the derived connection
 * state is checked against the database clock.
 */
const server = useTestServer();
const machinesOf = (orgId: string) => `/api/v1/orgs/${orgId}/machines`;

describe("connecting and creating machines", () => {
  it("connects a machine: the record, a daemon token shown once, and grants to the projects named", async () => {
    const { token, orgId, projects } = await orgWithProjects(server.api, "Beta");
    const reply = await server.api.post(
      `${machinesOf(orgId)}/connect`,
      { display_name: "build-server-1", description: "the build box", cwd: "/srv/repo", env: { CI: "1" }, project_ids: [projects.Default.id, projects.Beta.id] },
      { token },
    );
    expect(reply.status, reply.text).toBe(201);
    const { machine, token: daemonToken, token_record, project_grants } = reply.body;
    expect(machine).toEqual({
      id: expect.stringMatching(MACHINE_ID),
      org_id: orgId,
      source_kind: "byo",
      machine_pool_id: null,
      display_name: "build-server-1",
      description: "the build box",
      provider: "byo",
      lifecycle_state: "active",
      connection_state: "offline",
      last_observed_at: null,
      cwd: "/srv/repo",
      env: { CI: "1" },
      secret_env: {},
      lifecycle_reason_code: "",
      lifecycle_reason_message: "",
      next_reconcile_after: null,
      provision_attempts: 0,
      delete_attempts: 0,
      metadata: {},
      deleted_at: null,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    expect(daemonToken).toMatch(DAEMON_TOKEN);
    expect(token_record).toEqual({
      id: expect.stringMatching(TOKEN_ID),
      org_id: orgId,
      machine_id: machine.id,
      name: "daemon",
      metadata: {},
      created_at: expect.stringMatching(ISO),
      last_used_at: null,
      revoked_at: null,
      revoke_reason: "",
    });
    expect(project_grants.map((g: any) => g.project_id).sort()).toEqual([projects.Default.id, projects.Beta.id].sort());
    for (const grant of project_grants) {
      expect(grant).toMatchObject({ id: expect.stringMatching(GRANT_ID), machine_id: machine.id, source_kind: "explicit", project_machine_pool_grant_id: null });
    }
    expect((await server.api.get(`${machinesOf(orgId)}/${machine.id}`, { token })).body).toEqual(machine);

    const named = await server.api.post(`${machinesOf(orgId)}/connect`, { display_name: "laptop", token_name: "my laptop" }, { token });
    expect(named.status).toBe(201);
    expect(named.body.token_record.name).toBe("my laptop");
    expect(named.body.project_grants).toEqual([]);
  });

  it("refuses a daemon token on every route of the API: it is valid only on the daemon routes", async () => {
    const { token, orgId } = await orgWithProjects(server.api);
    const connected = await server.api.post(`${machinesOf(orgId)}/connect`, { display_name: "box" }, { token });
    const daemonToken = connected.body.token as string;
    for (const path of ["/api/v1/me", `${machinesOf(orgId)}/${connected.body.machine.id}`, machinesOf(orgId), `/api/v1/orgs/${orgId}`]) {
      const reply = await server.api.get(path, { token: daemonToken });
      expect(reply.status, path).toBe(401);
      expect(reply.body).toEqual({ error: expect.stringContaining("daemon"), code: "unauthorized" });
    }
    const post = await server.api.post(machinesOf(orgId), { display_name: "x" }, { token: daemonToken });
    expect(post.status).toBe(401);
    // A well-formed daemon token that names nothing is refused the same way.
    const forged = daemonToken.slice(0, -8) + (daemonToken.at(-8) === "a" ? "b" : "a") + daemonToken.slice(-7);
    expect((await server.api.get("/api/v1/me", { token: forged })).status).toBe(401);
  });

  it("keeps display_name unique among live BYO machines, replays an Idempotency-Key, and frees the name on deletion", async () => {
    const { token, orgId } = await orgWithProjects(server.api);
    const first = await createMachine(server.api, token, orgId, { display_name: "box" });
    const twin = await server.api.post(machinesOf(orgId), { display_name: "box" }, { token });
    expect(twin.status).toBe(409);
    expect(twin.body).toEqual({ error: expect.any(String), code: "conflict" });
    expect((await server.api.post(`${machinesOf(orgId)}/connect`, { display_name: "box" }, { token })).status).toBe(409);

    const keyed = { token, headers: { "idempotency-key": "k-1" } };
    const created = await server.api.post(machinesOf(orgId), { display_name: "keyed" }, keyed);
    expect(created.status).toBe(201);
    const replay = await server.api.post(machinesOf(orgId), { display_name: "keyed" }, keyed);
    expect(replay.status).toBe(200);
    expect(replay.body.id).toBe(created.body.id);
    const other = await server.api.post(machinesOf(orgId), { display_name: "other" }, keyed);
    expect(other.status).toBe(409);
    expect(other.body.code).toBe("idempotency_key_conflict");

    expect((await server.api.delete(`${machinesOf(orgId)}/${first.id}`, { token })).status).toBe(204);
    const again = await createMachine(server.api, token, orgId, { display_name: "box" });
    expect(again.id).not.toBe(first.id);
    // The same name in another org is another machine.
    const elsewhere = await orgWithProjects(server.api);
    await createMachine(server.api, elsewhere.token, elsewhere.orgId, { display_name: "box" });
  });

  it("stores secret references, never values, and checks them and the environment's names", async () => {
    const { token, orgId, projects } = await orgWithProjects(server.api);
    const orgSecret = await createGenericSecret(server.api, token, orgId, { kind: "org" }, "npm");
    const projectSecret = await createGenericSecret(server.api, token, orgId, { kind: "project", project_id: projects.Default.id }, "proj");
    const aws = await server.api.post(
      `/api/v1/orgs/${orgId}/secrets`,
      { owner: { kind: "org" }, name: "aws", material: { kind: "aws_credentials", access_key_id: "a", secret_access_key: "b" } },
      { token },
    );
    const machine = await createMachine(server.api, token, orgId, { env: { A: "1" }, secret_env: { NPM_TOKEN: orgSecret.id } });
    expect(machine.secret_env).toEqual({ NPM_TOKEN: orgSecret.id });
    expect(JSON.stringify(machine)).not.toContain("SENTINEL");
    const stored = await rawRows<{ doc: string }>(server.db.read, sql`SELECT row_to_json(m)::text AS doc FROM machines m WHERE id = ${decodeId("machine", machine.id)}`);
    expect(stored[0]!.doc).not.toContain("SENTINEL");

    const refused = async (body: Record<string, unknown>, path: string, message: string | RegExp) => {
      const reply = await server.api.post(machinesOf(orgId), { display_name: `bad ${Math.random()}`, ...body }, { token });
      expect(reply.status, reply.text).toBe(400);
      expect(reply.body.code).toBe("validation_failed");
      expect(reply.body.issues).toContainEqual({ path, message: expect.stringMatching(message) });
    };
    await refused({ env: { SVC_TOKEN: "x" } }, "/env/SVC_TOKEN", /reserved/);
    await refused({ secret_env: { svc_x: orgSecret.id } }, "/secret_env/svc_x", /reserved/);
    await refused({ env: { Path: "a", PATH: "b" } }, "/env/PATH", /same name/);
    await refused({ env: { TOKEN: "a" }, secret_env: { token: orgSecret.id } }, "/secret_env/token", /same name/);
    await refused({ env: { "A=B": "x" } }, "/env", /./);
    await refused({ secret_env: { P: projectSecret.id } }, "/secret_env/P", /org-owned/);
    await refused({ secret_env: { K: aws.body.id } }, "/secret_env/K", /generic/);
    await refused({ secret_env: { M: encodeId("secret", newUuid()) } }, "/secret_env/M", /no such secret/);
    await refused({ secret_env: { M: "not-a-secret" } }, "/secret_env/M", /./);
    await refused({ metadata: { observed_platform: "linux" } }, "/metadata/observed_platform", /reserved/);
    await refused({ color: "red" }, "/color", /unknown field/);
    // The secret in use by the machine is still the secrets module's to delete: resolution happens at process start.
    expect((await server.api.delete(`/api/v1/orgs/${orgId}/secrets/${orgSecret.id}`, { token })).status).toBe(204);
  });
});

describe("reading and changing a machine", () => {
  it("replaces execution defaults with PATCH and keeps the rest", async () => {
    const { token, orgId } = await orgWithProjects(server.api);
    const secret = await createGenericSecret(server.api, token, orgId, { kind: "org" }, "gh");
    const machine = await createMachine(server.api, token, orgId, { display_name: "dev", cwd: "/a", env: { A: "1", B: "2" }, metadata: { team: "x" } });
    const path = `${machinesOf(orgId)}/${machine.id}`;
    const patched = await server.api.patch(path, { env: { C: "3" }, secret_env: { GH: secret.id } }, { token });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ display_name: "dev", cwd: "/a", env: { C: "3" }, secret_env: { GH: secret.id }, metadata: { team: "x" } });
    expect(patched.body.updated_at >= machine.updated_at).toBe(true);
    expect((await server.api.patch(path, { cwd: "/b" }, { token })).body).toMatchObject({ cwd: "/b", env: { C: "3" }, secret_env: { GH: secret.id } });

    const empty = await server.api.patch(path, {}, { token });
    expect(empty.status).toBe(400);
    expect(empty.body.code).toBe("validation_failed");
    const rename = await server.api.patch(path, { display_name: "other" }, { token });
    expect(rename.status).toBe(400);
    expect(rename.body.issues).toEqual([{ path: "/display_name", message: "unknown field" }]);
    // The names of the map left unchanged still count.
    const clash = await server.api.patch(path, { env: { gh: "x" } }, { token });
    expect(clash.status).toBe(400);
    expect(clash.body.issues).toEqual([{ path: "/secret_env/GH", message: expect.stringContaining("same name") }]);
  });

  it("derives connection_state from the daemon's lease with the database clock", async () => {
    const { token, orgId } = await orgWithProjects(server.api);
    const connected = await server.api.post(`${machinesOf(orgId)}/connect`, { display_name: "leased" }, { token });
    const { machine, token_record } = connected.body;
    const path = `${machinesOf(orgId)}/${machine.id}`;
    const id = decodeId("machine", machine.id);
    const state = async () => (await server.api.get(path, { token })).body.connection_state;
    // What the daemon routes will do on register and heartbeat: a lease held with a token.
    await server.db.write.execute(
      sql`UPDATE machines SET lease_expires_at = statement_timestamp() + interval '2 minutes', lease_token_id = ${decodeId("daemonToken", token_record.id)} WHERE id = ${id}`,
    );
    expect(await state()).toBe("online");
    expect((await server.api.get(machinesOf(orgId), { token })).body.data[0].connection_state).toBe("online");
    await server.db.write.execute(sql`UPDATE machines SET lease_expires_at = statement_timestamp() - interval '1 second' WHERE id = ${id}`);
    expect(await state()).toBe("offline");
    await server.db.write.execute(sql`UPDATE machines SET asleep_since = statement_timestamp() WHERE id = ${id}`);
    expect(await state()).toBe("asleep");
    await server.db.write.execute(
      sql`UPDATE machines SET asleep_since = NULL, lease_expires_at = statement_timestamp() + interval '2 minutes', lease_token_id = ${decodeId("daemonToken", token_record.id)} WHERE id = ${id}`,
    );
    expect(await state()).toBe("online");
    // Revoking the token the daemon holds ends its lease at once.
    const revoked = await server.api.post(`${path}/daemon-tokens/${token_record.id}/revoke`, undefined, { token });
    expect(revoked.status).toBe(200);
    expect(await state()).toBe("offline");
  });

  it("deletes a machine: tokens revoked, grants gone, invisible everywhere, and the daemon told", async () => {
    const { token, orgId, projects } = await orgWithProjects(server.api);
    const connected = await server.api.post(`${machinesOf(orgId)}/connect`, { display_name: "doomed", project_ids: [projects.Default.id] }, { token });
    const { machine } = connected.body;
    const extra = await server.api.post(`${machinesOf(orgId)}/${machine.id}/daemon-tokens`, { name: "second" }, { token });
    expect(extra.status).toBe(201);
    const path = `${machinesOf(orgId)}/${machine.id}`;
    expect((await server.api.delete(path, { token })).status).toBe(204);

    for (const reply of [await server.api.get(path, { token }), await server.api.patch(path, { cwd: "/x" }, { token }), await server.api.delete(path, { token })]) {
      expect(reply.status).toBe(404);
      expect(reply.body).toEqual({ error: expect.any(String), code: "not_found" });
    }
    expect((await server.api.get(`${path}/daemon-tokens`, { token })).status).toBe(404);
    expect((await server.api.get(machinesOf(orgId), { token })).body.data).toEqual([]);
    const project = `/api/v1/orgs/${orgId}/projects/${projects.Default.id}`;
    expect((await server.api.get(`${project}/machines`, { token })).body.data).toEqual([]);
    expect((await server.api.get(`${project}/machine-grants`, { token })).body.data).toEqual([]);
    const id = decodeId("machine", machine.id);
    const tokens = await rawRows<{ reason: string; revoked: boolean }>(
      server.db.read,
      sql`SELECT revoke_reason AS reason, revoked_at IS NOT NULL AS revoked FROM machine_daemon_tokens WHERE machine_id = ${id}`,
    );
    expect(tokens).toEqual([
      { reason: "machine_deleted", revoked: true },
      { reason: "machine_deleted", revoked: true },
    ]);
    const grants = await rawRows<{ n: number }>(server.db.read, sql`SELECT count(*)::int AS n FROM project_machine_grants WHERE machine_id = ${id}`);
    expect(grants[0]!.n).toBe(0);
  });
});

describe("who may do what", () => {
  it("shows members only machines granted to projects they can read, and lets only org managers manage", async () => {
    const { token, session, orgId, projects } = await orgWithProjects(server.api, "Beta");
    const member = await server.api.orgMember({ token }, orgId, "member");
    const admin = await server.api.orgMember({ token }, orgId, "admin");
    const shared = await createMachine(server.api, token, orgId, { display_name: "shared" });
    const hidden = await createMachine(server.api, token, orgId, { display_name: "hidden" });
    const grant = await grantMachine(server.api, token, orgId, projects.Beta.id, shared.id);
    await grantMachine(server.api, token, orgId, projects.Default.id, shared.id);

    const list = async (who: string) => (await server.api.get(machinesOf(orgId), { token: who })).body.data;
    expect(await list(member.token)).toEqual([]);
    expect((await server.api.get(`${machinesOf(orgId)}/${shared.id}`, { token: member.token })).status).toBe(404);

    await setProjectRole(server.api, token, orgId, member.userId, projects.Beta.id, "viewer");
    const seen = await list(member.token);
    expect(seen.map((m: any) => m.id)).toEqual([shared.id]);
    expect(seen[0].access).toEqual({
      can_manage: false,
      sources: [{ kind: "project_machine_grant", project_id: projects.Beta.id, grant_id: grant.id, grant_source_kind: "explicit" }],
    });
    const adminView = await list(admin.token);
    expect(adminView.map((m: any) => m.display_name)).toEqual(["hidden", "shared"]);
    expect(adminView[1].access.can_manage).toBe(true);
    expect(adminView[1].access.sources[0]).toEqual({ kind: "org_role" });
    expect(adminView[1].access.sources.filter((s: any) => s.kind === "project_machine_grant")).toHaveLength(2);
    expect(adminView[0].access).toEqual({ can_manage: true, sources: [{ kind: "org_role" }] });

    const asMember = { token: member.token };
    const sharedPath = `${machinesOf(orgId)}/${shared.id}`;
    expect((await server.api.get(sharedPath, asMember)).status).toBe(200);
    for (const reply of [
      await server.api.patch(sharedPath, { cwd: "/x" }, asMember),
      await server.api.delete(sharedPath, asMember),
      await server.api.get(`${sharedPath}/daemon-tokens`, asMember),
      await server.api.post(`${sharedPath}/daemon-tokens`, {}, asMember),
      await server.api.post(machinesOf(orgId), { display_name: "mine" }, asMember),
      await server.api.post(`${machinesOf(orgId)}/connect`, { display_name: "mine" }, asMember),
    ]) {
      expect(reply.status, reply.text).toBe(403);
      expect(reply.body.code).toBe("forbidden");
    }
    const hiddenPath = `${machinesOf(orgId)}/${hidden.id}`;
    for (const reply of [await server.api.get(hiddenPath, asMember), await server.api.patch(hiddenPath, { cwd: "/x" }, asMember), await server.api.delete(hiddenPath, asMember)]) {
      expect(reply.status).toBe(404);
    }
    // Admins manage; a member-role org key sees nothing until given a project role.
    expect((await server.api.patch(hiddenPath, { cwd: "/y" }, { token: admin.token })).status).toBe(200);
    const orgKey = await server.api.orgKey(session, orgId, "member");
    expect(await list(orgKey.token)).toEqual([]);
  });

  it("answers another organization's callers 404 on every machine route", async () => {
    const { token, orgId } = await orgWithProjects(server.api);
    const connected = await server.api.post(`${machinesOf(orgId)}/connect`, { display_name: "mine" }, { token });
    const { machine, token_record } = connected.body;
    const other = await orgWithProjects(server.api);
    const path = `${machinesOf(orgId)}/${machine.id}`;
    const as = { token: other.token };
    for (const reply of [
      await server.api.get(machinesOf(orgId), as),
      await server.api.post(machinesOf(orgId), { display_name: "x" }, as),
      await server.api.get(path, as),
      await server.api.patch(path, { cwd: "/x" }, as),
      await server.api.delete(path, as),
      await server.api.get(`${path}/daemon-tokens`, as),
      await server.api.post(`${path}/daemon-tokens`, {}, as),
      await server.api.post(`${path}/daemon-tokens/${token_record.id}/revoke`, undefined, as),
      // Its own org with this org's machine id: nothing there either.
      await server.api.get(`${machinesOf(other.orgId)}/${machine.id}`, as),
    ]) {
      expect(reply.status, reply.text).toBe(404);
      expect(reply.body.code).toBe("not_found");
    }
  });
});

describe("lists", () => {
  it("pages and sorts visible machines, filters by name glob and source kind", async () => {
    const { token, orgId } = await orgWithProjects(server.api);
    const items: any[] = [];
    for (const name of ["delta", "Alpha", "charlie", "Bravo", "a*c"]) items.push(await createMachine(server.api, token, orgId, { display_name: name }));
    await server.api.patch(`${machinesOf(orgId)}/${items[1].id}`, { cwd: "/touched" }, { token });
    const latest = await collectPages(server.api, machinesOf(orgId), { token });
    const byId = new Map(latest.map((m) => [m.id, m]));
    const expected = items.map((m) => ({ ...byId.get(m.id), name: m.display_name }));
    for (const sort of ["-created_at", "created_at", "name", "-name", "updated_at", "-updated_at"]) {
      for (const limit of [1, 2]) {
        const pages = await collectPages(server.api, `${machinesOf(orgId)}?sort=${sort}&limit=${limit}`, { token });
        expect(pages.map((m) => m.id), `${sort} ${limit}`).toEqual(sortedBy(expected, sort).map((m) => m.id));
      }
    }
    const named = async (glob: string) => (await collectPages(server.api, `${machinesOf(orgId)}?name=${encodeURIComponent(glob)}`, { token })).map((m) => m.display_name);
    expect(await named("a*")).toEqual(["a*c", "Alpha"]);
    expect(await named("a\\*c")).toEqual(["a*c"]);
    expect(await named("?RAVO")).toEqual(["Bravo"]);
    expect((await server.api.get(`${machinesOf(orgId)}?source_kind=pool`, { token })).body.data).toEqual([]);
    expect((await server.api.get(`${machinesOf(orgId)}?source_kind=byo`, { token })).body.data).toHaveLength(5);
    for (const query of ["?source_kind=cloud", "?sort=size", "?limit=0", "?limit=101", "?cursor=nonsense"]) {
      const reply = await server.api.get(`${machinesOf(orgId)}${query}`, { token });
      expect(reply.status, query).toBe(400);
    }
    const first = await server.api.get(`${machinesOf(orgId)}?sort=name&limit=1`, { token });
    const crossed = await server.api.get(`${machinesOf(orgId)}?sort=-name&cursor=${first.body.next_cursor}`, { token });
    expect(crossed.status).toBe(400);
  });
});

describe("daemon tokens", () => {
  it("mints, lists and revokes tokens, at most 20 active per machine", async () => {
    const { token, orgId } = await orgWithProjects(server.api);
    const machine = await createMachine(server.api, token, orgId);
    const tokens = `${machinesOf(orgId)}/${machine.id}/daemon-tokens`;
    const minted: any[] = [];
    for (let i = 0; i < 20; i++) {
      const reply = await server.api.post(tokens, i === 0 ? undefined : { name: `t${i}`, metadata: { n: String(i) } }, { token });
      expect(reply.status, reply.text).toBe(201);
      expect(reply.body.token).toMatch(DAEMON_TOKEN);
      minted.push(reply.body.token_record);
    }
    expect(minted[0].name).toBe("daemon");
    expect(new Set(minted.map((t) => t.id)).size).toBe(20);
    const over = await server.api.post(tokens, { name: "one too many" }, { token });
    expect(over.status).toBe(409);
    expect(over.body).toEqual({ error: expect.stringContaining("20"), code: "conflict" });

    const listed = await collectPages(server.api, `${tokens}?limit=7`, { token });
    expect(listed.map((t) => t.id)).toEqual(sortedBy(minted.map((t) => ({ ...t })), "-created_at").map((t) => t.id));

    const revoked = await server.api.post(`${tokens}/${minted[3].id}/revoke`, undefined, { token });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ ...minted[3], revoked_at: expect.stringMatching(ISO), revoke_reason: "revoked" });
    const twice = await server.api.post(`${tokens}/${minted[3].id}/revoke`, undefined, { token });
    expect(twice.body).toEqual(revoked.body);
    expect((await server.api.post(tokens, {}, { token })).status).toBe(201);
    expect((await server.api.post(tokens, {}, { token })).status).toBe(409);

    const unknown = await server.api.post(`${tokens}/${encodeId("daemonToken", newUuid())}/revoke`, undefined, { token });
    expect(unknown.status).toBe(404);
    const otherMachine = await createMachine(server.api, token, orgId);
    const wrongMachine = await server.api.post(`${machinesOf(orgId)}/${otherMachine.id}/daemon-tokens/${minted[0].id}/revoke`, undefined, { token });
    expect(wrongMachine.status).toBe(404);
    for (const body of [{ name: "" }, { name: " padded" }, { metadata: { k: 1 } }, { color: "red" }]) {
      const reply = await server.api.post(tokens, body, { token });
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.code).toBe("validation_failed");
    }
  });
});
