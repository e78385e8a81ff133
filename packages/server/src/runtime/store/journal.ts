import { desc, eq, sql, type SQL } from "drizzle-orm";
import { agentEvents, agents, agentTurns } from "../../db/schema/index.js";
import { dbNow, epochMs } from "../../db/schema/columns.js";
import { rawRows } from "../../platform/db/index.js";
import { builtOnce } from "../../platform/db/prepared.js";
import type { Tx } from "../../platform/db/index.js";
import { newUuid } from "../../platform/ids.js";
import { notifyIn } from "../signals.js";

/*
 * Writing an agent's timeline. Every function here runs inside a transaction that has locked the
 * agent's row with `lockAgent` first (DESIGN.md rule 1): that lock is what makes one writer per
 * timeline true, and the counter on the row makes sequences dense and in commit order.
 */

export type AgentRow = typeof agents.$inferSelect;
export type TurnRow = typeof agentTurns.$inferSelect;
export type EventRow = typeof agentEvents.$inferSelect;
export type EventKind = "agent_input" | "model_output" | "tool_result" | "context_checkpoint" | "budget_exceeded";

const agentForUpdate = builtOnce((db) => db.select().from(agents).where(eq(agents.id, sql.placeholder("agentId"))).for("update").prepare("svc_lock_agent"));

/** Locks the agent's row for the rest of the transaction; undefined when it does not exist. */
export async function lockAgent(tx: Tx, agentId: string): Promise<AgentRow | undefined> {
  const [agent] = await agentForUpdate(tx).execute({ agentId });
  return agent;
}

/** Opens the agent's next turn (its events are appended separately; the first one opens it). */
export async function openTurn(tx: Tx, agentId: string): Promise<TurnRow> {
  const [turn] = await tx
    .insert(agentTurns)
    .values({
      id: newUuid(),
      agentId,
      turnSequence: sql`(SELECT coalesce(max(${agentTurns.turnSequence}), 0) + 1 FROM ${agentTurns} WHERE ${agentTurns.agentId} = ${agentId})`,
    })
    .returning();
  return turn!;
}

export async function latestTurn(tx: Tx, agentId: string): Promise<TurnRow | undefined> {
  const [turn] = await tx.select().from(agentTurns).where(eq(agentTurns.agentId, agentId)).orderBy(desc(agentTurns.turnSequence)).limit(1);
  return turn;
}

export interface NewEvent {
  turnId: string;
  kind: EventKind;
  agentInputId?: string;
  modelOutputId?: string;
  toolCallId?: string;
  contextCheckpointId?: string;
  /** The event's own payload, for a kind that points at no other row (`budget_exceeded`). */
  payload?: Record<string, unknown>;
  opening?: boolean;
  /** Semantic events are the ones a conversation preview shows (reference design-brief.md §2.8). */
  semantic: boolean;
  idempotencyKey?: string;
  /**
   * What the event means for the turn's model work: a content input asks the model to answer (tool
   * results and checkpoints always do), a cancel is the turn's stop boundary.
   */
  marks?: "prompt" | "stop";
  /** The event's id when it must be known before the append (an input that records it as admitted). */
  id?: string;
  /** A config change event makes this config the agent's current one, in the same statement. */
  configId?: string;
}

export interface AppendOptions {
  /** The event opens a new turn (with the id `event.turnId`), written in the same statement. */
  opensTurn?: boolean;
  /** Further CTEs written in the same statement (`name AS (…)`), such as the input the event admits. */
  alongside?: SQL[];
  /** Further hints the statement sends on commit (`notifyIn` expressions), after the event's own. */
  hints?: SQL[];
}

/**
 * Appends one event at the agent's next sequence, advances the counter and the turn's bookkeeping,
 * and signals followers on commit, all in one statement. `agent` must be the row `lockAgent` returned;
 * its counter is advanced in place so several appends in one transaction stay consistent.
 */
