import { Type } from "typebox";
import type { HttpApp } from "../../platform/http/app.js";
import { pageOf, sortValue, toPage } from "../../platform/http/lists.js";
import { pathId } from "../../platform/http/params.js";
import { errorResponses, Page } from "../../platform/http/schemas.js";
import { OrgParams } from "../orgs/schemas.js";
import { providerPath } from "./decode.js";
import * as s from "./providers-schemas.js";
import type { ModelsService } from "./service.js";
import { providerView } from "./views.js";

export function providerRoutes(app: HttpApp, deps: { models: ModelsService }) {
  const { models } = deps;

  app.get(
    "/orgs/:orgID/model-provider-configs",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listModelProviderConfigs",
        summary: "List model provider configs",
        description: "The organization's model provider configs, newest first unless sorted otherwise; `name` filters by a glob.",
        params: OrgParams,
        querystring: s.ListModelProviderConfigsQuery,
        response: { 200: Page(s.ModelProviderConfig), ...errorResponses() },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      const rows = await models.listProviderConfigs(request.principal!, pathId("org", request.params.orgID), { name: request.query.name, page });
      return toPage(rows, page.limit, page.sort, (r) => ({ value: sortValue(page.sort, r), id: r.id }), providerView);
    },
  );

  app.post(
    "/orgs/:orgID/model-provider-configs",
    {
      schema: {
        tags: [s.TAG],
        operationId: "createModelProviderConfig",
        summary: "Create a model provider config",
        description:
          "Creates a model provider config (org.manage), then probes the provider's /models endpoint with the credential and " +
          "returns the result as model_catalog. A failed probe does not fail the creation. The credential must be an " +
          "org-owned secret of kind generic (400 otherwise, 404 when the organization has no such secret).",
        params: OrgParams,
        body: s.CreateModelProviderConfigRequest,
        response: { 201: s.CreateModelProviderConfigResponse, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const { config, catalog } = await models.createProviderConfig(request.principal!, pathId("org", request.params.orgID), {
        ...body,
        credentialSecretId: pathId("secret", body.credential_secret_id),
      });
      return reply.status(201).send({ config: providerView(config), model_catalog: catalog });
    },
  );

  app.get(
    "/orgs/:orgID/model-provider-configs/:modelProviderConfigID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "getModelProviderConfig",
        summary: "Get a model provider config",
        description: "One model provider config of the organization.",
        params: s.ProviderParams,
        response: { 200: s.ModelProviderConfig, ...errorResponses() },
      },
    },
    async (request) => providerView(await models.getProviderConfig(request.principal!, ...providerPath(request.params))),
  );

  app.put(
    "/orgs/:orgID/model-provider-configs/:modelProviderConfigID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "updateModelProviderConfig",
        summary: "Update a model provider config",
        description: "Changes where and how svc calls the provider (org.manage). The name, api_format and api_variant cannot change.",
        params: s.ProviderParams,
        body: s.UpdateModelProviderConfigRequest,
        response: { 200: s.ModelProviderConfig, ...errorResponses(409) },
      },
    },
    async (request) => {
      const body = request.body;
      const credentialSecretId = body.credential_secret_id === undefined ? undefined : pathId("secret", body.credential_secret_id);
      return providerView(await models.updateProviderConfig(request.principal!, ...providerPath(request.params), { ...body, credentialSecretId }));
    },
  );

  app.delete(
    "/orgs/:orgID/model-provider-configs/:modelProviderConfigID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "deleteModelProviderConfig",
        summary: "Delete a model provider config",
        description: "Deletes the config (org.manage). Refused with 409 while it has configured models, and for operator-managed configs.",
        params: s.ProviderParams,
        response: { 204: Type.Null(), ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      await models.deleteProviderConfig(request.principal!, ...providerPath(request.params));
      return reply.status(204).send(null);
    },
  );

  app.get(
    "/orgs/:orgID/model-provider-configs/:modelProviderConfigID/model-catalog",
    {
      schema: {
        tags: [s.TAG],
        operationId: "getModelCatalog",
        summary: "Get a provider's model catalog",
        description:
          "Asks the provider for its models with the configured credential. It waits on the provider (at most 10 s), and a " +
          "failure (refused destination, unreachable host, rejected key) is answered as `status: failed` with 200.",
        params: s.ProviderParams,
        response: { 200: s.ModelCatalog, ...errorResponses() },
      },
    },
    async (request) => models.getModelCatalog(request.principal!, ...providerPath(request.params)),
  );
}
