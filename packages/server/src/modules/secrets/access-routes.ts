import { Type } from "typebox";
import type { HttpApp } from "../../platform/http/app.js";
import { pageOf, sortValue, toPage } from "../../platform/http/lists.js";
import { pathId } from "../../platform/http/params.js";
import { errorResponses, Page } from "../../platform/http/schemas.js";
import { secretFilters, secretPath } from "./decode.js";
import * as s from "./schemas.js";
import type { SecretsService } from "./service.js";
import { grantListItemView, grantView, projectSecretView } from "./views.js";

/** Who can use a secret: its grants to other projects, and each project's view of what it can use. */
export function secretAccessRoutes(app: HttpApp, deps: { secrets: SecretsService }) {
  const { secrets } = deps;

  app.get(
    "/orgs/:orgID/secrets/:secretID/grants",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listSecretGrants",
        summary: "List a secret's grants",
        description: "The secret's grants with their target projects, newest first; name filters and sorts by the target project's name.",
        params: s.SecretParams,
        querystring: s.ListGrantsQuery,
        response: { 200: Page(s.SecretGrantListItem), ...errorResponses() },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      const rows = await secrets.listGrants(request.principal!, ...secretPath(request.params), { name: request.query.name, page });
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
    "/orgs/:orgID/secrets/:secretID/grants",
    {
      schema: {
        tags: [s.TAG],
        operationId: "createSecretGrant",
        summary: "Grant a secret to a project",
        description:
          "Makes the secret available to another project. Needs the right to manage the secret and project.secrets.manage " +
          "on the target project. The owning project already has it (409), as does a project granted it before (409).",
        params: s.SecretParams,
        body: s.SecretGrantCreateRequest,
        response: { 201: s.SecretGrant, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const target = pathId("project", request.body.target_project_id);
      const grant = await secrets.createGrant(request.principal!, ...secretPath(request.params), target);
      return reply.status(201).send(grantView(grant));
    },
  );

  app.delete(
    "/orgs/:orgID/secrets/:secretID/grants/:grantID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "deleteSecretGrant",
        summary: "Revoke a secret grant",
        description: "Revokes one grant; the secret, its versions and other grants stay.",
        params: s.GrantParams,
        response: { 204: Type.Null(), ...errorResponses() },
      },
    },
    async (request, reply) => {
      const grantId = pathId("secretGrant", request.params.grantID);
      await secrets.deleteGrant(request.principal!, ...secretPath(request.params), grantId);
      return reply.status(204).send(null);
    },
  );

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
