import { Type } from "typebox";
import type { UserPrincipal } from "../../platform/http/auth.js";
import type { HttpApp } from "../../platform/http/app.js";
import { pageOf, pageQuery, toPage } from "../../platform/http/lists.js";
import { pathId } from "../../platform/http/params.js";
import { errorResponses, Page } from "../../platform/http/schemas.js";
import { OrgParams } from "../orgs/schemas.js";
import * as s from "./schemas.js";
import type { InvitationService } from "./service.js";
import { invitationView } from "./views.js";

const ORG_TAG = "Organizations and projects";
const USER_TAG = "Users and API keys";
const PageQuery = Type.Object(pageQuery, { additionalProperties: false });

/** Invitations: managed by an org's managers, answered by the invited user. */
export function invitationRoutes(app: HttpApp, deps: { invitations: InvitationService }) {
  const { invitations } = deps;

  app.post(
    "/orgs/:orgID/invitations",
    {
      schema: {
        tags: [ORG_TAG],
        operationId: "createOrgInvitation",
        summary: "Invite someone to the organization",
        description: "Invites an email address with a role; the invited user accepts or declines after signing in.",
        params: OrgParams,
        body: s.CreateInvitationRequest,
        response: { 201: s.Invitation, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const orgId = pathId("org", request.params.orgID);
      const invitation = await invitations.create(request.principal!, orgId, { email: request.body.email, role: request.body.role });
      return reply.status(201).send(invitationView(invitation));
    },
  );

  app.get(
    "/orgs/:orgID/invitations",
    {
      schema: {
        tags: [ORG_TAG],
        operationId: "listOrgInvitations",
        summary: "List the organization's invitations",
        description: "The organization's invitations.",
        params: OrgParams,
        querystring: PageQuery,
        response: { 200: Page(s.Invitation), ...errorResponses() },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      const rows = await invitations.listForOrg(request.principal!, pathId("org", request.params.orgID), page);
      return toPage(rows, page.limit, page.sort, (r) => ({ value: r.createdAt, id: r.id }), invitationView);
    },
  );

  app.delete(
    "/orgs/:orgID/invitations/:invitationID",
    {
      schema: {
        tags: [ORG_TAG],
        operationId: "deleteOrgInvitation",
        summary: "Withdraw an invitation",
        description: "Deletes an invitation of the organization.",
        params: s.OrgInvitationParams,
        response: { 204: Type.Null(), ...errorResponses() },
      },
    },
    async (request, reply) => {
      const orgId = pathId("org", request.params.orgID);
      await invitations.revoke(request.principal!, orgId, pathId("invitation", request.params.invitationID));
      return reply.status(204).send(null);
    },
  );

  app.get(
    "/invitations",
    {
      config: { auth: "user" },
      schema: {
        tags: [USER_TAG],
        operationId: "listPendingInvitations",
        summary: "List my pending invitations",
        description: "Invitations addressed to the signed-in user's email that are still open.",
        querystring: PageQuery,
        response: { 200: Page(s.Invitation), ...errorResponses() },
      },
    },
    async (request) => {
      // The invitee's own list is oldest first, as the spec orders it.
      const page = pageOf(request.query, "created_at");
      const rows = await invitations.listMine(userOf(request.principal), page);
      return toPage(rows, page.limit, page.sort, (r) => ({ value: r.createdAt, id: r.id }), invitationView);
    },
  );

  app.post(
    "/invitations/:invitationID/accept",
    {
      config: { auth: "user" },
      schema: {
        tags: [USER_TAG],
        operationId: "acceptInvitation",
        summary: "Accept an invitation",
        description: "Joins the inviting organization with the invitation's role.",
        params: s.InvitationParams,
        response: { 200: s.Invitation, ...errorResponses(409) },
      },
    },
    async (request) =>
      invitationView(await invitations.accept(userOf(request.principal), pathId("invitation", request.params.invitationID))),
  );

  app.post(
    "/invitations/:invitationID/decline",
    {
      config: { auth: "user" },
      schema: {
        tags: [USER_TAG],
        operationId: "declineInvitation",
        summary: "Decline an invitation",
        description: "Declines an invitation addressed to the signed-in user.",
        params: s.InvitationParams,
        response: { 200: s.Invitation, ...errorResponses() },
      },
    },
    async (request) =>
      invitationView(await invitations.decline(userOf(request.principal), pathId("invitation", request.params.invitationID))),
  );
}

/** Routes marked `auth: "user"` only run for a user principal. */
function userOf(principal: unknown): UserPrincipal {
  return principal as UserPrincipal;
}
