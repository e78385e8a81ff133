import { Type } from "typebox";
import type { HttpApp } from "../../platform/http/app.js";
import type { Principal } from "../../platform/http/auth.js";
import { pageOf, sortValue, toPage, type PageRequest } from "../../platform/http/lists.js";
import { pathId } from "../../platform/http/params.js";
import { errorResponses, iso, Page } from "../../platform/http/schemas.js";
import { encodeId } from "../../platform/ids.js";
import { projectView } from "../orgs/views.js";
import { ownedGrantSchemas, type OwnedGrantApi } from "./owned-schemas.js";
import type { GrantTargetRow } from "./store.js";

/** What the routes need of a grant row: the subject's id comes from the path, which names it. */
interface OwnedGrantRow {
  id: string;
  orgId: string;
  targetProjectId: string;
  createdAt: Date;
}

/** The grant operations of one kind's service (`createOwnedGrants`). */
export interface OwnedGrantOperations {
  listGrants(principal: Principal, orgId: string, subjectId: string, query: { name?: string; page: PageRequest }): Promise<Array<{ grant: OwnedGrantRow; project: GrantTargetRow }>>;
  createGrant(principal: Principal, orgId: string, subjectId: string, targetProjectId: string): Promise<OwnedGrantRow>;
  deleteGrant(principal: Principal, orgId: string, subjectId: string, grantId: string): Promise<void>;
}

/** `/orgs/{orgID}/{noun}s/{id}/grants`: who else can use one owned resource (a secret, a skill). */
export function ownedGrantRoutes(app: HttpApp, api: OwnedGrantApi, grants: OwnedGrantOperations) {
  const { noun, title, tag } = api;
  const s = ownedGrantSchemas(api);
  const path = `/orgs/:orgID/${noun}s/:${noun}ID/grants`;
  // The path names its parameter after the kind (`secretID`), so the schema types the params as a string map.
  const subjectOf = (params: Record<string, string>): [string, string] => [pathId("org", params.orgID!), pathId(api.subjectId, params[`${noun}ID`]!)];
  const view = (grant: OwnedGrantRow, subjectId: string) => ({
    id: encodeId(api.grantId, grant.id),
    org_id: encodeId("org", grant.orgId),
    [`${noun}_id`]: encodeId(api.subjectId, subjectId),
    target_project_id: encodeId("project", grant.targetProjectId),
    created_at: iso(grant.createdAt),
  });

  app.get(
    path,
    {
      schema: {
        tags: [tag],
        operationId: `list${title}Grants`,
        summary: `List a ${noun}'s grants`,
        description: `The ${noun}'s grants with their target projects, newest first; name filters and sorts by the target project's name.`,
        params: s.Params,
        querystring: s.ListQuery,
        response: { 200: Page(s.ListItem), ...errorResponses() },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      const [orgId, subjectId] = subjectOf(request.params);
      const rows = await grants.listGrants(request.principal!, orgId, subjectId, { name: request.query.name, page });
      return toPage(
        rows,
        page.limit,
        page.sort,
        (r) => ({ value: sortValue(page.sort, { name: r.project.name, createdAt: r.grant.createdAt }), id: r.grant.id }),
        (r) => ({ grant: view(r.grant, subjectId), target_project: projectView(r.project) }),
      );
    },
  );

  app.post(
    path,
    {
      schema: {
        tags: [tag],
        operationId: `create${title}Grant`,
        summary: `Grant a ${noun} to a project`,
        description:
          `Makes the ${noun} available to another project. Needs the right to manage the ${noun} and ${api.targetRight} on the ` +
          "target project. The owning project already has it (409), as does a project granted it before (409).",
        params: s.Params,
        body: s.CreateRequest,
        response: { 201: s.Grant, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const [orgId, subjectId] = subjectOf(request.params);
      const grant = await grants.createGrant(request.principal!, orgId, subjectId, pathId("project", request.body.target_project_id));
      return reply.status(201).send(view(grant, subjectId));
    },
  );

  app.delete(
    `${path}/:grantID`,
    {
      schema: {
        tags: [tag],
        operationId: `delete${title}Grant`,
        summary: `Revoke a ${noun} grant`,
        description: `Revokes one grant; the ${noun}, its ${api.history} and other grants stay.`,
        params: s.GrantParams,
        response: { 204: Type.Null(), ...errorResponses() },
      },
    },
    async (request, reply) => {
      const [orgId, subjectId] = subjectOf(request.params);
      await grants.deleteGrant(request.principal!, orgId, subjectId, pathId(api.grantId, request.params.grantID!));
      return reply.status(204).send(null);
    },
  );
}
