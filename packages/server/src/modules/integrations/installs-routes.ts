import { Type } from "typebox";
import type { HttpApp } from "../../platform/http/app.js";
import type { UserPrincipal } from "../../platform/http/auth.js";
import { pageOf, sortValue, toPage } from "../../platform/http/lists.js";
import { pathId, projectPath } from "../../platform/http/params.js";
import { errorResponses, iso, Page } from "../../platform/http/schemas.js";
import { decodeId, encodeId } from "../../platform/ids.js";
import { TAG } from "../agent-configs/schemas.js";
import { ProjectParams } from "../orgs/schemas.js";
import * as s from "./installs-schemas.js";
import type { IntegrationInstallsService, ProfilePath } from "./installs-service.js";
import { IntegrationOAuthSetup } from "./schemas.js";
import type { IntegrationRow } from "./store.js";

/**
 * The reference's profile-bound Slack routes, so its SDK and CLI work unchanged: views over the
 * Integration resource (installs-service.ts). The OAuth callback is the integrations' own.
 */
export function integrationInstallRoutes(app: HttpApp, deps: { installs: IntegrationInstallsService }) {
  const { installs } = deps;

  app.get(
    "/orgs/:orgID/projects/:projectID/integration-installs",
    {
      schema: {
        tags: [TAG],
        operationId: "listIntegrationInstalls",
        summary: "List integration installs",
        description:
          "The project's connected Slack integrations whose launcher offers an agent profile, one item each (project read). By " +
          "default created_at descending, then id descending; the list's logical name is provider_agent_display_name.",
        params: ProjectParams,
        querystring: s.ListIntegrationInstallsQuery,
        response: { 200: Page(s.IntegrationInstall), ...errorResponses() },
      },
    },
    async (request) => {
      const { name, agent_profile_id: profile, oauth_flow_id: flow } = request.query;
      const page = pageOf(request.query);
      const filter = { name, profile, oauthFlowId: flow === undefined ? undefined : decodeId("integrationOAuthFlow", flow) };
      const rows = await installs.list(request.principal!, ...projectPath(request.params), filter, page);
      const position = (r: IntegrationRow) => ({ value: sortValue(page.sort, { name: r.providerAgentDisplayName, createdAt: r.createdAt, updatedAt: r.updatedAt }), id: r.id });
      return toPage(rows, page.limit, page.sort, position, (r) => installView(r, profile));
    },
  );

  app.delete(
    "/orgs/:orgID/projects/:projectID/integration-installs/:integrationInstallID",
    {
      schema: {
        tags: [TAG],
        operationId: "deleteIntegrationInstall",
        summary: "Delete integration install",
        description:
          "Deletes the integration behind the install (project manage), as DELETE …/integrations/{integrationID} does: its " +
          "subscriptions go and its credential reference is released. Agents and profiles stay. Nothing is revoked at Slack.",
        params: s.InstallParams,
        response: { 204: Type.Null(), ...errorResponses() },
      },
    },
    async (request, reply) => {
      await installs.remove(request.principal!, ...projectPath(request.params), pathId("integrationInstall", request.params.integrationInstallID));
      return reply.status(204).send(null);
    },
  );

  app.post(
    "/orgs/:orgID/projects/:projectID/agent-profiles/:agentProfileID/integration-oauth/setup",
    {
      config: { auth: "user" },
      schema: {
        tags: [TAG],
        operationId: "createIntegrationOAuthSetup",
        summary: "Create integration OAuth setup",
        description:
          "Starts installing an existing Slack app for the profile (project manage; a user session or personal token): creates a " +
          "disconnected slack_thread integration whose launcher offers only this profile and answers its OAuth install, as " +
          "…/integrations/{integrationID}/oauth/setup does. The install is listed once the callback connects it.",
        params: s.ProfileSetupParams,
        body: s.CreateIntegrationOAuthSetupRequest,
        response: { 201: IntegrationOAuthSetup, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const { client_id, client_secret, signing_secret, return_to } = request.body;
      const started = await installs.setupWithCredentials(request.principal as UserPrincipal, profilePath(request.params), { client_id, client_secret, signing_secret }, return_to);
      return reply.status(201).send(started);
    },
  );

  app.post(
    "/orgs/:orgID/projects/:projectID/agent-profiles/:agentProfileID/slack-setup",
    {
      config: { auth: "user" },
      schema: {
        tags: [TAG],
        operationId: "createSlackSetup",
        summary: "Create Slack app and OAuth setup",
        description:
          "Creates a Slack app from svc's manifest with the caller's app configuration token (Slack's apps.manifest.create), then " +
          "starts its OAuth install for the profile as …/integration-oauth/setup does (project manage; a user session or " +
          "personal token). A token or app name Slack refuses is a 400; nothing is saved then.",
        params: s.ProfileSetupParams,
        body: s.CreateSlackSetupRequest,
        response: { 201: s.SlackSetup, ...errorResponses(409, 429, 502) },
      },
    },
    async (request, reply) => {
      const { app_name, app_configuration_token, return_to } = request.body;
      const input = { appName: app_name, configurationToken: app_configuration_token, returnTo: return_to };
      return reply.status(201).send(await installs.slackSetup(request.principal as UserPrincipal, profilePath(request.params), input));
    },
  );
}

/** The reference's IntegrationInstall for a connected Slack integration (installs-store.ts guarantees the identity). */
function installView(row: IntegrationRow, askedProfile: string | undefined) {
  const offered = (row.settings["launcher"] as { profiles: string[] }).profiles;
  return {
    id: encodeId("integrationInstall", row.id),
    org_id: encodeId("org", row.orgId),
    project_id: encodeId("project", row.projectId),
    agent_profile_id: askedProfile ?? offered[0]!,
    provider: "slack",
    integration_kind: row.kind,
    connection_mode: "events_api",
    state: row.state === "active" ? ("active" as const) : ("disabled" as const),
    provider_tenant_id: row.providerTenantId!,
    provider_account_ref: row.providerAccountRef!,
    provider_agent_display_name: row.providerAgentDisplayName,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

function profilePath(params: { orgID: string; projectID: string; agentProfileID: string }): ProfilePath {
  const [orgId, projectId] = projectPath(params);
  return { orgId, projectId, profileId: pathId("agentProfile", params.agentProfileID), publicProfileId: params.agentProfileID };
}