export async function appendEvent(tx: Tx, agent: AgentRow, event: NewEvent, options: AppendOptions = {}): Promise<EventRow> {
  const row = newEventRow(agent, event);
  const prompt = event.marks === "prompt" || event.kind === "tool_result" || event.kind === "context_checkpoint";
  const stop = event.marks === "stop";
  const turn = options.opensTurn
    ? sql`new_turn AS (
        INSERT INTO agent_turns (id, agent_id, turn_sequence, event_count, latest_event_id, latest_semantic_event_id, latest_prompt_sequence, stop_sequence)
        VALUES (${event.turnId}, ${agent.id}, (SELECT coalesce(max(turn_sequence), 0) + 1 FROM agent_turns WHERE agent_id = ${agent.id}), 1, ${row.id},
          ${event.semantic ? row.id : null}, ${prompt ? row.sequence : 0}, ${stop ? row.sequence : 0})
      )`
    : sql`turn_bookkeeping AS (
        UPDATE agent_turns SET
          event_count = event_count + 1,
          latest_event_id = ${row.id},
          latest_semantic_event_id = CASE WHEN ${event.semantic}::boolean THEN ${row.id}::uuid ELSE latest_semantic_event_id END,
          latest_prompt_sequence = CASE WHEN ${prompt}::boolean THEN ${row.sequence}::bigint WHEN ${stop}::boolean THEN 0 ELSE latest_prompt_sequence END,
          stop_sequence = CASE WHEN ${stop}::boolean THEN ${row.sequence}::bigint ELSE stop_sequence END,
          updated_at = ${dbNow}
        WHERE id = ${event.turnId} AND agent_id = ${agent.id}
      )`;
  const parts = [
    sql`new_event AS (${insertEventSql(row)} RETURNING created_at)`,
    sql`advanced_counter AS (
        UPDATE agents SET next_event_sequence = ${row.sequence + 1}
          ${event.configId ? sql`, current_config_id = ${event.configId}, updated_at = ${dbNow}` : sql``}
        WHERE id = ${agent.id}
      )`,
    turn,
    ...(options.alongside ?? []),
  ];
  const [written] = await rawRows<{ created_ms: number }>(
    tx,
    sql`WITH ${sql.join(parts, sql`, `)} SELECT ${sql.join([sql`${epochMs(sql`created_at`)} AS created_ms`, notifyIn.events(agent.id), ...(options.hints ?? [])], sql`, `)} FROM new_event`,
  );
  agent.nextEventSequence = row.sequence + 1;
  if (event.configId) agent.currentConfigId = event.configId;
  return { ...row, createdAt: new Date(written!.created_ms) };
}

/** The row an append will write at the agent's next sequence (its creation time comes from the database). */
export function newEventRow(agent: AgentRow, event: Omit<NewEvent, "semantic" | "marks" | "configId">, sequence = agent.nextEventSequence): EventRow {
  return {
    id: event.id ?? newUuid(),
    agentId: agent.id,
    turnId: event.turnId,
    sequence,
    eventKind: event.kind,
    isOpeningEvent: event.opening ?? false,
    agentInputId: event.agentInputId ?? null,
    modelOutputId: event.modelOutputId ?? null,
    toolCallId: event.toolCallId ?? null,
    contextCheckpointId: event.contextCheckpointId ?? null,
    payload: event.payload ?? null,
    idempotencyKey: event.idempotencyKey ?? null,
    createdAt: new Date(0),
  };
}

/**
 * The INSERT of one event row, for statements that write it together with its bookkeeping; with
 * `onlyIf` (a relation), the row is written only when that relation has a row.
 */
export function insertEventSql(row: EventRow, onlyIf?: SQL): SQL {
  if (row.payload !== null) return insertPayloadEventSql(row);
  const values = sql`${row.id}::uuid, ${row.agentId}::uuid, ${row.turnId}::uuid, ${row.sequence}::bigint, ${row.eventKind}::text, ${row.isOpeningEvent}::boolean,
    ${row.agentInputId}::uuid, ${row.modelOutputId}::uuid, ${row.toolCallId}::uuid, ${row.contextCheckpointId}::uuid, ${row.idempotencyKey}::text`;
  return sql`INSERT INTO agent_events (id, agent_id, turn_id, sequence, event_kind, is_opening_event, agent_input_id, model_output_id, tool_call_id, context_checkpoint_id, idempotency_key)
    ${onlyIf ? sql`SELECT ${values} FROM ${onlyIf}` : sql`VALUES (${values})`}`;
}

/** The INSERT of an event that carries its own payload (the kinds with no row of their own; never on a step's path). */
function insertPayloadEventSql(row: EventRow): SQL {
  return sql`INSERT INTO agent_events (id, agent_id, turn_id, sequence, event_kind, is_opening_event, payload, idempotency_key)
    VALUES (${row.id}::uuid, ${row.agentId}::uuid, ${row.turnId}::uuid, ${row.sequence}::bigint, ${row.eventKind}::text, false,
      ${JSON.stringify(row.payload)}::jsonb, ${row.idempotencyKey}::text)`;
}

/** The highest sequence written so far (0 before the first event). */
export function latestSequence(agent: AgentRow): number {
  return agent.nextEventSequence - 1;
}
