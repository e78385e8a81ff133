import { Type } from "typebox";
import type { UserPrincipal } from "../../platform/http/auth.js";
import type { HttpApp } from "../../platform/http/app.js";
import { pageOf, pageQuery, toPage } from "../../platform/http/lists.js";
import { pathId } from "../../platform/http/params.js";
import { errorResponses, Page } from "../../platform/http/schemas.js";
import { ProjectMembershipGrant, ProjectMembershipGrantList, SetProjectMembershipRequest } from "../orgs/members-schemas.js";
import { grantView } from "../orgs/members-views.js";
import { OrgParams } from "../orgs/schemas.js";
import * as s from "./schemas.js";
import type { OrgApiKeyService } from "./service.js";
import { orgApiKeyView } from "./views.js";

const TAG = "Users and API keys";

/**
 * Organization API keys. Reads take any credential with org.manage; every change takes a browser
 * session (`auth: "session"`), so one key can never mint or escalate another.
 */
export function orgApiKeyRoutes(app: HttpApp, deps: { orgApiKeys: OrgApiKeyService }) {
  const { orgApiKeys } = deps;

  app.get(
    "/orgs/:orgID/api-keys",
    {
      schema: {
        tags: [TAG],
        operationId: "listOrgAPIKeys",
        summary: "List organization API keys",
        description: "The organization's API keys, revoked ones included. Key values are never returned.",
        params: OrgParams,
        querystring: Type.Object(pageQuery, { additionalProperties: false }),
        response: { 200: Page(s.OrgApiKey), ...errorResponses() },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      const rows = await orgApiKeys.list(request.principal!, pathId("org", request.params.orgID), page);
      return toPage(rows, page.limit, page.sort, (r) => ({ value: r.createdAt, id: r.id }), orgApiKeyView);
    },
  );

  app.post(
    "/orgs/:orgID/api-keys",
    {
      config: { auth: "session" },
      schema: {
        tags: [TAG],
        operationId: "createOrgAPIKey",
        summary: "Create an organization API key",
        description: "Mints a `svc_org_v1_\u2026` key acting for the organization with the given role. The value is in this answer only. Needs a browser session.",
        params: OrgParams,
        body: s.CreateOrgApiKeyRequest,
        response: { 201: s.CreateOrgApiKeyResponse, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const orgId = pathId("org", request.params.orgID);
      const { token, key } = await orgApiKeys.create(sessionUser(request.principal), orgId, {
        name: request.body.name,
        orgRole: request.body.org_role,
      });
      return reply.status(201).send({ token, api_key: orgApiKeyView(key) });
    },
  );

  app.get(
    "/orgs/:orgID/api-keys/:keyID",
    { schema: { tags: [TAG], operationId: "getOrgAPIKey", summary: "Get an organization API key", description: "One API key of the organization.", params: s.KeyParams, response: { 200: s.OrgApiKey, ...errorResponses() } } },
    async (request) => orgApiKeyView(await orgApiKeys.get(request.principal!, ...keyPath(request.params))),
  );

  app.patch(
    "/orgs/:orgID/api-keys/:keyID",
    {
      config: { auth: "session" },
      schema: {
        tags: [TAG],
        operationId: "updateOrgAPIKey",
        summary: "Update an organization API key",
        description: "Changes the key's name or role. Needs a browser session.",
        params: s.KeyParams,
        body: s.UpdateOrgApiKeyRequest,
        response: { 200: s.OrgApiKey, ...errorResponses(409) },
      },
    },
    async (request) => {
      const key = await orgApiKeys.update(sessionUser(request.principal), ...keyPath(request.params), {
        name: request.body.name,
        orgRole: request.body.org_role,
      });
      return orgApiKeyView(key);
    },
  );

  app.post(
    "/orgs/:orgID/api-keys/:keyID/revoke",
    {
      config: { auth: "session" },
      schema: { tags: [TAG], operationId: "revokeOrgAPIKey", summary: "Revoke an organization API key", description: "Revokes the key for good. Needs a browser session.", params: s.KeyParams, response: { 200: s.OrgApiKey, ...errorResponses() } },
    },
    async (request) => orgApiKeyView(await orgApiKeys.revoke(sessionUser(request.principal), ...keyPath(request.params))),
  );

  app.get(
    "/orgs/:orgID/api-keys/:keyID/projects",
    {
      schema: {
        tags: [TAG],
        operationId: "listOrgAPIKeyProjectAccess",
        summary: "List an API key's project roles",
        description: "The explicit per-project roles granted to one organization API key.",
        params: s.KeyParams,
        response: { 200: ProjectMembershipGrantList, ...errorResponses() },
      },
    },
    async (request) => ({ data: (await orgApiKeys.listGrants(request.principal!, ...keyPath(request.params))).map(grantView) }),
  );

  app.put(
    "/orgs/:orgID/api-keys/:keyID/projects/:projectID",
    {
      config: { auth: "session" },
      schema: {
        tags: [TAG],
        operationId: "setOrgAPIKeyProjectRole",
        summary: "Set an API key's project role",
        description: "Grants or changes an organization API key's role on one project. Needs a browser session.",
        params: s.KeyProjectParams,
        body: SetProjectMembershipRequest,
        response: { 200: ProjectMembershipGrant, ...errorResponses(409) },
      },
    },
    async (request) => {
      const [orgId, keyId] = keyPath(request.params);
      const projectId = pathId("project", request.params.projectID);
      return grantView(await orgApiKeys.setGrant(sessionUser(request.principal), orgId, keyId, projectId, request.body.role));
    },
  );

  app.delete(
    "/orgs/:orgID/api-keys/:keyID/projects/:projectID",
    {
      config: { auth: "session" },
      schema: {
        tags: [TAG],
        operationId: "removeOrgAPIKeyProjectRole",
        summary: "Remove an API key's project role",
        description: "Removes an organization API key's explicit role on one project. Needs a browser session.",
        params: s.KeyProjectParams,
        response: { 204: Type.Null(), ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const [orgId, keyId] = keyPath(request.params);
      await orgApiKeys.removeGrant(sessionUser(request.principal), orgId, keyId, pathId("project", request.params.projectID));
      return reply.status(204).send(null);
    },
  );
}

function keyPath(params: { orgID: string; keyID: string }): [string, string] {
  return [pathId("org", params.orgID), pathId("orgApiKey", params.keyID)];
}

/** Routes marked `auth: "session"` only run for a signed-in browser user. */
function sessionUser(principal: unknown): UserPrincipal {
  return principal as UserPrincipal;
}
