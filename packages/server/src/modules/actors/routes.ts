import type { HttpApp } from "../../platform/http/app.js";
import { pageOf, toPage } from "../../platform/http/lists.js";
import { pathId, projectPath } from "../../platform/http/params.js";
import { errorResponses, Page } from "../../platform/http/schemas.js";
import { ProjectParams } from "../orgs/schemas.js";
import * as s from "./schemas.js";
import type { ActorsService } from "./service.js";
import { actorView } from "./views.js";

export function actorRoutes(app: HttpApp, deps: { actors: ActorsService }) {
  const { actors } = deps;

  app.get(
    "/orgs/:orgID/projects/:projectID/actors",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listActors",
        summary: "List actors",
        description:
          "The project's actors, the people inputs and answers are attributed to (agent.read), ordered by created_at " +
          "ascending, then id ascending. The filters match exactly.",
        params: ProjectParams,
        querystring: s.ListActorsQuery,
        response: { 200: Page(s.Actor), ...errorResponses() },
      },
    },
    async (request) => {
      const { provider, provider_tenant_id, provider_user_id } = request.query;
      const page = pageOf(request.query, "created_at");
      const rows = await actors.listActors(
        request.principal!,
        ...projectPath(request.params),
        { provider, tenant: provider_tenant_id, providerUserId: provider_user_id },
        page,
      );
      return toPage(rows, page.limit, page.sort, (r) => ({ value: r.createdAt, id: r.id }), actorView);
    },
  );

  app.get(
    "/orgs/:orgID/projects/:projectID/actors/:actorID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "getActor",
        summary: "Get an actor",
        description: "One actor of the project (agent.read).",
        params: s.ActorParams,
        response: { 200: s.Actor, ...errorResponses() },
      },
    },
    async (request) =>
      actorView(await actors.getActor(request.principal!, ...projectPath(request.params), pathId("actor", request.params.actorID))),
  );

  app.put(
    "/orgs/:orgID/projects/:projectID/actors",
    {
      schema: {
        tags: [s.TAG],
        operationId: "putActor",
        summary: "Create or update an external actor",
        description:
          "Creates or updates an external actor, found by (provider_tenant_id, provider_user_id) (agent.operate). Omitted " +
          "attributes keep their stored values; given ones overwrite them, empty values included (metadata is replaced " +
          "whole). An actor left unchanged is not rewritten: its updated_at stays.",
        params: ProjectParams,
        body: s.ExternalActorParams,
        response: { 200: s.Actor, ...errorResponses() },
      },
    },
    async (request) => actorView(await actors.putActor(request.principal!, ...projectPath(request.params), request.body)),
  );
}
