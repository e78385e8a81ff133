import type { Config } from "./config.js";
import type { Database } from "./platform/db/index.js";
import { loadMasterKey } from "./platform/crypto/master-key.js";
import { EnvelopeCipher } from "./platform/crypto/envelope.js";
import { createRateLimiter, type RateLimiter } from "./platform/rate-limit.js";
import { createBus, type Bus } from "./platform/bus.js";
import { createBlobStore, type BlobStore } from "./platform/blobs/index.js";
import { createIdentityService, type IdentityService } from "./modules/identity/service.js";
import { createSmtpMailer } from "./modules/identity/smtp-mailer.js";
import { invitedEmails } from "./modules/invitations/service.js";
import { createOrgService, type OrgService } from "./modules/orgs/service.js";
import { refuseLastOwner } from "./modules/orgs/members-service.js";
import { createDeviceLoginService, type DeviceLoginService } from "./modules/device-login/service.js";
import { createSecretsService, type SecretsService } from "./modules/secrets/service.js";
import { createOrgCredentials } from "./modules/secrets/org-credentials.js";
import { createOAuthTokens, type OAuthTokens } from "./modules/secrets/oauth-tokens.js";
import { createMcpFetch } from "./runtime/mcp/agent-client.js";
import { createModelsService, type ModelsService } from "./modules/models/service.js";
import { createModelRunAccess, type ModelRunAccess } from "./modules/models/run-access.js";
import { createArtifactsService, type ArtifactsService } from "./modules/artifacts/service.js";
import { createSkillsService, type SkillsService } from "./modules/skills/service.js";
import { createAgentSignals, type AgentSignals } from "./runtime/signals.js";
import { createMetrics, type Metrics } from "./platform/metrics.js";
import { createAgentMachines } from "./modules/machines/agent-tools.js";
import { poolUsingSecret } from "./modules/machines/secret-users.js";
import type { AgentMachines } from "./runtime/tools/machine-tools.js";
import { createIntegrationKinds } from "./modules/integrations/kinds/index.js";
import { createKindCatalog, type KindCatalog } from "./modules/integrations/capability-schemas.js";
import type { IntegrationKinds } from "./modules/integrations/kind.js";

/**
 * The services every role shares: the HTTP app's routes, the worker and maintenance all use them.
 * Built without Fastify, so `svc worker` and `svc maintenance` start without the HTTP app.
 */
export interface Services {
  identity: IdentityService;
  orgs: OrgService;
  deviceLogin: DeviceLoginService;
  rateLimiter: RateLimiter;
  cipher: EnvelopeCipher;
  secrets: SecretsService;
  /** Access tokens of OAuth secrets for MCP servers, refreshed when near expiry. */
  oauthTokens: OAuthTokens;
  models: ModelsService;
  bus: Bus;
  signals: AgentSignals;
  runAccess: ModelRunAccess;
  artifacts: ArtifactsService;
  skills: SkillsService;
  blobs: BlobStore;
  metrics: Metrics;
  /** The machines module as the agent loop's machine tools see it. */
  agentMachines: AgentMachines;
  /**
   * The integration kinds, composed here and nowhere else: the integrations core is handed `kinds`, the
   * rest of the server (agents, agent configs, cron triggers, the agent loop) only their `catalog`.
   */
  integrations: { kinds: IntegrationKinds; catalog: KindCatalog };
  /** Releases what the services hold open (the SMTP transport); the database belongs to the caller. */
  close(): void;
}

export function buildServices(config: Config, db: Database): Services {
  const rateLimiter = createRateLimiter(db);
  const cipher = new EnvelopeCipher(loadMasterKey(config));
  const orgs = createOrgService({ db });
  const mailer = config.smtpUrl ? createSmtpMailer({ url: config.smtpUrl, from: config.mailFrom }) : null;
  const secrets = createSecretsService({ db, cipher, users: [poolUsingSecret] });
  const blobs = createBlobStore(config.blobs);
  const skills = createSkillsService({ db, blobs });
  const identity = createIdentityService({
    db,
    config,
    rateLimiter,
    mailer,
    directory: orgs,
    invitations: invitedEmails,
    accountHolders: [refuseLastOwner, skills.releaseUserSkills, secrets.refuseSecretsInUse],
  });
  const credentials = createOrgCredentials({ cipher });
  const models = createModelsService({ db, credentials, outbound: config });
  const deviceLogin = createDeviceLoginService({ db, config, rateLimiter, tokens: identity });
  const bus = createBus(db.notifications);
  const kinds = createIntegrationKinds(config);
  return {
    identity,
    orgs,
    deviceLogin,
    rateLimiter,
    cipher,
    secrets,
    oauthTokens: createOAuthTokens({ db, cipher, fetch: createMcpFetch(config), timeoutMs: config.runtime.mcpConnectTimeoutMs }),
    models,
    bus,
    signals: createAgentSignals(bus),
    runAccess: createModelRunAccess({ credentials }),
    artifacts: createArtifactsService({ db, blobs }),
    skills,
    blobs,
    metrics: createMetrics(db),
    agentMachines: createAgentMachines(),
    integrations: { kinds, catalog: createKindCatalog(kinds) },
    close: () => mailer?.close(),
  };
}
