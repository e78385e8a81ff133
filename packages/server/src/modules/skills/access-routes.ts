import { Type } from "typebox";
import type { HttpApp } from "../../platform/http/app.js";
import { pageOf, sortValue, toPage } from "../../platform/http/lists.js";
import { pathId } from "../../platform/http/params.js";
import { errorResponses, Page } from "../../platform/http/schemas.js";
import * as s from "./schemas.js";
import type { SkillsService } from "./service.js";
import { grantListItemView, grantView, projectSkillView } from "./views.js";

export function skillPath(params: { orgID: string; skillID: string }): [string, string] {
  return [pathId("org", params.orgID), pathId("skill", params.skillID)];
}

/** Who can use a skill: its grants to other projects, and each project's view of what it can use. */
export function skillAccessRoutes(app: HttpApp, deps: { skills: SkillsService }) {
  const { skills } = deps;

  app.get(
    "/orgs/:orgID/skills/:skillID/grants",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listSkillGrants",
        summary: "List a skill's grants",
        description: "The skill's grants with their target projects, newest first; name filters and sorts by the target project's name.",
        params: s.SkillParams,
        querystring: s.ListGrantsQuery,
        response: { 200: Page(s.SkillGrantListItem), ...errorResponses() },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      const rows = await skills.listGrants(request.principal!, ...skillPath(request.params), { name: request.query.name, page });
      return toPage(
        rows,
        page.limit,
        page.sort,
        (r) => ({ value: sortValue(page.sort, { name: r.project.name, createdAt: r.grant.createdAt }), id: r.grant.id }),
        grantListItemView,
      );
    },
  );

  app.post(
    "/orgs/:orgID/skills/:skillID/grants",
    {
      schema: {
        tags: [s.TAG],
        operationId: "createSkillGrant",
        summary: "Grant a skill to a project",
        description:
          "Makes the skill available to another project. Needs the right to manage the skill and project.manage on the " +
          "target project. The owning project already has it (409), as does a project granted it before (409).",
        params: s.SkillParams,
        body: s.SkillGrantCreateRequest,
        response: { 201: s.SkillGrant, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const target = pathId("project", request.body.target_project_id);
      const grant = await skills.createGrant(request.principal!, ...skillPath(request.params), target);
      return reply.status(201).send(grantView(grant));
    },
  );

  app.delete(
    "/orgs/:orgID/skills/:skillID/grants/:grantID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "deleteSkillGrant",
        summary: "Revoke a skill grant",
        description: "Revokes one grant; the skill, its revisions and other grants stay.",
        params: s.GrantParams,
        response: { 204: Type.Null(), ...errorResponses() },
      },
    },
    async (request, reply) => {
      await skills.deleteGrant(request.principal!, ...skillPath(request.params), pathId("skillGrant", request.params.grantID));
      return reply.status(204).send(null);
    },
  );

  app.get(
    "/orgs/:orgID/projects/:projectID/skills",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listProjectAvailableSkills",
        summary: "List skills available to a project",
        description:
          "Skills the project can use, owned by it (direct) or granted to it (grant), newest first (project.read). Items " +
          "leave out skill_md and files.",
        params: s.ProjectSkillsParams,
        querystring: s.ListProjectSkillsQuery,
        response: { 200: Page(s.ProjectSkillAccess), ...errorResponses() },
      },
    },
    async (request) => {
      const { query } = request;
      const page = pageOf(query);
      const [orgId, projectId] = [pathId("org", request.params.orgID), pathId("project", request.params.projectID)];
      const rows = await skills.listProjectSkills(request.principal!, orgId, projectId, {
        filters: { name: query.name, ownerKind: query.owner_kind },
        source: query.availability_source,
        page,
      });
      return toPage(rows, page.limit, page.sort, (r) => ({ value: sortValue(page.sort, r.skill), id: r.skill.id }), (r) => projectSkillView(projectId, r));
    },
  );
}
