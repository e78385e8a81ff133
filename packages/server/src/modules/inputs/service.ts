import type { Static } from "typebox";
import { AppError, invalidRequest, notFound, stateConflict } from "../../platform/errors.js";
import { isUniqueViolation, type Database, type Tx } from "../../platform/db/index.js";
import type { Principal } from "../../platform/http/auth.js";
import { decodeOpaqueCursor, encodeOpaqueCursor } from "../../platform/http/lists.js";
import { isUuid } from "../../platform/ids.js";
import { jsonDigest } from "../../platform/json.js";
import { markWakeup } from "../../runtime/wakeups.js";
import { resolveInputActor } from "../actors/service.js";
import { requireAgent } from "../agents/access.js";
import { requireProject } from "../orgs/access.js";
import type { ArtifactsService, PreparedBlocks } from "../artifacts/service.js";
import { cancelOpenInteractions } from "../interactions/cancel.js";
import { lockAgent, type AgentRow } from "../../runtime/store/journal.js";
import { placeInput } from "./ranks.js";
import type { CreateAgentInputRequest } from "./schemas.js";
import * as store from "../../runtime/store/inputs.js";

export const CONTENT_SCOPE = "content_input";

export interface InputsDeps {
  db: Database;
  artifacts: ArtifactsService;
}

export interface ContentInput {
  deliveryMode: store.DeliveryMode;
  actorId: string | null;
  /** The organization API key that sent an input naming no actor: its usage is counted under the key. */
  apiKeyId?: string | null;
  prepared: PreparedBlocks;
  key: string | null;
  digest: string;
}

/**
 * Adds a content input to the backlog of a locked, active agent and wakes the worker. Shared by
 * send-input and by launch (the opening message). `last`: the enqueue is the transaction's last
 * statement, and takes its COMMIT along (`Tx.commitWith`).
 */
export async function enqueueContentInput(tx: Tx, deps: InputsDeps, agent: AgentRow, input: ContentInput, last = false): Promise<store.InputRow> {
  await deps.artifacts.recordArtifacts(tx, input.prepared, { orgId: agent.orgId, projectId: agent.projectId, agentId: agent.id });
  const wakeReason = input.deliveryMode === "steering" ? "steering_input" : "queued_input";
  const row = {
    orgId: agent.orgId,
    agentId: agent.id,
    inputKind: "content" as const,
    deliveryMode: input.deliveryMode,
    actorId: input.actorId,
    apiKeyId: input.actorId === null ? (input.apiKeyId ?? null) : null,
    idempotencyScope: CONTENT_SCOPE,
    inputIdempotencyKey: input.key,
    requestDigest: input.digest,
    contentBlocks: input.prepared.blocks,
  };
  const enqueue = () => store.enqueueAndWake(tx, row, wakeReason);
  return last ? tx.commitWith(enqueue) : enqueue();
}

/** The organization API key a principal is, if it is one: an input it sends naming no actor is counted under it. */
export function sendingKey(principal: Principal): string | null {
  return principal.kind === "org_api_key" ? principal.keyId : null;
}

export function assertActive(agent: AgentRow): void {
  if (agent.state !== "active") throw stateConflict("the agent is archived");
}

type SendBody = Static<typeof CreateAgentInputRequest>;

