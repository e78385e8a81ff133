import { describe, expect, it } from "vitest";
import { encodeId, newUuid } from "../../src/platform/ids.js";
import { collectPages } from "../support/paging.js";
import { useTestServer } from "../support/server.js";
import { createMachine, grantMachine, GRANT_ID, ISO, orgWithProjects, setProjectRole } from "./machines-fixtures.js";
import { sortedBy } from "./secrets-fixtures.js";

/* Project machine grants and the project's view of its machines (issue 11, item 2), over HTTP. */
const server = useTestServer();

describe("project machine grants", () => {
  it("grants a machine, lists the grant with the machine, and revokes it while the machine stays", async () => {
    const { token, orgId, projects } = await orgWithProjects(server.api);
    const machine = await createMachine(server.api, token, orgId, { display_name: "box" });
    const grants = `/api/v1/orgs/${orgId}/projects/${projects.Default.id}/machine-grants`;
    const created = await server.api.post(grants, { machine_id: machine.id, description: "for CI", metadata: { team: "a" } }, { token });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toEqual({
      grant: {
        id: expect.stringMatching(GRANT_ID),
        org_id: orgId,
        project_id: projects.Default.id,
        machine_id: machine.id,
        source_kind: "explicit",
        project_machine_pool_grant_id: null,
        description: "for CI",
        metadata: { team: "a" },
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
      },
      machine,
    });
    const { display_name, id, org_id, source_kind, description, provider, lifecycle_state, connection_state, last_observed_at, deleted_at, created_at, updated_at } = machine;
    const summary = { id, org_id, source_kind, display_name, description, provider, lifecycle_state, connection_state, last_observed_at, deleted_at, created_at, updated_at };
    expect((await server.api.get(grants, { token })).body).toEqual({ data: [{ grant: created.body.grant, machine: summary }], next_cursor: null });

    const twice = await server.api.post(grants, { machine_id: machine.id }, { token });
    expect(twice.status).toBe(409);
    expect(twice.body).toEqual({ error: expect.any(String), code: "conflict" });

    const project = `/api/v1/orgs/${orgId}/projects/${projects.Default.id}/machines`;
    const visible = await server.api.get(project, { token });
    expect(visible.body.data).toEqual([
      {
        ...summary,
        access: {
          can_manage: true,
          sources: [{ kind: "project_machine_grant", project_id: projects.Default.id, grant_id: created.body.grant.id, grant_source_kind: "explicit" }],
        },
      },
    ]);

    expect((await server.api.delete(`${grants}/${created.body.grant.id}`, { token })).status).toBe(204);
    expect((await server.api.delete(`${grants}/${created.body.grant.id}`, { token })).status).toBe(404);
    expect((await server.api.get(grants, { token })).body.data).toEqual([]);
    expect((await server.api.get(project, { token })).body.data).toEqual([]);
    expect((await server.api.get(`/api/v1/orgs/${orgId}/machines/${machine.id}`, { token })).status).toBe(200);
  });

  it("replays an Idempotency-Key with the same request and refuses it with another", async () => {
    const { token, orgId, projects } = await orgWithProjects(server.api);
    const [a, b] = [await createMachine(server.api, token, orgId), await createMachine(server.api, token, orgId)];
    const grants = `/api/v1/orgs/${orgId}/projects/${projects.Default.id}/machine-grants`;
    const keyed = { token, headers: { "idempotency-key": "grant-1" } };
    const first = await server.api.post(grants, { machine_id: a.id, description: "d" }, keyed);
    expect(first.status).toBe(201);
    const replay = await server.api.post(grants, { machine_id: a.id, description: "d" }, keyed);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);
    for (const body of [{ machine_id: b.id, description: "d" }, { machine_id: a.id }, { machine_id: a.id, description: "d", metadata: { x: "1" } }]) {
      const reply = await server.api.post(grants, body, keyed);
      expect(reply.status, JSON.stringify(body)).toBe(409);
      expect(reply.body.code).toBe("idempotency_key_conflict");
    }
  });

  it("pages, sorts and filters grants by the machine's name", async () => {
    const { token, orgId, projects } = await orgWithProjects(server.api);
    const grants = `/api/v1/orgs/${orgId}/projects/${projects.Default.id}/machine-grants`;
    const items: any[] = [];
    for (const name of ["delta", "Alpha", "charlie", "Bravo"]) {
      const machine = await createMachine(server.api, token, orgId, { display_name: name });
      const grant = await grantMachine(server.api, token, orgId, projects.Default.id, machine.id);
      items.push({ id: grant.id, name, created_at: grant.created_at });
    }
    for (const sort of ["-created_at", "created_at", "name", "-name"]) {
      for (const limit of [1, 3]) {
        const pages = await collectPages(server.api, `${grants}?sort=${sort}&limit=${limit}`, { token });
        expect(pages.map((g) => g.grant.id), `${sort} ${limit}`).toEqual(sortedBy(items, sort).map((g) => g.id));
      }
    }
    const named = await collectPages(server.api, `${grants}?name=${encodeURIComponent("*R*")}`, { token });
    expect(named.map((g) => g.machine.display_name)).toEqual(["Bravo", "charlie"]);
    for (const query of ["?sort=updated_at", "?sort=-updated_at", "?limit=500"]) {
      expect((await server.api.get(`${grants}${query}`, { token })).status, query).toBe(400);
    }
    // Project machines page and sort too.
    const machines = await collectPages(server.api, `/api/v1/orgs/${orgId}/projects/${projects.Default.id}/machines?sort=name&limit=1`, { token });
    expect(machines.map((m) => m.display_name)).toEqual(["Alpha", "Bravo", "charlie", "delta"]);
  });

  it("needs project.access_manage on the project and the right to manage the machine", async () => {
    const { token, orgId, projects } = await orgWithProjects(server.api, "Beta");
    const machine = await createMachine(server.api, token, orgId);
    const hidden = await createMachine(server.api, token, orgId);
    const member = await server.api.orgMember({ token }, orgId, "member");
    const grants = (projectId: string) => `/api/v1/orgs/${orgId}/projects/${projectId}/machine-grants`;
    const grant = await grantMachine(server.api, token, orgId, projects.Beta.id, machine.id);
    const as = { token: member.token };

    // Without a project role the project does not exist for the member.
    expect((await server.api.get(grants(projects.Default.id), as)).status).toBe(404);
    await setProjectRole(server.api, token, orgId, member.userId, projects.Default.id, "viewer");
    const viewerList = await server.api.get(grants(projects.Default.id), as);
    expect(viewerList.status).toBe(403);
    expect(viewerList.body.code).toBe("forbidden");
    expect((await server.api.get(`/api/v1/orgs/${orgId}/projects/${projects.Default.id}/machines`, as)).status).toBe(200);

    await setProjectRole(server.api, token, orgId, member.userId, projects.Default.id, "admin");
    await setProjectRole(server.api, token, orgId, member.userId, projects.Beta.id, "admin");
    expect((await server.api.get(grants(projects.Default.id), as)).status).toBe(200);
    const projectMachines = await server.api.get(`/api/v1/orgs/${orgId}/projects/${projects.Beta.id}/machines`, as);
    expect(projectMachines.body.data[0].access.can_manage).toBe(false);
    // A project admin sees the machine through Beta, but granting it on needs the org role that manages machines.
    const spread = await server.api.post(grants(projects.Default.id), { machine_id: machine.id }, as);
    expect(spread.status).toBe(403);
    expect(spread.body.code).toBe("forbidden");
    const unseen = await server.api.post(grants(projects.Default.id), { machine_id: hidden.id }, as);
    expect(unseen.status).toBe(404);
    const revoke = await server.api.delete(`${grants(projects.Beta.id)}/${grant.id}`, as);
    expect(revoke.status).toBe(403);

    const unknown = await server.api.post(grants(projects.Default.id), { machine_id: encodeId("machine", newUuid()) }, { token });
    expect(unknown.status).toBe(404);
    const wrongProject = await server.api.delete(`${grants(projects.Default.id)}/${grant.id}`, { token });
    expect(wrongProject.status).toBe(404);
    for (const body of [{}, { machine_id: "mch_x" }, { machine_id: machine.id, color: "red" }]) {
      const reply = await server.api.post(grants(projects.Default.id), body, { token });
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.code).toBe("validation_failed");
    }

    const other = await orgWithProjects(server.api);
    const foreign = { token: other.token };
    expect((await server.api.get(grants(projects.Beta.id), foreign)).status).toBe(404);
    expect((await server.api.post(grants(projects.Beta.id), { machine_id: machine.id }, foreign)).status).toBe(404);
    expect((await server.api.delete(`${grants(projects.Beta.id)}/${grant.id}`, foreign)).status).toBe(404);
    // Its own project with this org's machine: the machine does not exist there.
    expect((await server.api.post(grants(other.projects.Default.id), { machine_id: machine.id }, foreign)).status).toBe(404);
  });

  it("drops a deleted project's grants and deletes an organization with machines, tokens and grants", async () => {
    const { token, orgId, projects } = await orgWithProjects(server.api, "Beta");
    const connected = await server.api.post(`/api/v1/orgs/${orgId}/machines/connect`, { display_name: "box", project_ids: [projects.Beta.id, projects.Default.id] }, { token });
    expect(connected.status).toBe(201);
    expect((await server.api.delete(`/api/v1/orgs/${orgId}/projects/${projects.Beta.id}`, { token })).status).toBe(204);
    const seen = await server.api.get(`/api/v1/orgs/${orgId}/machines`, { token });
    expect(seen.body.data[0].access.sources.map((s: any) => s.project_id ?? s.kind)).toEqual(["org_role", projects.Default.id]);
    expect((await server.api.delete(`/api/v1/orgs/${orgId}`, { token })).status).toBe(204);
    expect((await server.api.get(`/api/v1/orgs/${orgId}/machines`, { token })).status).toBe(404);
  });
});
