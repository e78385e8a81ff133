import { eq } from "drizzle-orm";
import { agentConfigs } from "../db/schema/index.js";
import type { AppDb, Database } from "../platform/db/index.js";
import type { ModelEndpoint, ModelRunAccess } from "../modules/models/run-access.js";
import { Lru } from "../platform/lru.js";
import { ConversationLog, type MediaLoader } from "./context.js";
import type { AgentDefinition } from "./definition.js";

/*
 * What a worker keeps between steps so a step reads only what changed (issue: "flat in conversation
 * length"). Every cache is bounded; none is needed for correctness: a miss reads the database.
 */

/** Compiled agent definitions by config id: config rows never change, so entries never go stale. */
export class DefinitionCache {
  private readonly entries = new Lru<string, AgentDefinition>(512);

  async get(db: AppDb, configId: string): Promise<AgentDefinition> {
    const cached = this.entries.get(configId);
    if (cached) return cached;
    const [config] = await db.select({ definition: agentConfigs.compiledDefinition }).from(agentConfigs).where(eq(agentConfigs.id, configId));
    this.entries.set(configId, config!.definition);
    return config!.definition;
  }
}

/**
 * Resolved provider endpoints (grant checked, credential decrypted) per project and model. Database
 * triggers announce every change to grants, provider configs and secrets (rotation included), and the
 * worker clears the cache on each, and whenever notifications may have been lost.
 */
export class EndpointCache {
  private readonly entries = new Lru<string, ModelEndpoint>(256);
  /** Bumped on every invalidation: a read that started before one must not fill the cache. */
  private generation = 0;

  constructor(private readonly access: ModelRunAccess) {}

  invalidate(): void {
    this.generation += 1;
    this.entries.clear();
  }

  async get(db: Database, orgId: string, projectId: string, model: AgentDefinition["model"]): Promise<ModelEndpoint | { refused: string }> {
    const key = `${orgId}:${projectId}:${model.configuredModelId}:${model.modelProviderConfigId}`;
    const cached = this.entries.get(key);
    if (cached) return cached;
    const generation = this.generation;
    const endpoint = await db.tx((tx) => this.access.endpointFor(tx, orgId, projectId, model));
    if (!("refused" in endpoint) && generation === this.generation) this.entries.set(key, endpoint);
    return endpoint;
  }
}

/** Per-agent conversation logs (context.ts): a step reads only the events after the last one a log holds. */
export class ConversationCache {
  private readonly logs = new Lru<string, ConversationLog>(256);

  constructor(private readonly media: MediaLoader) {}

  /** The agent's log up to `watermark`, from the cache when it can be caught up, else read anew. */
  async upTo(db: AppDb, agentId: string, watermark: number): Promise<ConversationLog> {
    const cached = this.logs.get(agentId);
    if (cached && cached.through <= watermark && (await cached.catchUp(db, watermark, this.media))) return cached;
    const log = await ConversationLog.load(db, agentId, watermark, this.media);
    this.logs.set(agentId, log);
    return log;
  }

  /** The log to extend with what a step just wrote, if this worker holds one. */
  peek(agentId: string): ConversationLog | undefined {
    return this.logs.get(agentId);
  }

  forget(agentId: string): void {
    this.logs.delete(agentId);
  }

  get mediaLoader(): MediaLoader {
    return this.media;
  }
}

export interface StepCaches {
  definitions: DefinitionCache;
  endpoints: EndpointCache;
  conversations: ConversationCache;
}

export function createStepCaches(access: ModelRunAccess, media: MediaLoader): StepCaches {
  return { definitions: new DefinitionCache(), endpoints: new EndpointCache(access), conversations: new ConversationCache(media) };
}
