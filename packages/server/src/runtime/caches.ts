import { eq } from "drizzle-orm";
import { agentConfigs } from "../db/schema/index.js";
import type { AppDb, Database, Tx } from "../platform/db/index.js";
import type { ModelEndpoint, ModelRunAccess } from "../modules/models/run-access.js";
import { TtlCache } from "../platform/ttl-cache.js";
import { ConversationLog, LAUNCH_CONFIG_SEQUENCE, type ConversationRows, type MediaLoader, type TimelineFacts } from "./context.js";
import type { AgentDefinition } from "./definition.js";

/*
 * What a worker keeps between steps so a step reads only what changed (issue: "flat in conversation
 * length"). Every cache is bounded; none is needed for correctness: a miss reads the database. The claim
 * fills the definition, endpoint and conversation a model call needs inside its own transaction
 * (`prepareModelCall`), so a cold worker's step commits no more often than a warm one's (issue 34).
 */

/** Compiled agent definitions by config id: config rows never change, so entries never go stale. */
export class DefinitionCache {
  private readonly entries = new TtlCache<string, AgentDefinition>(Number.POSITIVE_INFINITY, 512);

  async get(db: AppDb, configId: string): Promise<AgentDefinition> {
    const cached = this.entries.get(configId);
    if (cached) return cached;
    const [config] = await db.select({ definition: agentConfigs.compiledDefinition }).from(agentConfigs).where(eq(agentConfigs.id, configId));
    this.entries.set(configId, config!.definition, this.entries.version());
    return config!.definition;
  }
}

/** An endpoint, or why the call cannot be made (a refusal is never cached). */
type Resolved = ModelEndpoint | { refused: string };

/**
 * Resolved provider endpoints (grant checked, credential decrypted) per project and model. Database
 * triggers announce every change to grants, provider configs and secrets (rotation included), and the
 * worker clears the cache on each, and whenever notifications may have been lost.
 */
export class EndpointCache {
  // A read that started before an invalidation does not fill the cache (the cache's version).
  private readonly entries = new TtlCache<string, ModelEndpoint>(Number.POSITIVE_INFINITY, 256);

  constructor(private readonly access: ModelRunAccess) {}

  invalidate(): void {
    this.entries.clear();
  }

  /** The endpoint from the cache, else read in a transaction of its own. */
  get(db: Database, orgId: string, projectId: string, model: AgentDefinition["model"]): Promise<Resolved> {
    return this.cachedOr(orgId, projectId, model, (read) => db.tx(read));
  }

  /** The endpoint from the cache, else read in the caller's transaction `tx`. */
  getIn(tx: Tx, orgId: string, projectId: string, model: AgentDefinition["model"]): Promise<Resolved> {
    return this.cachedOr(orgId, projectId, model, (read) => read(tx));
  }

  private async cachedOr(orgId: string, projectId: string, model: AgentDefinition["model"], run: (read: (tx: Tx) => Promise<Resolved>) => Promise<Resolved>): Promise<Resolved> {
    const key = `${orgId}:${projectId}:${model.configuredModelId}:${model.modelProviderConfigId}`;
    const cached = this.entries.get(key);
    if (cached) return cached;
    const since = this.entries.version();
    const endpoint = await run((tx) => this.access.endpointFor(tx, orgId, projectId, model));
    if (!("refused" in endpoint)) this.entries.set(key, endpoint, since);
    return endpoint;
  }
}

/** Rows a claim read for an agent's log (`ConversationCache.prime`), waiting for the step to load their media. */
type Primed = { kind: "load"; rows: ConversationRows } | { kind: "catch_up"; log: ConversationLog; through: number; facts: TimelineFacts; watermark: number };

/** Per-agent conversation logs (context.ts): a step reads only the events after the last one a log holds. */
export class ConversationCache {
  private readonly logs = new TtlCache<string, ConversationLog>(Number.POSITIVE_INFINITY, 256);
  private readonly primed = new TtlCache<string, Primed>(Number.POSITIVE_INFINITY, 256);

  constructor(private readonly media: MediaLoader) {}

