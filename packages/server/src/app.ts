import type { FastifyBaseLogger } from "fastify";
import { Type } from "typebox";
import type { Config } from "./config.js";
import type { Database } from "./platform/db/index.js";
import { limitConcurrentRequests } from "./platform/http/admission.js";
import { apiDocsRoutes } from "./platform/http/api-docs.js";
import { consoleRoutes } from "./platform/http/console.js";
import { downloadRoutes } from "./modules/downloads/routes.js";
import { API_PREFIX, createHttpApp, type HttpApp } from "./platform/http/app.js";
import { AppError } from "./platform/errors.js";
import { buildServices, type Services } from "./services.js";
import type { Metrics } from "./platform/metrics.js";
import { authRoutes, identityRoutes } from "./modules/identity/routes.js";
import { orgRoutes } from "./modules/orgs/routes.js";
import { configureAccessCache } from "./modules/orgs/access-cache.js";
import { deviceLoginRoutes } from "./modules/device-login/routes.js";
import { createMemberService, memberships } from "./modules/orgs/members-service.js";
import { memberRoutes } from "./modules/orgs/members-routes.js";
import { createOrgApiKeyService } from "./modules/org-api-keys/service.js";
import { orgApiKeyRoutes } from "./modules/org-api-keys/routes.js";
import { createInvitationService } from "./modules/invitations/service.js";
import { invitationRoutes } from "./modules/invitations/routes.js";
import { secretRoutes } from "./modules/secrets/routes.js";
import { skillRoutes } from "./modules/skills/routes.js";
import { modelRoutes } from "./modules/models/routes.js";
import { createInputsService } from "./modules/inputs/service.js";
import { inputRoutes } from "./modules/inputs/routes.js";
import { createAgentsService } from "./modules/agents/service.js";
import { agentRoutes } from "./modules/agents/routes.js";
import { createInteractionsService } from "./modules/interactions/service.js";
import { interactionRoutes } from "./modules/interactions/routes.js";
import { createToolsService } from "./modules/tools/service.js";
import { toolRoutes } from "./modules/tools/routes.js";
import { createActorsService } from "./modules/actors/service.js";
import { actorRoutes } from "./modules/actors/routes.js";
import { createUsageService } from "./modules/usage/service.js";
import { usageRoutes } from "./modules/usage/routes.js";
import { createWebhooksService } from "./modules/webhooks/service.js";
import { webhookRoutes } from "./modules/webhooks/routes.js";
import { createBudgetService } from "./modules/budgets/service.js";
import { budgetRoutes } from "./modules/budgets/routes.js";
import { artifactRoutes } from "./modules/artifacts/routes.js";
import { createAgentConfigService } from "./modules/agent-configs/service.js";
import { agentConfigRoutes } from "./modules/agent-configs/routes.js";
import { createAgentProfileService } from "./modules/agent-profiles/service.js";
import { agentProfileRoutes } from "./modules/agent-profiles/routes.js";
import { createMemoryStoreService } from "./modules/memory-stores/service.js";
import { memoryStoreRoutes } from "./modules/memory-stores/routes.js";
import { toolCatalogRoutes } from "./modules/tool-catalog/routes.js";
import { createTimelineService } from "./modules/timeline/service.js";
import { createEventStreams } from "./modules/timeline/stream.js";
import { createActivityStreams } from "./modules/agents/activity-stream.js";
import { AccessWatch } from "./platform/http/access-watch.js";
import { timelineRoutes } from "./modules/timeline/routes.js";
import { createMachinesService } from "./modules/machines/service.js";
import { machineRoutes } from "./modules/machines/routes.js";
import { createOrgCredentials } from "./modules/secrets/org-credentials.js";
import { createDaemonService } from "./modules/daemon/service.js";
import { createDaemonHub } from "./modules/daemon/socket.js";
import { daemonRoutes } from "./modules/daemon/routes.js";
import { failureRoutes } from "./modules/daemon/failure-routes.js";
import { skillArchiveRoutes } from "./modules/daemon/skill-archive-routes.js";
import { createSkillInstallService } from "./modules/daemon/skill-installs.js";
import { createCapabilitySigner } from "./platform/crypto/capabilities.js";
import { loadMasterKey } from "./platform/crypto/master-key.js";
import { daemonTransferRoutes } from "./modules/daemon/transfer-routes.js";
import { createTransferService } from "./modules/daemon/transfer-service.js";
import { createMemoryPort } from "./modules/memory-stores/agent-port.js";
import { createMcpToolsService } from "./modules/mcp-servers/tools-service.js";
import { createMcpRegistryService } from "./modules/mcp-servers/registry-service.js";
import { mcpServerRoutes } from "./modules/mcp-servers/routes.js";
import { createMcpOAuthService } from "./modules/secrets/mcp-oauth-service.js";
import { mcpOAuthCallbackRoutes, mcpOAuthRoutes } from "./modules/secrets/mcp-oauth-routes.js";
import { createMcpFetch } from "./runtime/mcp/agent-client.js";
import { createInboundAcceptors } from "./modules/integrations/kinds/inbound-acceptors.js";
import { createIntegrationsService } from "./modules/integrations/service.js";
import { createIntegrationSetupService } from "./modules/integrations/setup-service.js";
import { createIntegrationOAuthService } from "./modules/integrations/oauth-service.js";
import { integrationCallbackRoutes, integrationRoutes } from "./modules/integrations/routes.js";
import { createSubscriptionsService } from "./modules/integrations/subscriptions-service.js";
import { subscriptionRoutes } from "./modules/integrations/subscriptions-routes.js";
import { createIntegrationInstallsService } from "./modules/integrations/installs-service.js";
import { integrationInstallRoutes } from "./modules/integrations/installs-routes.js";
import { createInboundReceiver } from "./modules/integrations/inbound-service.js";
import { inboundRoutes } from "./modules/integrations/inbound-routes.js";
import { createCronTriggerService } from "./modules/cron-triggers/service.js";
import { cronTriggerRoutes } from "./modules/cron-triggers/routes.js";
import { createMcpEndpointService } from "./modules/mcp-endpoint/service.js";
import { mcpEndpointRoutes } from "./modules/mcp-endpoint/routes.js";

