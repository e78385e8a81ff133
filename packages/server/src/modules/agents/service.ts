import type { SQL } from "drizzle-orm";
import type { Static } from "typebox";
import { AppError, conflict, invalidRequest, notFound } from "../../platform/errors.js";
import { isUniqueViolation, settledValue, type Database, type Tx } from "../../platform/db/index.js";
import type { Principal } from "../../platform/http/auth.js";
import type { PageRequest } from "../../platform/http/lists.js";
import { newUuid } from "../../platform/ids.js";
import { jsonDigest } from "../../platform/json.js";
import { dropMcpConnectionsOutsideSql } from "../../runtime/mcp/connections.js";
import { turnIsSettled } from "../../runtime/claim.js";
import { readTurnProgress, type TurnProgress } from "../../runtime/store/claim.js";
import type { AgentSignals } from "../../runtime/signals.js";
import { clearWakeup, markWakeup } from "../../runtime/wakeups.js";
import { resolveInputActor } from "../actors/service.js";
import { compileConfig, findConfig, type AgentConfigRow, type ConfigSource } from "../agent-configs/service.js";
import { findProfile } from "../agent-profiles/service.js";
import type { ArtifactsService, PreparedBlocks } from "../artifacts/service.js";
import { assertActive, enqueueContentInput, sendingKey } from "../inputs/service.js";
import * as inputs from "../../runtime/store/inputs.js";
import { requireProject } from "../orgs/access.js";
import { appendEvent, lockAgent, type AgentRow } from "../../runtime/store/journal.js";
import { requireAgent } from "./access.js";
import { bindMachines, releaseBindings } from "../machines/bindings.js";
import { launchIssues } from "../agent-configs/machines-section.js";
import type { CreateAgentRequest } from "./schemas.js";
import { stopCurrentWork, type StopResult } from "../../runtime/stop.js";
import * as store from "./store.js";
import type { ActivityStatus } from "./activity.js";
import { attachAtLaunch, endAgentSubscriptions } from "../integrations/subscriptions-service.js";
import type { KindCatalog } from "../integrations/capability-schemas.js";
import { decodeId } from "../../platform/ids.js";
import { MAX_DEPTH } from "../../runtime/tools/catalog-delegation.js";

const CONFIG_SCOPE = "agent_config_change";

export interface AgentsDeps {
  db: Database;
  signals: AgentSignals;
  artifacts: ArtifactsService;
  /** The integration kinds' catalogs: configs and subscriptions at launch are checked against them. */
  catalog: KindCatalog;
}

type LaunchBody = Static<typeof CreateAgentRequest>;

