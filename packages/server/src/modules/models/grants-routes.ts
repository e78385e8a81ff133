import { Type } from "typebox";
import type { HttpApp } from "../../platform/http/app.js";
import { pageOf, sortValue, toPage } from "../../platform/http/lists.js";
import { pathId, projectPath } from "../../platform/http/params.js";
import { errorResponses, Page } from "../../platform/http/schemas.js";
import * as s from "./grants-schemas.js";
import { TAG } from "./providers-schemas.js";
import type { ModelsService } from "./service.js";
import { grantListItemView, grantView } from "./views.js";

export function modelGrantRoutes(app: HttpApp, deps: { models: ModelsService }) {
  const { models } = deps;

  app.get(
    "/orgs/:orgID/projects/:projectID/model-grants",
    {
      schema: {
        tags: [TAG],
        operationId: "listProjectModelGrants",
        summary: "List a project's model grants",
        description:
          "The models the project may use, each with a summary of the model (project.read). `name` filters and sorts by the " +
          "model's name; by default items are ordered by created_at descending, then id descending.",
        params: s.ProjectParams,
        querystring: s.ListProjectModelGrantsQuery,
        response: { 200: Page(s.ProjectModelGrantListItem), ...errorResponses() },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      const rows = await models.listModelGrants(request.principal!, ...projectPath(request.params), { name: request.query.name, page });
      return toPage(
        rows,
        page.limit,
        page.sort,
        (r) => ({ value: sortValue(page.sort, { name: r.model.name, createdAt: r.grant.createdAt, updatedAt: r.grant.updatedAt }), id: r.grant.id }),
        grantListItemView,
      );
    },
  );

  app.post(
    "/orgs/:orgID/projects/:projectID/model-grants",
    {
      schema: {
        tags: [TAG],
        operationId: "createProjectModelGrant",
        summary: "Grant a model to a project",
        description:
          "Gives the project a configured model of the organization (project.access_manage), optionally narrowed. One grant " +
          "per project and model (409).",
        params: s.ProjectParams,
        body: s.CreateProjectModelGrantRequest,
        response: { 201: s.ProjectModelGrantEnvelope, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const configuredModelId = pathId("configuredModel", request.body.configured_model_id);
      const grant = await models.createModelGrant(request.principal!, ...projectPath(request.params), { ...request.body, configuredModelId });
      return reply.status(201).send({ grant: grantView(grant) });
    },
  );

  app.patch(
    "/orgs/:orgID/projects/:projectID/model-grants/:modelGrantID",
    {
      schema: {
        tags: [TAG],
        operationId: "updateProjectModelGrant",
        summary: "Update a project's model grant",
        description:
          "Changes the project's overrides (project.access_manage). Omitted fields keep their values; null clears an override, " +
          "an empty array clears a list. The grant is live policy: agents re-apply it on their next model call.",
        params: s.GrantParams,
        body: s.UpdateProjectModelGrantRequest,
        response: { 200: s.ProjectModelGrantEnvelope, ...errorResponses(409) },
      },
    },
    async (request) => {
      const grantId = pathId("modelGrant", request.params.modelGrantID);
      return { grant: grantView(await models.updateModelGrant(request.principal!, ...projectPath(request.params), grantId, request.body)) };
    },
  );

  app.delete(
    "/orgs/:orgID/projects/:projectID/model-grants/:modelGrantID",
    {
      schema: {
        tags: [TAG],
        operationId: "deleteProjectModelGrant",
        summary: "Revoke a project's model grant",
        description:
          "Takes the model away from the project (project.access_manage): new launches cannot pick it and running agents lose " +
          "it on their next model call. The model itself stays.",
        params: s.GrantParams,
        response: { 204: Type.Null(), ...errorResponses() },
      },
    },
    async (request, reply) => {
      await models.deleteModelGrant(request.principal!, ...projectPath(request.params), pathId("modelGrant", request.params.modelGrantID));
      return reply.status(204).send(null);
    },
  );
}