export interface App {
  http: HttpApp;
  services: Services;
}

/** Wires every module into one HTTP app over one database. Owns no process lifecycle. */
export async function buildApp(options: { config: Config; db: Database; logger: FastifyBaseLogger | boolean }): Promise<App> {
  const { config, db } = options;
  const services = buildServices(config, db);
  const { identity, orgs, deviceLogin, secrets, models, signals, artifacts } = services;
  const { kinds, catalog } = services.integrations;
  configureAccessCache(config.authCacheTtlMs);
  // These services only answer HTTP requests; the worker and maintenance never need them.
  const orgApiKeys = createOrgApiKeyService({ db, memberships, authCacheTtlMs: config.authCacheTtlMs });
  const invitations = createInvitationService({ db, memberships });
  const agents = createAgentsService({ db, signals, artifacts, catalog });
  const inputs = createInputsService({ db, artifacts });
  const interactions = createInteractionsService({ db });
  const tools = createToolsService({ db, artifacts });
  const skillInstalls = createSkillInstallService({
    db,
    artifacts,
    skills: services.skills,
    signer: createCapabilitySigner(loadMasterKey(config), "skill-archive-download"),
    tokenSeconds: config.machines.skillDownloadTokenSeconds,
    machines: services.agentMachines,
  });
  const mcpOAuth = createMcpOAuthService({
    db,
    cipher: services.cipher,
    signer: createCapabilitySigner(loadMasterKey(config), "mcp-oauth-state"),
    publicUrl: config.publicUrl,
    fetch: createMcpFetch(config),
    timeoutMs: config.runtime.mcpConnectTimeoutMs,
  });
  const integrationOAuth = createIntegrationOAuthService({
    db,
    kinds,
    secrets,
    cipher: services.cipher,
    signer: createCapabilitySigner(loadMasterKey(config), "integration-oauth-state"),
    publicUrl: config.publicUrl,
  });
  const daemon = createDaemonService({ db, credentials: createOrgCredentials({ cipher: services.cipher }), artifacts, skillInstalls });

  const http = await createHttpApp({
    config,
    logger: options.logger,
    authenticator: {
      bearer: (kind, hash) => (kind === "personal" ? identity.authenticatePat(hash) : orgApiKeys.authenticate(hash)),
      session: (hash) => identity.authenticateSession(hash),
      daemon: (hash) => daemon.authenticate(hash),
    },
  });
  const daemonHub = createDaemonHub(services.bus, http.log);
  const accessWatch = new AccessWatch(config.streamAccessRecheckMs, http.log);
  http.addHook("onClose", async () => accessWatch.close());
  // Before the services close: sockets end their LISTEN on the bus first.
  http.addHook("preClose", async () => daemonHub.close());

  limitConcurrentRequests(http, config.maxConcurrentRequests, services.metrics.httpWaiting);
  healthRoutes(http, db);
  metricsRoutes(http, services.metrics);
  authRoutes(http, { identity, config });
  deviceLoginRoutes(http, { deviceLogin, config });
  mcpOAuthCallbackRoutes(http, { mcpOAuth });
  integrationCallbackRoutes(http, { oauth: integrationOAuth });
  // The providers' callbacks, signed by the provider, all through one receiver (docs/integrations.md).
  const receiver = createInboundReceiver({ db, kinds, secrets });
  const stopFollowingSigners = await receiver.follow(services.bus);
  http.addHook("preClose", async () => stopFollowingSigners());
  await inboundRoutes(http, {
    receiver,
    kinds,
    acceptors: createInboundAcceptors({ db, artifacts, catalog }),
    perSourceLimit: config.integrations.inboundRateLimit,
  });
  apiDocsRoutes(http);
  downloadRoutes(http, { config });
  consoleRoutes(http, undefined, config.publicUrl);
  http.addHook("onClose", async () => services.close());
  await http.register(
    async (api) => {
      identityRoutes(api, { identity });
      orgRoutes(api, { orgs });
      memberRoutes(api, { members: createMemberService({ db, holders: [secrets.refuseMemberSecretsInUse] }) });
      orgApiKeyRoutes(api, { orgApiKeys });
      invitationRoutes(api, { invitations });
      secretRoutes(api, { secrets });
      mcpOAuthRoutes(api, { mcpOAuth });
      await skillRoutes(api, { skills: services.skills });
      modelRoutes(api, { models });
      agentRoutes(api, { agents, activity: createActivityStreams({ db, signals, log: http.log, accessWatch }), db: db.read });
      inputRoutes(api, { inputs });
      interactionRoutes(api, { interactions });
      toolRoutes(api, { tools });
      actorRoutes(api, { actors: createActorsService({ db }) });
      usageRoutes(api, { usage: createUsageService({ db }) });
      webhookRoutes(api, { webhooks: createWebhooksService({ db, cipher: services.cipher, outbound: config }) });
      budgetRoutes(api, { budgets: createBudgetService({ db }) });
      artifactRoutes(api, { artifacts });
      agentConfigRoutes(api, { agentConfigs: createAgentConfigService({ db, catalog }) });
      agentProfileRoutes(api, { agentProfiles: createAgentProfileService({ db }) });
      memoryStoreRoutes(api, { memoryStores: createMemoryStoreService({ db }) });
      cronTriggerRoutes(api, { cronTriggers: createCronTriggerService({ db, catalog }) });
      toolCatalogRoutes(api);
      mcpServerRoutes(api, { tools: createMcpToolsService({ db, secrets, oauthTokens: services.oauthTokens, settings: config }), registry: createMcpRegistryService({ db }) });
      integrationRoutes(api, {
        integrations: createIntegrationsService({ db, kinds, catalog }),
        setup: createIntegrationSetupService({ db, kinds, secrets }),
        oauth: integrationOAuth,
        catalog,
      });
      subscriptionRoutes(api, { subscriptions: createSubscriptionsService({ db, kinds, catalog }) });
      integrationInstallRoutes(api, { installs: createIntegrationInstallsService({ db, kinds, oauth: integrationOAuth, publicUrl: config.publicUrl }) });
      machineRoutes(api, { machines: createMachinesService({ db, secrets: createOrgCredentials({ cipher: services.cipher }), enabledProviders: config.machines.providers }) });
      daemonRoutes(api, { daemon, hub: daemonHub });
      skillArchiveRoutes(api, { skillInstalls });
      await failureRoutes(api, { db });
      await daemonTransferRoutes(api, { transfers: createTransferService({ db, artifacts, memory: createMemoryPort({ db }) }) });
      timelineRoutes(api, { timeline: createTimelineService({ db }), streams: createEventStreams({ db, signals, subscribers: services.metrics.streamSubscribers, accessWatch }) });
      // svc as an MCP server (docs/mcp.md): the project's agents as tools, on the same services and permissions.
      mcpEndpointRoutes(api, {
        mcp: createMcpEndpointService({ db, agents, inputs, interactions, timeline: createTimelineService({ db }), signals, profiles: createAgentProfileService({ db }) }),
        publicUrl: config.publicUrl,
      });
      api.get("/openapi.json", { config: { auth: "public" } }, async () => http.swagger());
    },
    { prefix: API_PREFIX },
  );
  return { http, services };
}

/** `GET /metrics` in Prometheus' text format, and every answered request counted by its route. */
function metricsRoutes(http: HttpApp, metrics: Metrics) {
  http.addHook("onResponse", async (request, reply) => {
    const route = request.routeOptions.url ?? "unmatched";
    metrics.httpRequests.inc({ method: request.method, route, status: String(reply.statusCode) });
    metrics.httpDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });
  http.get("/metrics", { config: { auth: "public" } }, async (_request, reply) => {
    void reply.header("content-type", metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}

function healthRoutes(http: HttpApp, db: Database) {
  const Status = Type.Object({ status: Type.String() });
  http.get("/healthz", { config: { auth: "public" }, schema: { response: { 200: Status } } }, async () => ({ status: "ok" }));
  http.get("/readyz", { config: { auth: "public" }, schema: { response: { 200: Status } } }, async () => {
    try {
      await db.ping();
    } catch (err) {
      throw new AppError("service_unavailable", "database is not reachable", {}, err);
    }
    return { status: "ready" };
  });
}
