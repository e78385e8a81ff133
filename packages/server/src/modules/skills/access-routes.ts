import type { HttpApp } from "../../platform/http/app.js";
import { pageOf, sortValue, toPage } from "../../platform/http/lists.js";
import { pathId } from "../../platform/http/params.js";
import { errorResponses, Page } from "../../platform/http/schemas.js";
import { ownedGrantRoutes } from "../grants/owned-routes.js";
import * as s from "./schemas.js";
import type { SkillsService } from "./service.js";
import { projectSkillView } from "./views.js";

export function skillPath(params: { orgID: string; skillID: string }): [string, string] {
  return [pathId("org", params.orgID), pathId("skill", params.skillID)];
}

/** Who can use a skill: its grants to other projects, and each project's view of what it can use. */
export function skillAccessRoutes(app: HttpApp, deps: { skills: SkillsService }) {
  const { skills } = deps;

  ownedGrantRoutes(app, s.SKILL_GRANTS, skills);

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
