import type { Services } from "../services.js";
import type { Config } from "../config.js";
import type { Database } from "../platform/db/index.js";
import { createGuardedFetch } from "../platform/net/guarded-fetch.js";
import { createAgentMcpClient } from "./mcp/agent-client.js";
import { createModelClient } from "./models/ai-sdk-client.js";
import { storableModelClient } from "./models/storable-client.js";
import { tracedModelClient } from "./models/traced-client.js";
import type { ModelClient } from "./models/types.js";
import { createStepCaches } from "./caches.js";
import { reapExpiredLeases } from "./reaper.js";
import { sweepSkillInstalls } from "./tools/skill.js";
import { startWorker, type WorkerLog } from "./worker.js";
import { createIntegrationToolRunner } from "../modules/integrations/tool-runner.js";
import { createAgentDelegates } from "../modules/agents/delegates.js";
import { createMemoryPort } from "../modules/memory-stores/agent-port.js";

/** Starts the agent loop's worker over the shared services; provider and MCP calls go through the SSRF guard. */
export function startAgentWorker(options: { db: Database; services: Pick<Services, "signals" | "runAccess" | "artifacts" | "secrets" | "oauthTokens" | "skills" | "metrics" | "agentMachines" | "integrations">; config: Config; log: WorkerLog; models?: ModelClient }) {
  const { db, services, config } = options;
  const guardedFetch = createGuardedFetch(config);
  const models = tracedModelClient(storableModelClient(options.models ?? createModelClient({ fetch: guardedFetch, responseTimeoutMs: config.runtime.modelResponseTimeoutMs })));
  const mcpClient = createAgentMcpClient(config);
  return startWorker(
    {
      db,
      signals: services.signals,
      models,
      caches: createStepCaches(services.runAccess, (agentId, artifactId) => services.artifacts.readArtifact(agentId, artifactId)),
      mcp: {
        client: mcpClient,
        projectSecret: (tx, orgId, projectId, secretId) => services.secrets.resolvePayload(tx, orgId, projectId, secretId),
        oauthToken: (orgId, projectId, secretId, rejected) => services.oauthTokens.accessToken(orgId, projectId, secretId, rejected),
      },
      artifacts: services.artifacts,
      skills: services.skills,
      machines: services.agentMachines,
      kinds: services.integrations.catalog,
      delegates: createAgentDelegates({ db, artifacts: services.artifacts }),
      skillInstallSeconds: config.machines.skillInstallTimeoutSeconds,
      integrationTools: createIntegrationToolRunner({ db, kinds: services.integrations.kinds, secrets: services.secrets, artifacts: services.artifacts }),
      memory: createMemoryPort({ db }),
    },
    { concurrency: config.runtime.workerConcurrency, leaseSeconds: config.runtime.leaseSeconds, pollMs: config.runtime.pollMs, metrics: services.metrics },
    options.log,
  );
}

/** The maintenance task that turns dead workers' claims into retries. */
export function leaseReaper(db: Database, services: Pick<Services, "signals" | "metrics">) {
  return {
    name: "expired-runtime-leases",
    run: async () => {
      const reaped = await reapExpiredLeases(db, services.signals);
      services.metrics.leasesReaped.inc(reaped);
      return reaped;
    },
  };
}

/** The maintenance task that ends skill installs past their deadline and completes their `skill` calls. */
export function skillInstallDeadlines(db: Database, services: Pick<Services, "skills" | "artifacts" | "agentMachines">) {
  return {
    name: "skill-install-deadlines",
    run: () => sweepSkillInstalls({ db, skills: services.skills, artifacts: services.artifacts, machines: services.agentMachines }),
  };
}
