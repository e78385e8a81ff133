import { Type } from "typebox";
import type { HttpApp } from "../../platform/http/app.js";
import type { UserPrincipal } from "../../platform/http/auth.js";
import { cspNonce, escapeHtml, htmlDocument, sendHtml } from "../../platform/http/html.js";
import { pageOf, toPage } from "../../platform/http/lists.js";
import { pathId, projectPath } from "../../platform/http/params.js";
import { errorResponses, Page } from "../../platform/http/schemas.js";
import { ProjectParams } from "../orgs/schemas.js";
import { OAUTH_CALLBACK_PATH, type IntegrationOAuthService, type OAuthOutcome } from "./oauth-service.js";
import * as s from "./schemas.js";
import type { IntegrationsService } from "./service.js";
import type { IntegrationPath, IntegrationSetupService } from "./setup-service.js";
import type { IntegrationRow } from "./store.js";
import { integrationView } from "./views.js";
import type { KindCatalog } from "./capability-schemas.js";

const NEWEST_FIRST = "-created_at" as const;

export interface IntegrationRouteDeps {
  integrations: IntegrationsService;
  setup: IntegrationSetupService;
  oauth: IntegrationOAuthService;
  catalog: KindCatalog;
}

/** The Integrations API (spec: Integrations endpoints); the OAuth callback is `integrationCallbackRoutes`. */
export function integrationRoutes(app: HttpApp, deps: IntegrationRouteDeps) {
  const { integrations, setup, oauth } = deps;
  const view = (row: IntegrationRow, options?: { runtimeFailure?: boolean }) => integrationView(row, deps.catalog, options);
  const page = (rows: IntegrationRow[], limit: number) => toPage(rows, limit, NEWEST_FIRST, (r) => ({ value: r.createdAt, id: r.id }), (r) => view(r));

  app.get(
    "/orgs/:orgID/integrations",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listOrgIntegrations",
        summary: "List the organization's integrations",
        description:
          "Integrations of every project of the organization the caller can read, each with its project_id; created_at " +
          "descending, then id descending. `name` is a case-insensitive glob over the integration name.",
        params: s.OrgParams,
        querystring: s.ListIntegrationsQuery,
        response: { 200: Page(s.Integration), ...errorResponses() },
      },
    },
    async (request) => {
      const query = pageOf(request.query, NEWEST_FIRST);
      const rows = await integrations.listInOrg(request.principal!, pathId("org", request.params.orgID), { name: request.query.name, page: query });
      return page(rows, query.limit);
    },
  );

  app.get(
    "/orgs/:orgID/projects/:projectID/integrations",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listIntegrations",
        summary: "List a project's integrations",
        description: "The project's integrations (project read); created_at descending, then id descending.",
        params: ProjectParams,
        querystring: s.ListIntegrationsQuery,
        response: { 200: Page(s.Integration), ...errorResponses() },
      },
    },
    async (request) => {
      const query = pageOf(request.query, NEWEST_FIRST);
      const rows = await integrations.listInProject(request.principal!, ...projectPath(request.params), { name: request.query.name, page: query });
      return page(rows, query.limit);
    },
  );

  app.post(
    "/orgs/:orgID/projects/:projectID/integrations",
    {
      schema: {
        tags: [s.TAG],
        operationId: "createIntegration",
        summary: "Create an integration",
        description:
          "Creates a disconnected integration (project manage). The name is unique in the project (409) and, like the kind, " +
          "immutable. Connect it with …/setup or …/oauth/setup.",
        params: ProjectParams,
        body: s.CreateIntegrationRequest,
        response: { 201: s.Integration, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const { name, integration_kind, settings = {} } = request.body;
      const row = await integrations.create(request.principal!, ...projectPath(request.params), { name, kind: integration_kind, settings });
      return reply.status(201).send(view(row));
    },
  );

  app.get(
    "/orgs/:orgID/projects/:projectID/integration-definitions",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listIntegrationDefinitions",
        summary: "List integration kinds",
        description: "Each integration kind this svc implements, with its capability catalog (project read).",
        params: ProjectParams,
        response: { 200: s.IntegrationDefinitions, ...errorResponses() },
      },
    },
    async (request) => {
      const kinds = await integrations.definitions(request.principal!, ...projectPath(request.params));
      return { data: kinds.map((kind) => ({ integration_kind: kind.name as "slack_thread", description: kind.description, capabilities: kind.capabilities })) };
    },
  );

  app.get(
    "/orgs/:orgID/projects/:projectID/integrations/:integrationID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "getIntegration",
        summary: "Get an integration",
        description: "The integration (project read), with runtime_failure while its runtime is waiting to retry the provider.",
        params: s.IntegrationParams,
        response: { 200: s.Integration, ...errorResponses() },
      },
    },
    async (request) => view(await integrations.get(request.principal!, ...pathOf(request.params)), { runtimeFailure: true }),
  );

  app.put(
    "/orgs/:orgID/projects/:projectID/integrations/:integrationID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "updateIntegration",
        summary: "Update an integration's settings",
        description:
          "Replaces only the settings (project manage), validated against capabilities.settings.input_schema; credentials, " +
          "identity and setup_revision stay. Name and integration_kind are accepted only on create.",
        params: s.IntegrationParams,
        body: s.UpdateIntegrationRequest,
        response: { 200: s.Integration, ...errorResponses(409) },
      },
    },
    async (request) => view(await integrations.updateSettings(request.principal!, ...pathOf(request.params), request.body.settings)),
  );

  app.delete(
    "/orgs/:orgID/projects/:projectID/integrations/:integrationID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "deleteIntegration",
        summary: "Delete an integration",
        description:
          "Deletes the integration with its subscriptions and releases its credential reference (project manage). Agents, " +
          "their history and messages already posted in the provider stay.",
        params: s.IntegrationParams,
        response: { 204: Type.Null(), ...errorResponses() },
      },
    },
    async (request, reply) => {
      await integrations.remove(request.principal!, ...pathOf(request.params));
      return reply.status(204).send(null);
    },
  );

  app.post(
    "/orgs/:orgID/projects/:projectID/integrations/:integrationID/setup",
    {
      config: { auth: "user" },
      schema: {
        tags: [s.TAG],
        operationId: "setupIntegration",
        summary: "Set up an integration's credentials",
        description:
          "Connects the integration with a credential secret the project can use (project manage; a user session or personal " +
          "token). The provider confirms the credential's identity before anything is saved: a claimed provider_tenant_id or " +
          "provider_account_ref it contradicts is a 400. A stale expected_setup_revision, or another provider account than " +
          "the integration was connected to, is a 409. Success sets state active and bumps setup_revision.",
        params: s.IntegrationParams,
        body: s.SetupIntegrationRequest,
        response: { 200: s.Integration, ...errorResponses(409, 429, 502) },
      },
    },
    async (request) => {
      const body = request.body;
      const row = await setup.setup(request.principal!, integrationPath(request.params), {
        expectedSetupRevision: body.expected_setup_revision,
        providerTenantId: body.provider_tenant_id,
        providerAccountRef: body.provider_account_ref,
        providerAgentDisplayName: body.provider_agent_display_name,
        credentialSecretId: pathId("secret", body.credential_secret_id),
        providerConfig: body.provider_config,
      });
      return view(row);
    },
  );

  app.post(
    "/orgs/:orgID/projects/:projectID/integrations/:integrationID/reconnect",
    {
      config: { auth: "user" },
      schema: {
        tags: [s.TAG],
        operationId: "reconnectIntegration",
        summary: "Reconnect an integration",
        description:
          "Connects the integration again with the credential it kept, read as it is now (a rotated secret is picked up), after " +
          "the provider confirms the same identity (project manage; a user session or personal token). Bumps setup_revision.",
        params: s.IntegrationParams,
        body: s.ReconnectIntegrationRequest,
        response: { 200: s.Integration, ...errorResponses(409, 429, 502) },
      },
    },
    async (request) => view(await setup.reconnect(request.principal!, integrationPath(request.params), request.body.expected_setup_revision)),
  );

  app.post(
    "/orgs/:orgID/projects/:projectID/integrations/:integrationID/disconnect",
    {
      schema: {
        tags: [s.TAG],
        operationId: "disconnectIntegration",
        summary: "Disconnect an integration",
        description:
          "Stops provider access (project manage). The provider identity, the credential reference and the subscriptions stay " +
          "for a reconnect; events that arrive meanwhile are not replayed. Bumps setup_revision unless already disconnected.",
        params: s.IntegrationParams,
        response: { 200: s.Integration, ...errorResponses() },
      },
    },
    async (request) => view(await setup.disconnect(request.principal!, integrationPath(request.params))),
  );

  app.post(
    "/orgs/:orgID/projects/:projectID/integrations/:integrationID/oauth/setup",
    {
      config: { auth: "user" },
      schema: {
        tags: [s.TAG],
        operationId: "startIntegrationOAuthInstall",
        summary: "Start an integration's OAuth install",
        description:
          "Starts installing the provider app through its consent page (project manage; a user session or personal token). " +
          "Configure redirect_uri, events_url and actions_url in the provider app, then open oauth_url before expires_at in a " +
          "browser signed in to svc as the same user. The integration is connected when its last_oauth_flow_id is flow_id.",
        params: s.IntegrationParams,
        body: s.OAuthSetupRequest,
        response: { 201: s.IntegrationOAuthSetup, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const { return_to, ...app } = request.body;
      const started = await oauth.start(request.principal as UserPrincipal, integrationPath(request.params), app, return_to);
      return reply.status(201).send(started);
    },
  );
}

/**
 * The provider's redirect after a consent page, outside the versioned API. It needs the browser session
 * of the user who started the flow. It answers with a redirect to the flow's return_to, or a short page.
 */
export function integrationCallbackRoutes(app: HttpApp, deps: { oauth: IntegrationOAuthService }) {
  app.get(
    OAUTH_CALLBACK_PATH,
    { config: { auth: "session" }, schema: { hide: true, querystring: s.OAuthCallbackQuery } },
    async (request, reply) => {
      const outcome = await deps.oauth.complete(request.principal!, request.query);
      if (outcome.returnTo !== null) {
        const separator = outcome.returnTo.includes("?") ? "&" : "?";
        const result = outcome.ok ? "integration_oauth=success" : `integration_oauth_error=${encodeURIComponent(outcome.reason)}`;
        return reply.status(303).header("location", `${outcome.returnTo}${separator}${result}`).send();
      }
      const nonce = cspNonce();
      return sendHtml(reply, outcome.ok ? 200 : 400, outcomePage(outcome, nonce), nonce);
    },
  );
}

function outcomePage(outcome: OAuthOutcome, nonce: string): string {
  const body = outcome.ok
    ? "<main><h1>Connected</h1><p>The integration is connected. You can close this window.</p></main>"
    : `<main><h1>Not connected</h1><p class="error">The install did not complete (${escapeHtml(outcome.reason)}). Start the setup again.</p></main>`;
  return htmlDocument({ title: outcome.ok ? "Integration connected" : "Integration not connected", nonce, css: "", body });
}

function pathOf(params: { orgID: string; projectID: string; integrationID: string }): [string, string, string] {
  return [...projectPath(params), pathId("integration", params.integrationID)];
}

function integrationPath(params: { orgID: string; projectID: string; integrationID: string }): IntegrationPath {
  const [orgId, projectId, integrationId] = pathOf(params);
  return { orgId, projectId, integrationId };
}
