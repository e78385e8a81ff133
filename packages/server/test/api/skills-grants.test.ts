import { describe, expect, it } from "vitest";
import { collectPages } from "../support/paging.js";
import { useTestServer } from "../support/server.js";
import { ISO, sortedBy } from "./secrets-fixtures.js";
import { GRANT_ID, skillZip, uploadSkill } from "./skills-fixtures.js";

const server = useTestServer();

async function orgWithProjects(...names: string[]) {
  const owner = await server.api.userWithOrg();
  const projects: Record<string, any> = { Default: owner.project };
  for (const name of names) {
    const reply = await server.api.post(`/api/v1/orgs/${owner.org.id}/projects`, { name }, { token: owner.token });
    expect(reply.status).toBe(201);
    projects[name] = reply.body;
  }
  return { ...owner, orgId: owner.org.id as string, auth: { token: owner.token }, projects };
}

const summary = ({ skill_md: _md, files: _files, ...rest }: any) => rest;

describe("skill grants", () => {
  it("grants an org skill to projects, lists the grants with their projects, and revokes them", async () => {
    const { orgId, auth, projects } = await orgWithProjects("Alpha", "Beta");
    const skill = await uploadSkill(server.url, auth, orgId, { kind: "org" }, skillZip("shared"));
    const grants = `/api/v1/orgs/${orgId}/skills/${skill.id}/grants`;
    const created = await server.api.post(grants, { target_project_id: projects.Alpha.id }, auth);
    expect(created.status, created.text).toBe(201);
    expect(created.body).toEqual({ id: expect.stringMatching(GRANT_ID), org_id: orgId, skill_id: skill.id, target_project_id: projects.Alpha.id, created_at: expect.stringMatching(ISO) });
    expect((await server.api.get(grants, auth)).body).toEqual({ data: [{ grant: created.body, target_project: projects.Alpha }], next_cursor: null });
    const twice = await server.api.post(grants, { target_project_id: projects.Alpha.id }, auth);
    expect(twice.status).toBe(409);
    expect(twice.body).toEqual({ error: expect.any(String), code: "conflict" });
    expect((await server.api.post(grants, { target_project_id: "proj_" + "a".repeat(26) }, auth)).status).toBe(404);
    expect((await server.api.delete(`${grants}/${created.body.id}`, auth)).status).toBe(204);
    expect((await server.api.delete(`${grants}/${created.body.id}`, auth)).status).toBe(404);
    expect((await server.api.get(grants, auth)).body.data).toEqual([]);
  });

  it("refuses granting a project's skill to that project, as secrets do", async () => {
    const { orgId, auth, projects } = await orgWithProjects("Alpha");
    const skill = await uploadSkill(server.url, auth, orgId, { kind: "project", project_id: projects.Alpha.id }, skillZip("local"));
    const reply = await server.api.post(`/api/v1/orgs/${orgId}/skills/${skill.id}/grants`, { target_project_id: projects.Alpha.id }, auth);
    expect(reply.status).toBe(409);
    expect(reply.body).toEqual({ error: expect.stringContaining("belongs to this project"), code: "conflict" });
    const elsewhere = await server.api.post(`/api/v1/orgs/${orgId}/skills/${skill.id}/grants`, { target_project_id: projects.Default.id }, auth);
    expect(elsewhere.status).toBe(201);
  });

  it("pages, sorts and filters grants by the target project's name", async () => {
    const { orgId, auth, projects } = await orgWithProjects("delta", "Alpha", "charlie", "Bravo");
    const skill = await uploadSkill(server.url, auth, orgId, { kind: "user" }, skillZip("mine"));
    const grants = `/api/v1/orgs/${orgId}/skills/${skill.id}/grants`;
    const items = [];
    for (const name of ["delta", "Alpha", "charlie", "Bravo"]) {
      const reply = await server.api.post(grants, { target_project_id: projects[name].id }, auth);
      items.push({ grant: reply.body, target_project: projects[name] });
    }
    const flat = items.map((i) => ({ ...i, id: i.grant.id, name: i.target_project.name, created_at: i.grant.created_at }));
    for (const sort of ["-created_at", "created_at", "name", "-name"]) {
      const paged = await collectPages(server.api, `${grants}?limit=3&sort=${sort}`, auth);
      expect(paged, sort).toEqual(sortedBy(flat, sort).map(({ grant, target_project }) => ({ grant, target_project })));
    }
    expect((await collectPages(server.api, `${grants}?name=?RAVO`, auth)).map((i) => i.target_project.name)).toEqual(["Bravo"]);
    expect((await server.api.get(`${grants}?sort=updated_at`, auth)).status).toBe(400);
  });
});

describe("skills available to a project", () => {
  it("lists owned (direct) and granted skills newest first, filtered by owner kind and availability source", async () => {
    const { orgId, auth, projects } = await orgWithProjects("Alpha", "Beta");
    const alpha = projects.Alpha.id;
    const orgSkill = await uploadSkill(server.url, auth, orgId, { kind: "org" }, skillZip("org-wide"));
    const own = await uploadSkill(server.url, auth, orgId, { kind: "project", project_id: alpha }, skillZip("alpha-only"));
    const userSkill = await uploadSkill(server.url, auth, orgId, { kind: "user" }, skillZip("personal"));
    await uploadSkill(server.url, auth, orgId, { kind: "project", project_id: projects.Beta.id }, skillZip("beta-only"));
    await uploadSkill(server.url, auth, orgId, { kind: "org" }, skillZip("not-granted"));
    const grantOf = async (skill: any) => (await server.api.post(`/api/v1/orgs/${orgId}/skills/${skill.id}/grants`, { target_project_id: alpha }, auth)).body.id;
    const orgGrant = await grantOf(orgSkill);
    const userGrant = await grantOf(userSkill);

    const path = `/api/v1/orgs/${orgId}/projects/${alpha}/skills`;
    const expected = [
      { skill: summary(userSkill), project_id: alpha, availability: { source: "grant", grant_id: userGrant } },
      { skill: summary(own), project_id: alpha, availability: { source: "direct" } },
      { skill: summary(orgSkill), project_id: alpha, availability: { source: "grant", grant_id: orgGrant } },
    ];
    expect(await collectPages(server.api, `${path}?limit=2`, auth)).toEqual(expected);
    expect(await collectPages(server.api, `${path}?limit=1&sort=created_at`, auth)).toEqual([...expected].reverse());
    const names = async (query: string) => (await collectPages(server.api, `${path}?${query}`, auth)).map((i) => i.skill.name);
    expect(await names("sort=name")).toEqual(["alpha-only", "org-wide", "personal"]);
    expect(await names("availability_source=direct")).toEqual(["alpha-only"]);
    expect(await names("availability_source=grant")).toEqual(["personal", "org-wide"]);
    expect(await names("owner_kind=org")).toEqual(["org-wide"]);
    expect(await names("owner_kind=user&availability_source=grant")).toEqual(["personal"]);
    expect(await names("owner_kind=project&availability_source=grant")).toEqual([]);
    expect(await names("name=*-*")).toEqual(["alpha-only", "org-wide"]);
    for (const query of ["availability_source=owned", "owner_kind=team", "sort=size"]) {
      expect((await server.api.get(`${path}?${query}`, auth)).status, query).toBe(400);
    }
    const other = await server.api.userWithOrg("Other");
    expect((await server.api.get(path, { token: other.token })).status).toBe(404);
  });
});
