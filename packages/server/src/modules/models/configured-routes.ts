import { Type } from "typebox";
import type { HttpApp } from "../../platform/http/app.js";
import { pageOf, toPage } from "../../platform/http/lists.js";
import { errorResponses, Page } from "../../platform/http/schemas.js";
import * as s from "./configured-schemas.js";
import { modelPath, providerPath } from "./decode.js";
import { ProviderParams, TAG } from "./providers-schemas.js";
import type { ModelsService } from "./service.js";
import { configuredModelView } from "./views.js";

export function configuredModelRoutes(app: HttpApp, deps: { models: ModelsService }) {
  const { models } = deps;

  app.get(
    "/orgs/:orgID/model-provider-configs/:modelProviderConfigID/models",
    {
      schema: {
        tags: [TAG],
        operationId: "listConfiguredModels",
        summary: "List configured models",
        description: "The provider config's models with their current revisions, ordered by created_at descending, then id descending.",
        params: ProviderParams,
        querystring: s.ListConfiguredModelsQuery,
        response: { 200: Page(s.ConfiguredModel), ...errorResponses() },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      const rows = await models.listConfiguredModels(request.principal!, ...providerPath(request.params), page);
      return toPage(rows, page.limit, page.sort, (r) => ({ value: r.model.createdAt, id: r.model.id }), configuredModelView);
    },
  );

  app.post(
    "/orgs/:orgID/model-provider-configs/:modelProviderConfigID/models",
    {
      schema: {
        tags: [TAG],
        operationId: "createConfiguredModel",
        summary: "Add a configured model",
        description: "Adds a model to the provider config (org.manage) with its first revision. Names are unique per provider config (409).",
        params: ProviderParams,
        body: s.CreateConfiguredModelRequest,
        response: { 201: s.ConfiguredModel, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const created = await models.createConfiguredModel(request.principal!, ...providerPath(request.params), request.body);
      return reply.status(201).send(configuredModelView(created));
    },
  );

  app.put(
    "/orgs/:orgID/model-provider-configs/:modelProviderConfigID/models/:configuredModelID",
    {
      schema: {
        tags: [TAG],
        operationId: "updateConfiguredModel",
        summary: "Update a configured model",
        description:
          "Changes the model (org.manage). A change to its runtime settings adds a revision: current_revision_id and " +
          "revision_created_at change. A rename alone keeps the revision.",
        params: s.ConfiguredModelParams,
        body: s.UpdateConfiguredModelRequest,
        response: { 200: s.ConfiguredModel, ...errorResponses(409) },
      },
    },
    async (request) => configuredModelView(await models.updateConfiguredModel(request.principal!, ...modelPath(request.params), request.body)),
  );

  app.delete(
    "/orgs/:orgID/model-provider-configs/:modelProviderConfigID/models/:configuredModelID",
    {
      schema: {
        tags: [TAG],
        operationId: "deleteConfiguredModel",
        summary: "Delete a configured model",
        description: "Deletes the model and its revisions (org.manage). Refused with 409 while any project holds a grant on it.",
        params: s.ConfiguredModelParams,
        response: { 204: Type.Null(), ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      await models.deleteConfiguredModel(request.principal!, ...modelPath(request.params));
      return reply.status(204).send(null);
    },
  );
}