export function createAgentsService(deps: AgentsDeps) {
  const { db, signals, catalog } = deps;

  async function launch(principal: Principal, orgId: string, projectId: string, body: LaunchBody, key: string | undefined) {
    // Access first: a project the caller cannot see is a 404 whatever the body says (issue 9, tenant matrix).
    await requireProject(db.read, principal, orgId, projectId, "agent.operate");
    if (!body.config && !body.profile) throw invalidRequest("give the config to launch with, or a profile whose current config to use");
    if (key) {
      const existing = await store.findByIdempotencyKey(db.read, projectId, key);
      if (existing) return { created: false as const, agent: await store.withModel(db.read, existing) };
    }
    const message = body.message === undefined ? undefined : await deps.artifacts.prepareContentBlocks([{ type: "text", text: body.message }], new Set(["text"]));
    try {
      return await db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "agent.operate");
        const actor = message ? await resolveInputActor(tx, principal, orgId, projectId, undefined) : undefined;
        const launched = await launchInTx(tx, deps, {
          orgId,
          projectId,
          configId: body.config,
          profileId: body.profile,
          name: body.name,
          message: message && body.message !== undefined ? { text: body.message, prepared: message, actorId: actor?.id ?? null, apiKeyId: sendingKey(principal) } : undefined,
          key: key ?? null,
          attach: async (agent) => {
            for (const [index, attachment] of (body.subscriptions ?? []).entries()) {
              const integrationId = decodeId("integration", attachment.integration_id);
              await attachAtLaunch(tx, catalog, principal, agent, { integrationId, conversation: attachment.conversation }, `/subscriptions/${index}`);
            }
          },
        });
        return { created: true as const, ...launched };
      });
    } catch (err) {
      if (key && isUniqueViolation(err, "agents_project_idempotency_key")) {
        const existing = await store.findByIdempotencyKey(db.read, projectId, key);
        if (existing) return { created: false as const, agent: await store.withModel(db.read, existing) };
      }
      throw err;
    }
  }

  async function changeConfig(
    principal: Principal,
    orgId: string,
    projectId: string,
    agentId: string,
    body: ConfigSource & { expectedCurrentConfigId?: string },
    key: string | undefined,
  ) {
    await requireProject(db.read, principal, orgId, projectId, "agent.operate");
    // One transaction under the agent lock: an unknown agent is a 404 before the source is compiled, so
    // it writes no config row, and the change is appended with what the compile found.
    const digestOf = (configId: string) => jsonDigest({ config: configId, expected: body.expectedCurrentConfigId ?? null });
    try {
      return await db.tx(async (tx) => {
        // The lock, the compile's reads, the replay lookup and the turn read do not depend on each other's
        // answers, so they are sent together: the connection runs them in this order, each statement
        // after the one before it (the turn read therefore sees everything committed under the lock),
        // and the transaction waits for the database once instead of four times. Their answers are then
        // judged in the order the checks always had: an unknown agent is a 404 before a bad source is a
        // 400, and a source compiled for an unknown agent is rolled back with the transaction.
        const [locked, compiled, replay, summary] = await Promise.allSettled([
          lockAgent(tx, agentId),
          compileConfig(tx, catalog, orgId, projectId, body),
          key ? inputs.findByKey(tx, agentId, CONFIG_SCOPE, key) : undefined,
          readTurnProgress(tx, agentId),
        ]);
        const agent = settledValue(locked);
        if (!agent || agent.orgId !== orgId || agent.projectId !== projectId) throw notFound("agent");
        const { row: config } = settledValue(compiled);
        const digest = digestOf(config.id);
        const existing = settledValue(replay);
        if (existing) return replayConfigChange(existing, digest, config);
        assertActive(agent);
        if (body.expectedCurrentConfigId && body.expectedCurrentConfigId !== agent.currentConfigId) {
          throw conflict("the agent's current config is not expected_current_config_id; read the agent and try again");
        }
        const { input, event } = await tx.commitWith(() => appendConfigChange(tx, agent, config, key ?? null, digest, settledValue(summary)));
        return { config, input, eventId: event.id };
      });
    } catch (err) {
      if (key && isUniqueViolation(err, "agent_inputs_idempotency")) {
        const { row: config } = await db.tx((tx) => compileConfig(tx, catalog, orgId, projectId, body));
        return replayConfigChange((await inputs.findByKey(db.read, agentId, CONFIG_SCOPE, key))!, digestOf(config.id), config);
      }
      throw err;
    }
  }

  function replayConfigChange(existing: inputs.InputRow, digest: string, config: Awaited<ReturnType<typeof compileConfig>>["row"]) {
    if (existing.requestDigest !== digest || existing.agentConfigId !== config.id) {
      throw new AppError("idempotency_key_conflict", "this Idempotency-Key was used with a different config change");
    }
    return { config, input: existing, eventId: existing.admittedEventId! };
  }

  async function cancel(principal: Principal, orgId: string, projectId: string, agentId: string, actorParams: Parameters<typeof resolveInputActor>[4]) {
    await requireAgent(db.read, principal, orgId, projectId, agentId, "agent.operate");
    return db.tx(async (tx): Promise<StopResult & { agent: AgentRow; actorId: string | null }> => {
      const agent = await lockAgent(tx, agentId);
      if (!agent) throw notFound("agent");
      const actor = await resolveInputActor(tx, principal, orgId, projectId, actorParams);
      const result = await stopCurrentWork(tx, signals, agent, actor?.id ?? null);
      // A coordinator's delegates stop with it (docs/delegation.md), parent before child.
      await eachDescendant(tx, agent, (child) => stopCurrentWork(tx, signals, child, actor?.id ?? null));
      return { ...result, agent, actorId: actor?.id ?? null };
    });
  }

  /** Idempotent: an archived agent is returned unchanged. */
  async function archive(principal: Principal, orgId: string, projectId: string, agentId: string) {
    await requireAgent(db.read, principal, orgId, projectId, agentId, "agent.operate");
    return db.tx(async (tx) => {
      const agent = await lockAgent(tx, agentId);
      if (!agent) throw notFound("agent");
      if (agent.state === "archived") return store.withModel(tx, agent);
      const actor = await resolveInputActor(tx, principal, orgId, projectId, undefined);
      const archived = await archiveLocked(tx, agent, actor?.id ?? null);
      // A coordinator's delegates are archived with it (docs/delegation.md), parent before child.
      await eachDescendant(tx, agent, async (child) => void (await archiveLocked(tx, child, actor?.id ?? null)));
      return store.withModel(tx, archived);
    });
  }

  async function archiveLocked(tx: Tx, agent: AgentRow, actorId: string | null): Promise<AgentRow> {
    await stopCurrentWork(tx, signals, agent, actorId);
    await releaseBindings(tx, { agentId: agent.id }, "The agent was archived.");
    await endAgentSubscriptions(tx, agent.id);
    await inputs.cancelInputs(tx, (await inputs.waitingInputs(tx, agent.id)).map((i) => i.id));
    const archived = await store.archive(tx, agent.id);
    await clearWakeup(tx, agent.id);
    // A coordinator waiting on this delegate answers that it was archived (docs/delegation.md).
    if (agent.parentAgentId) await markWakeup(tx, agent.parentAgentId, "delegate_archived");
    return archived;
  }

  return {
    launch,
    changeConfig,
    cancel,
    archive,

    async get(principal: Principal, orgId: string, projectId: string, agentId: string) {
      const { agent } = await requireAgent(db.read, principal, orgId, projectId, agentId, "agent.read");
      return store.withModel(db.read, agent);
    },

    async list(
      principal: Principal,
      orgId: string,
      projectId: string,
      query: { name?: string; profileId?: string; parentAgentId?: string; state?: "active" | "archived"; activity?: ActivityStatus[]; page: PageRequest },
    ) {
      await requireProject(db.read, principal, orgId, projectId, "agent.read");
      return store.listAgents(db.read, { orgId, projectId, ...query });
    },

    /** The project whose agents a caller may follow: those who may list them. */
    async streamScope(principal: Principal, orgId: string, projectId: string) {
      await requireProject(db.read, principal, orgId, projectId, "agent.read");
      return { orgId, projectId };
    },
  };
}