  /**
   * Reads in the claim's transaction `tx` the rows that bring the agent's log up to `through`, the last
   * event before what the claim is about to admit: a worker that has not stepped the agent yet (after a
   * restart, say) reads the conversation there instead of in commits of its own. The media those rows
   * name are loaded by the step (`upTo`, `appendAdmitted`), outside the transaction, as the file tools
   * read bytes outside it. A current log reads nothing, nor does a fresh agent (nothing but its launch
   * config): its conversation starts with the inputs the claim admits.
   */
  async prime(tx: Tx, agentId: string, through: number): Promise<void> {
    const cached = this.logs.get(agentId);
    if (cached?.through === through || (!cached && through === LAUNCH_CONFIG_SEQUENCE)) return;
    if (cached && cached.through < through) {
      const facts = await cached.readAfter(tx, through);
      if (facts) return void this.primed.set(agentId, { kind: "catch_up", log: cached, through: cached.through, facts, watermark: through }, this.primed.version());
    }
    this.primed.set(agentId, { kind: "load", rows: await ConversationLog.readRows(tx, agentId, through) }, this.primed.version());
  }

  /** Applies what the claim read for the agent, loading the media it names. */
  private async applyPrimed(agentId: string): Promise<void> {
    const primed = this.primed.get(agentId);
    if (!primed) return;
    this.primed.delete(agentId);
    if (primed.kind === "load") this.logs.set(agentId, await ConversationLog.fromRows(agentId, primed.rows, this.media), this.logs.version());
    else if (this.logs.get(agentId) === primed.log) await primed.log.applyAfter(primed.facts, primed.through, primed.watermark, this.media);
  }

  /** The agent's log up to `watermark`, from the cache when it can be caught up, else read anew. */
  async upTo(db: AppDb, agentId: string, watermark: number): Promise<ConversationLog> {
    await this.applyPrimed(agentId);
    const cached = this.logs.get(agentId);
    if (cached && cached.through <= watermark && (await cached.catchUp(db, watermark, this.media))) return cached;
    const log = await ConversationLog.load(db, agentId, watermark, this.media);
    this.logs.set(agentId, log, this.logs.version());
    return log;
  }

  /**
   * Inputs the step's claim admitted, added to the agent's log when it directly follows what the log holds.
   * Inputs admitted right after the launch config start a log: nothing before them is part of the
   * conversation, so a fresh agent's first step reads none.
   */
  async appendAdmitted(agentId: string, inputs: Array<{ sequence: number; contentBlocks: unknown[] }>): Promise<void> {
    await this.applyPrimed(agentId);
    let log = this.logs.get(agentId);
    if (!log && inputs[0]?.sequence === LAUNCH_CONFIG_SEQUENCE + 1) {
      log = ConversationLog.afterLaunch(agentId);
      this.logs.set(agentId, log, this.logs.version());
    }
    await log?.appendInputs(inputs, this.media);
  }

  /** The output the step recorded, likewise. */
  appendRecorded(agentId: string, ...output: Parameters<ConversationLog["appendOutput"]>): void {
    this.logs.get(agentId)?.appendOutput(...output);
  }

  forget(agentId: string): void {
    this.logs.delete(agentId);
    this.primed.delete(agentId);
  }
}

export interface StepCaches {
  definitions: DefinitionCache;
  endpoints: EndpointCache;
  conversations: ConversationCache;
}

/** What `claimNext` asks of the worker before it starts a model call (see `prepareModelCall`). */
export type ModelCallPreparation = (tx: Tx, agent: { id: string; orgId: string; projectId: string; currentConfigId: string; nextEventSequence: number }) => Promise<void>;

/**
 * Fills the agent's definition, endpoint and conversation into the caches where they are missing, in the
 * claim's transaction `tx`: a cold worker's first step then reads them without a commit of its own, and a
 * warm worker's claim runs no statement more. A refused endpoint is not cached: the step reads it again and
 * records the refusal. An invalidation that comes between the claim and the step makes the step read anew.
 */
export function prepareModelCall(caches: StepCaches): ModelCallPreparation {
  return async (tx, agent) => {
    const definition = await caches.definitions.get(tx, agent.currentConfigId);
    await caches.endpoints.getIn(tx, agent.orgId, agent.projectId, definition.model);
    await caches.conversations.prime(tx, agent.id, agent.nextEventSequence - 1);
  };
}

export function createStepCaches(access: ModelRunAccess, media: MediaLoader): StepCaches {
  return { definitions: new DefinitionCache(), endpoints: new EndpointCache(access), conversations: new ConversationCache(media) };
}