export function createInputsService(deps: InputsDeps) {
  const { db } = deps;

  /** A replay answers with the stored input; the same key with another request is a conflict. */
  function replay(existing: store.InputRow, digest: string): { input: store.InputRow; created: false } {
    if (existing.requestDigest !== digest) {
      throw new AppError("idempotency_key_conflict", "this Idempotency-Key was used with a different input");
    }
    return { input: existing, created: false };
  }

  async function sendInput(
    principal: Principal,
    orgId: string,
    projectId: string,
    agentId: string,
    body: SendBody,
    key: string | undefined,
  ): Promise<{ input: store.InputRow; created: boolean }> {
    const mode = body.delivery_mode ?? "queued";
    if (body.cancel_open_interactions && mode !== "steering") {
      throw invalidRequest("cancel_open_interactions is only valid with delivery_mode steering");
    }
    // The project's rules come from the access cache; the agent itself is read once, when it is locked.
    await requireProject(db.read, principal, orgId, projectId, "agent.operate");
    const digest = jsonDigest({ mode, actor: body.actor ?? null, blocks: body.content_blocks, cancel: body.cancel_open_interactions ?? false });
    // Media goes to the blob store before the transaction: no network or disk waits while the agent is locked.
    const prepared = await deps.artifacts.prepareContentBlocks(body.content_blocks, new Set(["text", "media"]));
    try {
      return await db.tx(async (tx) => {
        const locked = await lockAgent(tx, agentId);
        if (!locked || locked.orgId !== orgId || locked.projectId !== projectId) throw notFound("agent");
        assertActive(locked);
        if (key) {
          const existing = await store.findByKey(tx, agentId, CONTENT_SCOPE, key);
          if (existing) return replay(existing, digest);
        }
        const actor = await resolveInputActor(tx, principal, orgId, projectId, body.actor);
        // The steering input supersedes the interactions it cancels: it is their resolved_by_input_id.
        const cancels = mode === "steering" && body.cancel_open_interactions === true;
        const input = await enqueueContentInput(tx, deps, locked, { deliveryMode: mode, actorId: actor?.id ?? null, apiKeyId: sendingKey(principal), prepared, key: key ?? null, digest }, !cancels);
        if (cancels) await cancelOpenInteractions(tx, locked, input.id);
        return { input, created: true };
      });
    } catch (err) {
      if (key && isUniqueViolation(err, "agent_inputs_idempotency")) {
        const existing = await store.findByKey(db.read, agentId, CONTENT_SCOPE, key);
        if (existing) return replay(existing, digest);
      }
      throw err;
    }
  }

  async function backlog(principal: Principal, orgId: string, projectId: string, agentId: string, page: { limit: number; cursor?: string }) {
    await requireAgent(db.read, principal, orgId, projectId, agentId, "agent.read");
    const after = page.cursor ? decodeBacklogCursor(page.cursor) : undefined;
    const rows = await store.backlogPage(db.read, agentId, after, page.limit);
    const hasMore = rows.length > page.limit;
    const data = hasMore ? rows.slice(0, page.limit) : rows;
    const last = data.at(-1);
    return { rows: data, nextCursor: hasMore && last ? encodeBacklogCursor(last) : null };
  }

  /**
   * Runs a backlog change on a waiting content input under the agent lock. Once the worker has taken
   * the input (or it was canceled) it can no longer change: 409.
   */
  async function onWaitingInput(
    principal: Principal,
    orgId: string,
    projectId: string,
    agentId: string,
    inputId: string,
    change: (tx: Tx, agent: AgentRow, input: store.InputRow) => Promise<void>,
  ): Promise<void> {
    await requireAgent(db.read, principal, orgId, projectId, agentId, "agent.operate");
    await db.tx(async (tx) => {
      const agent = await lockAgent(tx, agentId);
      if (!agent) throw notFound("agent");
      const input = await store.findInput(tx, agentId, inputId);
      if (!input || input.inputKind !== "content") throw notFound("agent input");
      if (input.state !== "received") throw stateConflict(`the input is ${input.state}; only a waiting input can change`);
      await change(tx, agent, input);
    });
  }

  return {
    sendInput,
    backlog,

    cancelInput: (principal: Principal, orgId: string, projectId: string, agentId: string, inputId: string) =>
      onWaitingInput(principal, orgId, projectId, agentId, inputId, async (tx, _agent, input) => {
        await store.cancelInputs(tx, [input.id]);
      }),

    moveInput: (
      principal: Principal,
      orgId: string,
      projectId: string,
      agentId: string,
      inputId: string,
      move: { position: "front" | "back" | "before" | "after"; anchorId?: string },
    ) =>
      onWaitingInput(principal, orgId, projectId, agentId, inputId, async (tx, agent, input) => {
        await placeInput(tx, agent.id, input, input.deliveryMode as store.DeliveryMode, move);
        await markWakeup(tx, agent.id, "backlog_changed");
      }),

    promoteToSteering: (
      principal: Principal,
      orgId: string,
      projectId: string,
      agentId: string,
      inputId: string,
      options: { cancelOpenInteractions: boolean },
    ) =>
      onWaitingInput(principal, orgId, projectId, agentId, inputId, async (tx, agent, input) => {
        if (input.deliveryMode !== "queued") throw stateConflict("the input is already steering");
        assertActive(agent);
        if (options.cancelOpenInteractions) await cancelOpenInteractions(tx, agent, input.id);
        await placeInput(tx, agent.id, input, "steering", { position: "back" });
        await markWakeup(tx, agent.id, "steering_input");
      }),

    demoteToQueued: (principal: Principal, orgId: string, projectId: string, agentId: string, inputId: string) =>
      onWaitingInput(principal, orgId, projectId, agentId, inputId, async (tx, agent, input) => {
        if (input.deliveryMode !== "steering") throw stateConflict("the input is already queued");
        await placeInput(tx, agent.id, input, "queued", { position: "back" });
      }),
  };
}

export type InputsService = ReturnType<typeof createInputsService>;

function encodeBacklogCursor(row: store.InputRow): string {
  const position: store.BacklogPosition = {
    group: row.deliveryMode === "steering" ? 0 : 1,
    rank: row.inputRank,
    queuedAt: row.queuedAt.toISOString(),
    id: row.id,
  };
  return encodeOpaqueCursor(position);
}

function decodeBacklogCursor(cursor: string): store.BacklogPosition {
  const { group, rank, queuedAt, id } = decodeOpaqueCursor(cursor);
  if ((group === 0 || group === 1) && Number.isSafeInteger(rank) && typeof queuedAt === "string" && !Number.isNaN(Date.parse(queuedAt)) && isUuid(id)) {
    return { group, rank: rank as number, queuedAt, id };
  }
  throw invalidRequest("cursor is not valid");
}