export type AgentsService = ReturnType<typeof createAgentsService>;

/**
 * Runs `each` on every active descendant of a locked agent, depth first, locking each child after its
 * parent (the order delegation's tools keep too). A tree is at most MAX_DEPTH deep.
 */
async function eachDescendant(tx: Tx, agent: AgentRow, each: (child: AgentRow) => Promise<unknown>): Promise<void> {
  if (agent.delegationDepth >= MAX_DEPTH) return;
  for (const id of await store.activeChildIds(tx, agent.id)) {
    const child = await lockAgent(tx, id);
    if (!child || child.state !== "active") continue;
    await each(child);
    await eachDescendant(tx, child, each);
  }
}

export interface LaunchInput {
  orgId: string;
  projectId: string;
  /** The config to launch with, or else the profile whose current config to use. */
  configId?: string;
  profileId?: string;
  name?: string;
  /** The opening message, prepared (`ArtifactsService.prepareContentBlocks`) before the transaction. */
  message?: { text: string; prepared: PreparedBlocks; actorId: string | null; apiKeyId?: string | null };
  key: string | null;
  /** Attaches the launch request's integration subscriptions once the agent exists, inside the launch. */
  attach?: (agent: AgentRow) => Promise<void>;
  /** The coordinator launching this agent with `delegate` (delegates.ts); absent for a top-level agent. */
  parent?: AgentRow;
}

/**
 * Launches an agent inside the caller's transaction, access already checked: the launch route, and a
 * cron trigger's firing, whose launch commits with the trigger's advance. A missing profile or config
 * is a 404.
 */
