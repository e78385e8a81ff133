import { Type } from "typebox";
import type { HttpApp } from "../../platform/http/app.js";
import { GrantSort, namedPageQuery, pageOf, sortValue, toPage } from "../../platform/http/lists.js";
import { pathId } from "../../platform/http/params.js";
import { errorResponses, Page } from "../../platform/http/schemas.js";
import * as s from "./members-schemas.js";
import type { MemberService } from "./members-service.js";
import { grantView, memberView } from "./members-views.js";
import { OrgParams, OrganizationMembership } from "./schemas.js";
import { membershipView } from "./views.js";

const TAG = "Organizations and projects";

/** Org members and their explicit project roles. */
export function memberRoutes(app: HttpApp, deps: { members: MemberService }) {
  const { members } = deps;

  app.get(
    "/orgs/:orgID/members",
    {
      schema: {
        tags: [TAG],
        operationId: "listOrgMembers",
        summary: "List organization members",
        description: "The organization's members with their roles.",
        params: OrgParams,
        // Members have a creation time only, so the sort is the reference's created-resource sort.
        querystring: Type.Object({ ...namedPageQuery, sort: Type.Optional(GrantSort) }, { additionalProperties: false }),
        response: { 200: Page(s.OrgMember), ...errorResponses() },
      },
    },
    async (request) => {
      const { limit, sort, cursor } = pageOf(request.query);
      const rows = await members.listMembers(request.principal!, pathId("org", request.params.orgID), {
        limit,
        sort,
        cursor,
        name: request.query.name,
      });
      return toPage(rows, limit, sort, (r) => ({ value: sortValue(sort, { name: r.displayName, createdAt: r.createdAt }), id: r.membershipId }), memberView);
    },
  );

  app.patch(
    "/orgs/:orgID/members/:userID",
    {
      schema: {
        tags: [TAG],
        operationId: "updateOrgMember",
        summary: "Change a member's role",
        description: "Sets a member's organization role. Only owners make owners or change an owner's role; the last owner cannot step down (409).",
        params: s.MemberParams,
        body: s.UpdateOrgMemberRequest,
        response: { 200: OrganizationMembership, ...errorResponses(409) },
      },
    },
    async (request) => {
      const [orgId, userId] = memberPath(request.params);
      return membershipView(await members.updateMemberRole(request.principal!, orgId, userId, request.body.role));
    },
  );

  app.delete(
    "/orgs/:orgID/members/:userID",
    {
      schema: { tags: [TAG], operationId: "removeOrgMember", summary: "Remove a member", description: "Removes a user from the organization; anyone may leave. The last owner cannot be removed (409).", params: s.MemberParams, response: { 204: Type.Null(), ...errorResponses(409) } },
    },
    async (request, reply) => {
      await members.removeMember(request.principal!, ...memberPath(request.params));
      return reply.status(204).send(null);
    },
  );

  app.get(
    "/orgs/:orgID/members/:userID/projects",
    {
      schema: {
        tags: [TAG],
        operationId: "listMemberProjectAccess",
        summary: "List a member's project roles",
        description: "The explicit per-project roles granted to one member.",
        params: s.MemberParams,
        response: { 200: s.ProjectMembershipGrantList, ...errorResponses() },
      },
    },
    async (request) => ({ data: (await members.listMemberGrants(request.principal!, ...memberPath(request.params))).map(grantView) }),
  );

  app.put(
    "/orgs/:orgID/members/:userID/projects/:projectID",
    {
      schema: {
        tags: [TAG],
        operationId: "setMemberProjectAccess",
        summary: "Set a member's project role",
        description: "Grants or changes a member's role on one project.",
        params: s.MemberProjectParams,
        body: s.SetProjectMembershipRequest,
        response: { 200: s.ProjectMembershipGrant, ...errorResponses(409) },
      },
    },
    async (request) => {
      const [orgId, userId] = memberPath(request.params);
      const projectId = pathId("project", request.params.projectID);
      return grantView(await members.setMemberGrant(request.principal!, orgId, userId, projectId, request.body.role));
    },
  );

  app.delete(
    "/orgs/:orgID/members/:userID/projects/:projectID",
    {
      schema: {
        tags: [TAG],
        operationId: "removeMemberProjectAccess",
        summary: "Remove a member's project role",
        description: "Removes a member's explicit role on one project; organization-wide access stays.",
        params: s.MemberProjectParams,
        response: { 204: Type.Null(), ...errorResponses() },
      },
    },
    async (request, reply) => {
      const [orgId, userId] = memberPath(request.params);
      await members.removeMemberGrant(request.principal!, orgId, userId, pathId("project", request.params.projectID));
      return reply.status(204).send(null);
    },
  );
}

function memberPath(params: { orgID: string; userID: string }): [string, string] {
  return [pathId("org", params.orgID), pathId("user", params.userID)];
}
