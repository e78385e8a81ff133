import { and, asc, eq, inArray, sql, type SQL } from "drizzle-orm";
import { agentInputs } from "../../db/schema/index.js";
import { dbNow, epochMs } from "../../db/schema/columns.js";
import { rawRows, type AppDb, type Tx } from "../../platform/db/index.js";
import { notifyIn } from "../signals.js";
import { wakeupUpsert } from "../wakeups.js";
import { newUuid } from "../../platform/ids.js";

type Db = AppDb | Tx;
export type InputRow = typeof agentInputs.$inferSelect;
export type DeliveryMode = "queued" | "steering";

/** Gap left between neighbours in the backlog, so a move usually rewrites one row. */
export const RANK_STRIDE = 1024;

export interface NewInput {
  orgId: string;
  agentId: string;
  inputKind: "content" | "control" | "interaction_response" | "config_change";
  deliveryMode: DeliveryMode | "immediate";
  state?: "received" | "resolved" | "canceled";
  actorId?: string | null;
  /** The org API key that sent a content input naming no actor (its usage is counted under the key). */
  apiKeyId?: string | null;
  controlType?: string;
  interactionId?: string;
  agentConfigId?: string;
  idempotencyScope: string;
  inputIdempotencyKey?: string | null;
  requestDigest: string;
  contentBlocks: unknown[];
  inputRank?: number;
  /** The event that admits the input, for inputs written already resolved. */
  admittedEventId?: string;
}

export async function insertInput(tx: Db, input: NewInput): Promise<InputRow> {
  const resolved = input.state === "resolved";
  const [row] = await tx
    .insert(agentInputs)
    .values({
      id: newUuid(),
      orgId: input.orgId,
      agentId: input.agentId,
      state: input.state ?? "received",
      inputKind: input.inputKind,
      deliveryMode: input.deliveryMode,
      inputRank: input.inputRank ?? 0,
      actorId: input.actorId ?? null,
      apiKeyId: input.apiKeyId ?? null,
      controlType: input.controlType ?? null,
      interactionId: input.interactionId ?? null,
      agentConfigId: input.agentConfigId ?? null,
      idempotencyScope: input.idempotencyScope,
      inputIdempotencyKey: input.inputIdempotencyKey ?? null,
      requestDigest: input.requestDigest,
      contentBlocks: input.contentBlocks,
      ...(resolved ? { resolvedAt: dbNow } : {}),
      admittedEventId: input.admittedEventId ?? null,
    })
    .returning();
  return row!;
}

/**
 * Queues a content input at the back of its backlog group and marks the agent ready, in one statement
 * (the wakeup's hint is delivered on commit). The agent must be locked.
 */
export async function enqueueAndWake(tx: Tx, input: NewInput & { deliveryMode: DeliveryMode }, wakeReason: string): Promise<InputRow> {
  const row: InputRow = {
    id: newUuid(),
    orgId: input.orgId,
    agentId: input.agentId,
    state: "received",
    inputKind: "content",
    deliveryMode: input.deliveryMode,
    inputRank: 0,
    actorId: input.actorId ?? null,
    apiKeyId: input.apiKeyId ?? null,
    controlType: null,
    interactionId: null,
    agentConfigId: null,
    idempotencyScope: input.idempotencyScope,
    inputIdempotencyKey: input.inputIdempotencyKey ?? null,
    requestDigest: input.requestDigest,
    contentBlocks: input.contentBlocks,
    queuedAt: new Date(0),
    admittedEventId: null,
    resolvedAt: null,
    canceledAt: null,
  };
  const back = sql`(SELECT coalesce(max(w.input_rank) + ${RANK_STRIDE}, 0) FROM agent_inputs w
    WHERE w.agent_id = ${row.agentId} AND w.state = 'received' AND w.input_kind = 'content' AND w.delivery_mode = ${row.deliveryMode})`;
  const [written] = await rawRows<{ input_rank: number; queued_ms: number }>(
    tx,
    sql`WITH new_input AS (
        INSERT INTO agent_inputs (id, org_id, agent_id, state, input_kind, delivery_mode, input_rank, actor_id, api_key_id, idempotency_scope, input_idempotency_key, request_digest, content_blocks)
        VALUES (${row.id}, ${row.orgId}, ${row.agentId}, 'received', 'content', ${row.deliveryMode}, ${back}, ${row.actorId}, ${row.apiKeyId}, ${row.idempotencyScope},
          ${row.inputIdempotencyKey}, ${row.requestDigest}, ${JSON.stringify(row.contentBlocks)}::jsonb)
        RETURNING input_rank, queued_at
      ),
      woken AS (${wakeupUpsert(row.agentId, wakeReason)})
      SELECT input_rank::float8 AS input_rank, ${epochMs(sql`queued_at`)} AS queued_ms, (SELECT ${notifyIn.wakeup(row.agentId)} FROM woken) FROM new_input`,
  );
  return { ...row, inputRank: written!.input_rank, queuedAt: new Date(written!.queued_ms) };
}

