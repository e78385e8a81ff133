import type { HttpApp } from "../../platform/http/app.js";
import { pageOf, sortValue, toPage } from "../../platform/http/lists.js";
import { pathId } from "../../platform/http/params.js";
import { errorResponses, Page } from "../../platform/http/schemas.js";
import { ownedGrantRoutes } from "../grants/owned-routes.js";
import { secretFilters } from "./decode.js";
import * as s from "./schemas.js";
import type { SecretsService } from "./service.js";
import { projectSecretView } from "./views.js";

/** Who can use a secret: its grants to other projects, and each project's view of what it can use. */
export function secretAccessRoutes(app: HttpApp, deps: { secrets: SecretsService }) {
  const { secrets } = deps;

  ownedGrantRoutes(app, s.SECRET_GRANTS, secrets);

  app.get(
    "/orgs/:orgID/projects/:projectID/secrets",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listProjectAvailableSecrets",
        summary: "List secrets available to a project",
        description:
          "Secrets the project can use, owned by it (direct) or granted to it (grant), newest first. Needs " +
          "project.secrets.list. Metadata filters are written metadata[key]=value; every one given must match.",
        params: s.ProjectSecretsParams,
        querystring: s.ListProjectSecretsQuery,
        response: { 200: Page(s.ProjectSecretAccess), ...errorResponses() },
      },
    },
    async (request) => {
      const { query } = request;
      const page = pageOf(query);
      const [orgId, projectId] = [pathId("org", request.params.orgID), pathId("project", request.params.projectID)];
      const rows = await secrets.listProjectSecrets(request.principal!, orgId, projectId, {
        filters: secretFilters(query),
        source: query.availability_source,
        page,
      });
      return toPage(
        rows,
        page.limit,
        page.sort,
        (r) => ({ value: sortValue(page.sort, r.secret), id: r.secret.id }),
        (r) => projectSecretView(projectId, r),
      );
    },
  );

  app.get(
    "/orgs/:orgID/projects/:projectID/secrets/:secretID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "getProjectAvailableSecret",
        summary: "Get a secret available to a project",
        description: "One secret the project can use, with how it is available (owned or granted).",
        params: s.ProjectSecretParams,
        response: { 200: s.ProjectSecretAccess, ...errorResponses() },
      },
    },
    async (request) => {
      const projectId = pathId("project", request.params.projectID);
      const row = await secrets.getProjectSecret(request.principal!, pathId("org", request.params.orgID), projectId, pathId("secret", request.params.secretID));
      return projectSecretView(projectId, row);
    },
  );
}