export async function launchInTx(tx: Tx, deps: Pick<AgentsDeps, "db" | "artifacts">, input: LaunchInput) {
  const { orgId, projectId } = input;
  const profile = input.profileId ? await findProfile(tx, orgId, projectId, input.profileId) : undefined;
  if (input.profileId && !profile) throw notFound("agent profile");
  const config = await findConfig(tx, orgId, projectId, input.configId ?? profile!.currentConfigId);
  if (!config) throw notFound("agent config");
  const agent = await store.insertAgent(tx, {
    id: newUuid(),
    orgId,
    projectId,
    name: input.name ?? profile?.name ?? "",
    currentConfigId: config.id,
    agentProfileId: profile?.id ?? null,
    idempotencyKey: input.key,
    ...(input.parent
      ? { parentAgentId: input.parent.id, rootAgentId: input.parent.rootAgentId ?? input.parent.id, delegationDepth: input.parent.delegationDepth + 1 }
      : {}),
  });
  // The launch config is event 1, the opening event of turn 1 (reference design-brief.md §3.2).
  await appendConfigChange(tx, agent, config, `launch:${agent.id}`, "launch");
  const bindings = await bindMachines(tx, agent, config.compiledDefinition, (problems) => {
    throw launchIssues(config, problems);
  });
  await input.attach?.(agent);
  let opening: inputs.InputRow | undefined;
  if (input.message) {
    const { text, prepared, actorId, apiKeyId } = input.message;
    const digest = jsonDigest({ mode: "queued", actor: null, blocks: [{ type: "text", text }], cancel: false });
    opening = await enqueueContentInput(tx, deps, agent, { deliveryMode: "queued", actorId, apiKeyId, prepared, key: null, digest });
  }
  return { agent: await store.withModel(tx, agent), config, input: opening, bindings };
}

/**
 * Appends a config change to the current turn while it is still running (`summary` says, read under the
 * agent lock), or opens a new turn with it (no summary: the launch), in one statement with its input
 * (resolved as written), the agent's current config and the removal of MCP connections the new config
 * no longer names. The new config applies from the next model call on.
 */
async function appendConfigChange(tx: Tx, agent: AgentRow, config: AgentConfigRow, key: string | null, digest: string, summary?: TurnProgress) {
  const eventId = newUuid();
  const input: inputs.InputRow = {
    id: newUuid(),
    orgId: agent.orgId,
    agentId: agent.id,
    state: "resolved",
    inputKind: "config_change",
    deliveryMode: "immediate",
    inputRank: 0,
    actorId: null,
    apiKeyId: null,
    controlType: null,
    interactionId: null,
    agentConfigId: config.id,
    idempotencyScope: CONFIG_SCOPE,
    inputIdempotencyKey: key,
    requestDigest: digest,
    contentBlocks: [],
    queuedAt: new Date(0),
    admittedEventId: eventId,
    resolvedAt: null,
    canceledAt: null,
  };
  const joinTurn = summary?.turnId && !turnIsSettled(summary) ? summary.turnId : null;
  const event = await appendEvent(
    tx,
    agent,
    {
      id: eventId,
      turnId: joinTurn ?? newUuid(),
      kind: "agent_input",
      agentInputId: input.id,
      opening: !joinTurn,
      semantic: !joinTurn,
      idempotencyKey: `agent_input:${input.id}`,
      configId: config.id,
    },
    { opensTurn: !joinTurn, alongside: [inputs.resolvedInputSql(input), dropMcpConnectionsOutsideSql(agent.id, config.compiledDefinition)] },
  );
  // Both times are the statement's clock, as the event's is.
  return { input: { ...input, queuedAt: event.createdAt, resolvedAt: event.createdAt }, event };
}

/**
 * For the org overview, inside its transaction: the most recently updated active agents among
 * `projectIds`, a subquery of the projects the caller may read agents in (`projectsAllowing`).
 */
export function recentAgents(tx: Tx, orgId: string, projectIds: SQL, limit: number): Promise<store.AgentWithModel[]> {
  return store.listRecentActive(tx, orgId, projectIds, limit);
}
