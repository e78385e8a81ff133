import { Type } from "typebox";
import type { HttpApp } from "../../platform/http/app.js";
import { pageOf, sortValue, toPage } from "../../platform/http/lists.js";
import { pathId } from "../../platform/http/params.js";
import { errorResponses, Page } from "../../platform/http/schemas.js";
import { OrgParams } from "../orgs/schemas.js";
import { secretAccessRoutes } from "./access-routes.js";
import { queryId, secretFilters, secretPath } from "./decode.js";
import * as s from "./schemas.js";
import type { SecretsService } from "./service.js";
import { secretView } from "./views.js";

/** Every secrets route: the org-level resource, its versions, its grants and the project views. */
export function secretRoutes(app: HttpApp, deps: { secrets: SecretsService }) {
  const { secrets } = deps;

  app.get(
    "/orgs/:orgID/secrets",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listSecrets",
        summary: "List secrets",
        description:
          "Secrets the caller may list through their owner, newest first. Without owner_kind: the org's secrets (with " +
          "org.secrets.list), the secrets of each project where the caller holds project.secrets.list, and the caller's own " +
          "user secrets. owner_project_id is required with owner_kind=project and rejected otherwise. Metadata filters are " +
          "written metadata[key]=value; every one given must match.",
        params: OrgParams,
        querystring: s.ListSecretsQuery,
        response: { 200: Page(s.Secret), ...errorResponses() },
      },
    },
    async (request) => {
      const { query } = request;
      const page = pageOf(query);
      const rows = await secrets.listSecrets(request.principal!, pathId("org", request.params.orgID), {
        filters: secretFilters(query),
        ownerProjectId: queryId("project", query.owner_project_id, "owner_project_id"),
        mcpOAuthFlowId: queryId("mcpOAuthFlow", query.mcp_oauth_flow_id, "mcp_oauth_flow_id"),
        page,
      });
      return toPage(rows, page.limit, page.sort, (r) => ({ value: sortValue(page.sort, r), id: r.id }), secretView);
    },
  );

  app.post(
    "/orgs/:orgID/secrets",
    {
      schema: {
        tags: [s.TAG],
        operationId: "createSecret",
        summary: "Create a secret",
        description: "Stores an encrypted secret owned by the organization, a project or the caller. The value is write-only: no answer contains it.",
        params: OrgParams,
        body: s.CreateSecretRequest,
        response: { 201: s.Secret, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const { owner, name, metadata, material } = request.body;
      const ownerInput = owner.kind === "project" ? { kind: owner.kind, projectId: pathId("project", owner.project_id) } : { kind: owner.kind };
      const secret = await secrets.createSecret(request.principal!, pathId("org", request.params.orgID), {
        owner: ownerInput,
        name,
        metadata,
        material,
      });
      return reply.status(201).send(secretView(secret));
    },
  );

  app.get(
    "/orgs/:orgID/secrets/:secretID",
    { schema: { tags: [s.TAG], operationId: "getSecret", summary: "Get a secret", description: "One secret's metadata (never its value).", params: s.SecretParams, response: { 200: s.Secret, ...errorResponses() } } },
    async (request) => secretView(await secrets.getSecret(request.principal!, ...secretPath(request.params))),
  );

  app.patch(
    "/orgs/:orgID/secrets/:secretID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "updateSecret",
        summary: "Update a secret",
        description: "Changes the secret's name or metadata; the value changes only through a new version.",
        params: s.SecretParams,
        body: s.UpdateSecretRequest,
        response: { 200: s.Secret, ...errorResponses(409) },
      },
    },
    async (request) => secretView(await secrets.updateSecret(request.principal!, ...secretPath(request.params), request.body)),
  );

  app.delete(
    "/orgs/:orgID/secrets/:secretID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "deleteSecret",
        summary: "Delete a secret",
        description: "Deletes the secret with every version and grant; the encrypted values are gone for good.",
        params: s.SecretParams,
        response: { 204: Type.Null(), ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      await secrets.deleteSecret(request.principal!, ...secretPath(request.params));
      return reply.status(204).send(null);
    },
  );

  app.post(
    "/orgs/:orgID/secrets/:secretID/versions",
    {
      schema: {
        tags: [s.TAG],
        operationId: "createSecretVersion",
        summary: "Add a secret version",
        description: "Stores a new value as the next version and makes it current. Its kind must be the secret's kind.",
        params: s.SecretParams,
        body: s.SecretVersionRequest,
        response: { 200: s.Secret, ...errorResponses(409) },
      },
    },
    async (request) => secretView(await secrets.createVersion(request.principal!, ...secretPath(request.params), request.body.material)),
  );

  secretAccessRoutes(app, deps);
}
