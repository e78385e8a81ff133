import type { Services } from "../app.js";
import type { Config } from "../config.js";
import type { Database } from "../platform/db/index.js";
import { createGuardedFetch } from "../platform/net/guarded-fetch.js";
import { createModelClient } from "./models/ai-sdk-client.js";
import type { ModelClient } from "./models/types.js";
import { reapExpiredLeases } from "./reaper.js";
import { startWorker, type WorkerLog } from "./worker.js";

/** Starts the agent loop's worker over the app's services; provider calls go through the SSRF guard. */
export function startAgentWorker(options: { db: Database; services: Services; config: Config; log: WorkerLog; models?: ModelClient }) {
  const { db, services, config } = options;
  const models = options.models ?? createModelClient({ fetch: createGuardedFetch(config) });
  return startWorker(
    {
      db,
      signals: services.signals,
      models,
      runAccess: services.runAccess,
      media: (agentId, artifactId) => services.artifacts.readArtifact(agentId, artifactId),
    },
    { concurrency: config.runtime.workerConcurrency, leaseSeconds: config.runtime.leaseSeconds, pollMs: config.runtime.pollMs },
    options.log,
  );
}

/** The maintenance task that turns dead workers' claims into retries. */
export function leaseReaper(db: Database, services: Services) {
  return { name: "expired-runtime-leases", run: () => reapExpiredLeases(db, services.signals) };
}