/**
 * The INSERT of an input that is resolved as it is written (a config change, a control), admitted by
 * the event `admittedEventId`, as a CTE for the statement that appends that event.
 */
export function resolvedInputSql(row: InputRow): SQL {
  return sql`new_input AS (
    INSERT INTO agent_inputs (id, org_id, agent_id, state, input_kind, delivery_mode, actor_id, control_type, agent_config_id, idempotency_scope,
      input_idempotency_key, request_digest, content_blocks, resolved_at, admitted_event_id)
    VALUES (${row.id}, ${row.orgId}, ${row.agentId}, 'resolved', ${row.inputKind}, ${row.deliveryMode}, ${row.actorId}, ${row.controlType}, ${row.agentConfigId},
      ${row.idempotencyScope}, ${row.inputIdempotencyKey}, ${row.requestDigest}, ${JSON.stringify(row.contentBlocks)}::jsonb, ${dbNow}, ${row.admittedEventId})
  )`;
}

export async function findByKey(tx: Db, agentId: string, scope: string, key: string): Promise<InputRow | undefined> {
  const [row] = await tx
    .select()
    .from(agentInputs)
    .where(and(eq(agentInputs.agentId, agentId), eq(agentInputs.idempotencyScope, scope), eq(agentInputs.inputIdempotencyKey, key)));
  return row;
}

export async function findInput(tx: Db, agentId: string, inputId: string): Promise<InputRow | undefined> {
  const [row] = await tx.select().from(agentInputs).where(and(eq(agentInputs.agentId, agentId), eq(agentInputs.id, inputId)));
  return row;
}

const waiting = (agentId: string, mode?: DeliveryMode): SQL =>
  and(
    eq(agentInputs.agentId, agentId),
    eq(agentInputs.state, "received"),
    eq(agentInputs.inputKind, "content"),
    mode ? eq(agentInputs.deliveryMode, mode) : undefined,
  )!;

/** A group's waiting inputs in backlog order. */
export async function group(tx: Db, agentId: string, mode: DeliveryMode): Promise<InputRow[]> {
  return tx
    .select()
    .from(agentInputs)
    .where(waiting(agentId, mode))
    .orderBy(asc(agentInputs.inputRank), asc(agentInputs.queuedAt), asc(agentInputs.id));
}

/** Renumbers a group with the full stride in the given order, making room between every pair. */
export async function rebalance(tx: Db, ordered: InputRow[]): Promise<void> {
  for (const [index, input] of ordered.entries()) {
    await tx.update(agentInputs).set({ inputRank: index * RANK_STRIDE }).where(eq(agentInputs.id, input.id));
    input.inputRank = index * RANK_STRIDE;
  }
}

export async function setPlacement(tx: Db, inputId: string, mode: DeliveryMode, rank: number): Promise<void> {
  await tx.update(agentInputs).set({ deliveryMode: mode, inputRank: rank }).where(eq(agentInputs.id, inputId));
}

export async function cancelInputs(tx: Db, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.update(agentInputs).set({ state: "canceled", canceledAt: dbNow }).where(inArray(agentInputs.id, ids));
}

export async function waitingInputs(tx: Db, agentId: string, mode?: DeliveryMode): Promise<InputRow[]> {
  return tx
    .select()
    .from(agentInputs)
    .where(waiting(agentId, mode))
    .orderBy(asc(agentInputs.inputRank), asc(agentInputs.queuedAt), asc(agentInputs.id));
}

export async function markResolved(tx: Db, inputId: string, eventId: string): Promise<void> {
  await tx.update(agentInputs).set({ state: "resolved", resolvedAt: dbNow, admittedEventId: eventId }).where(eq(agentInputs.id, inputId));
}

/** Backlog order as one key: steering (0) before queued (1), then rank, queued_at, id. */
/** How many content inputs wait in the agent's backlog (the backlog index holds exactly these). */
export async function backlogCount(tx: Db, agentId: string): Promise<number> {
  const [row] = await tx
    .select({ count: sql<number>`count(*)::int` })
    .from(agentInputs)
    .where(and(eq(agentInputs.agentId, agentId), eq(agentInputs.state, "received"), eq(agentInputs.inputKind, "content")));
  return row!.count;
}

export interface BacklogPosition {
  group: 0 | 1;
  rank: number;
  queuedAt: string;
  id: string;
}

export async function backlogPage(tx: Db, agentId: string, after: BacklogPosition | undefined, limit: number): Promise<InputRow[]> {
  const groupKey = sql`(CASE WHEN ${agentInputs.deliveryMode} = 'steering' THEN 0 ELSE 1 END)`;
  const where = after
    ? sql`(${groupKey}, ${agentInputs.inputRank}, ${agentInputs.queuedAt}, ${agentInputs.id}) > (${after.group}, ${after.rank}, ${after.queuedAt}::timestamptz, ${after.id}::uuid)`
    : undefined;
  return tx
    .select()
    .from(agentInputs)
    .where(and(waiting(agentId), where))
    .orderBy(asc(groupKey), asc(agentInputs.inputRank), asc(agentInputs.queuedAt), asc(agentInputs.id))
    .limit(limit + 1);
}
