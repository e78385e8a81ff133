import { and, asc, desc, eq, gt, inArray, lt, or, type SQL } from "drizzle-orm";
import { agentEvents, agentInputs, agentTurns, contextCheckpoints, modelOutputs, toolCallResults, toolCalls } from "../../db/schema/index.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset } from "../../platform/http/lists.js";
import type { TurnRow } from "./journal.js";

/*
 * Reading an agent's timeline. An event is read with its payload in one statement: the event row
 * joined to its turn (for turn_sequence) and, by the one pointer the kind sets, to the input, model
 * output, tool result or checkpoint it records. Pages therefore cost one query whatever their size.
 */

type Db = AppDb | Tx;
export type { TurnRow };
export type ToolCallRow = typeof toolCalls.$inferSelect;

const eventFields = {
  id: agentEvents.id,
  turnId: agentEvents.turnId,
  turnSequence: agentTurns.turnSequence,
  sequence: agentEvents.sequence,
  eventKind: agentEvents.eventKind,
  isOpeningEvent: agentEvents.isOpeningEvent,
  createdAt: agentEvents.createdAt,
  // Left-joined groups come back as null when the event does not point at that table.
  input: {
    id: agentInputs.id,
    inputKind: agentInputs.inputKind,
    actorId: agentInputs.actorId,
    inputIdempotencyKey: agentInputs.inputIdempotencyKey,
    controlType: agentInputs.controlType,
    interactionId: agentInputs.interactionId,
    agentConfigId: agentInputs.agentConfigId,
    contentBlocks: agentInputs.contentBlocks,
  },
  output: {
    modelCallContextId: modelOutputs.modelCallContextId,
    stopReason: modelOutputs.stopReason,
    contentBlocks: modelOutputs.contentBlocks,
  },
  result: {
    toolCallId: toolCallResults.toolCallId,
    outcome: toolCallResults.outcome,
    contentBlocks: toolCallResults.contentBlocks,
  },
  checkpoint: {
    id: contextCheckpoints.id,
    summarizedThroughEventSequence: contextCheckpoints.summarizedThroughEventSequence,
    summary: contextCheckpoints.summary,
  },
};

function selectEvents(db: Db, where: SQL | undefined) {
  return db
    .select(eventFields)
    .from(agentEvents)
    .innerJoin(agentTurns, eq(agentTurns.id, agentEvents.turnId))
    .leftJoin(agentInputs, eq(agentInputs.id, agentEvents.agentInputId))
    .leftJoin(modelOutputs, eq(modelOutputs.id, agentEvents.modelOutputId))
    .leftJoin(toolCallResults, eq(toolCallResults.toolCallId, agentEvents.toolCallId))
    .leftJoin(contextCheckpoints, eq(contextCheckpoints.id, agentEvents.contextCheckpointId))
    .where(where);
}

/** Events after `after` (exclusive), oldest first. */
export async function eventsAfter(db: Db, agentId: string, after: number, limit: number) {
  return selectEvents(db, and(eq(agentEvents.agentId, agentId), gt(agentEvents.sequence, after)))
    .orderBy(asc(agentEvents.sequence))
    .limit(limit);
}

export type EventRecord = Awaited<ReturnType<typeof eventsAfter>>[number];

/** Events before `before` (exclusive; null: the newest), newest first, optionally of one turn. */
export async function eventsBefore(db: Db, agentId: string, before: number | null, limit: number, turnId?: string): Promise<EventRecord[]> {
  return selectEvents(
    db,
    allOf(
      eq(agentEvents.agentId, agentId),
      before === null ? undefined : lt(agentEvents.sequence, before),
      turnId === undefined ? undefined : eq(agentEvents.turnId, turnId),
    ),
  )
    .orderBy(desc(agentEvents.sequence))
    .limit(limit);
}

/** The opening events of `turnIds` and the events `eventIds` names, oldest first. */
export async function turnBoundaryEvents(db: Db, agentId: string, turnIds: string[], eventIds: string[]): Promise<EventRecord[]> {
  if (turnIds.length === 0 && eventIds.length === 0) return [];
  const opening = turnIds.length > 0 ? and(inArray(agentEvents.turnId, turnIds), eq(agentEvents.isOpeningEvent, true)) : undefined;
  const named = eventIds.length > 0 ? inArray(agentEvents.id, eventIds) : undefined;
  return selectEvents(db, and(eq(agentEvents.agentId, agentId), or(opening, named))).orderBy(asc(agentEvents.sequence));
}

/** Turns before `before` (exclusive; null: the newest), newest first. */
export async function turnsBefore(db: Db, agentId: string, before: number | null, limit: number): Promise<TurnRow[]> {
  return db
    .select()
    .from(agentTurns)
    .where(allOf(eq(agentTurns.agentId, agentId), before === null ? undefined : lt(agentTurns.turnSequence, before)))
    .orderBy(desc(agentTurns.turnSequence))
    .limit(limit);
}

export async function findTurn(db: Db, agentId: string, turnId: string): Promise<TurnRow | undefined> {
  const [turn] = await db
    .select()
    .from(agentTurns)
    .where(and(eq(agentTurns.agentId, agentId), eq(agentTurns.id, turnId)));
  return turn;
}

export interface ToolCallFilter {
  state?: string;
  type?: string;
}

/** A keyset page of an agent's tool calls by creation (oldest first), `limit + 1` rows to tell if more follow. */
export async function toolCallsPage(db: Db, agentId: string, filter: ToolCallFilter, limit: number, cursor: string | undefined): Promise<ToolCallRow[]> {
  const page = keyset("created_at", { created_at: toolCalls.createdAt, id: toolCalls.id }, cursor);
  return db
    .select()
    .from(toolCalls)
    .where(
      allOf(
        eq(toolCalls.agentId, agentId),
        filter.state === undefined ? undefined : eq(toolCalls.state, filter.state),
        filter.type === undefined ? undefined : eq(toolCalls.type, filter.type),
        page.where,
      ),
    )
    .orderBy(...page.orderBy)
    .limit(limit + 1);
}
