import { and, asc, desc, eq, gt, inArray, lt, ne, or, sql, type Placeholder, type SQL } from "drizzle-orm";
import { agentEvents, agentInputs, agentTurns, contextCheckpoints, modelCallContexts, modelOutputs, toolCallResults, toolCalls } from "../../db/schema/index.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { builtOnce } from "../../platform/db/prepared.js";
import { allOf, keyset } from "../../platform/http/lists.js";
import type { TurnRow } from "../../runtime/store/journal.js";

/*
 * Reading an agent's timeline. An event is read with its payload in one statement: the event row
 * joined to its turn (for turn_sequence) and, by the one pointer the kind sets, to the input, model
 * output, tool result or checkpoint it records. Pages therefore cost one query whatever their size.
 * The page of `agent_events` rows is chosen first (a subquery with its own ORDER BY and LIMIT, which
 * PostgreSQL never flattens into the joins), so the joins touch only the rows of the page (a model
 * output's usage is its call context's, one more join by primary key).
 */

type Db = AppDb | Tx;
export type { TurnRow };
export type ToolCallRow = typeof toolCalls.$inferSelect;

/** What the page subquery carries out: the event's own fields and its payload pointers. */
const pageColumns = {
  id: agentEvents.id,
  turnId: agentEvents.turnId,
  sequence: agentEvents.sequence,
  eventKind: agentEvents.eventKind,
  isOpeningEvent: agentEvents.isOpeningEvent,
  createdAt: agentEvents.createdAt,
  agentInputId: agentEvents.agentInputId,
  modelOutputId: agentEvents.modelOutputId,
  toolCallId: agentEvents.toolCallId,
  contextCheckpointId: agentEvents.contextCheckpointId,
  payload: agentEvents.payload,
};

type Direction = "oldest_first" | "newest_first";

function selectEvents(db: Db, where: SQL | undefined, direction: Direction, limit?: number | Placeholder) {
  const order = direction === "oldest_first" ? asc : desc;
  const chosen = db.select(pageColumns).from(agentEvents).where(where).orderBy(order(agentEvents.sequence)).$dynamic();
  const page = (limit === undefined ? chosen : chosen.limit(limit)).as("page");
  return db
    .select({
      id: page.id,
      turnId: page.turnId,
      turnSequence: agentTurns.turnSequence,
      sequence: page.sequence,
      eventKind: page.eventKind,
      isOpeningEvent: page.isOpeningEvent,
      createdAt: page.createdAt,
      payload: page.payload,
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
      // The call's usage; null counts (a call that failed before the provider reported any) read as 0.
      usage: {
        inputTokens: modelCallContexts.inputTokens,
        outputTokens: modelCallContexts.outputTokens,
        cacheReadTokens: modelCallContexts.cacheReadTokens,
        cacheWriteTokens: modelCallContexts.cacheWriteTokens,
        reasoningTokens: modelCallContexts.reasoningTokens,
        costMicroUsd: modelCallContexts.costMicroUsd,
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
    })
    .from(page)
    .innerJoin(agentTurns, eq(agentTurns.id, page.turnId))
    .leftJoin(agentInputs, eq(agentInputs.id, page.agentInputId))
    .leftJoin(modelOutputs, eq(modelOutputs.id, page.modelOutputId))
    .leftJoin(modelCallContexts, eq(modelCallContexts.id, modelOutputs.modelCallContextId))
    .leftJoin(toolCallResults, eq(toolCallResults.toolCallId, page.toolCallId))
    .leftJoin(contextCheckpoints, eq(contextCheckpoints.id, page.contextCheckpointId))
    // Joins keep no order; the page's order is restated on its rows.
    .orderBy(order(page.sequence));
}

/**
 * The forward page (every list page, every stream catch-up) and the backward pages without a turn (the
 * newest page, older pages) are the timeline's most read statements: each is built once per database
 * handle and kept as drizzle's prepared query (platform/db/prepared.ts). (Their names are the ones
 * PostgreSQL prepares them under; other frequent statements are named by `platform/db/prepared-statements.ts`.)
 */
const forwardPage = builtOnce((db) => {
  const where = and(eq(agentEvents.agentId, sql.placeholder("agentId")), gt(agentEvents.sequence, sql.placeholder("after")));
  return selectEvents(db, where, "oldest_first", sql.placeholder("limit")).prepare("svc_timeline_events_after");
});
const newestPage = builtOnce((db) => selectEvents(db, eq(agentEvents.agentId, sql.placeholder("agentId")), "newest_first", sql.placeholder("limit")).prepare("svc_timeline_events_newest"));
const olderPage = builtOnce((db) => {
  const where = and(eq(agentEvents.agentId, sql.placeholder("agentId")), lt(agentEvents.sequence, sql.placeholder("before")));
  return selectEvents(db, where, "newest_first", sql.placeholder("limit")).prepare("svc_timeline_events_before");
});

/** The forward page's SQL text (parameters: agent id, after, limit), for the benchmark's raw baseline. */
export function forwardPageSql(db: Db): string {
  return forwardPage(db).getQuery().sql;
}

/** Events after `after` (exclusive), oldest first. */
export async function eventsAfter(db: Db, agentId: string, after: number, limit: number) {
  return forwardPage(db).execute({ agentId, after, limit });
}

export type EventRecord = Awaited<ReturnType<typeof eventsAfter>>[number];

/** Events before `before` (exclusive; null: the newest), newest first, optionally of one turn. */
export async function eventsBefore(db: Db, agentId: string, before: number | null, limit: number, turnId?: string): Promise<EventRecord[]> {
  if (turnId === undefined) return before === null ? newestPage(db).execute({ agentId, limit }) : olderPage(db).execute({ agentId, before, limit });
  const where = allOf(eq(agentEvents.agentId, agentId), before === null ? undefined : lt(agentEvents.sequence, before), eq(agentEvents.turnId, turnId));
  return selectEvents(db, where, "newest_first", limit);
}

/** The opening events of `turnIds` and the events `eventIds` names, oldest first. */
export async function turnBoundaryEvents(db: Db, agentId: string, turnIds: string[], eventIds: string[]): Promise<EventRecord[]> {
  if (turnIds.length === 0 && eventIds.length === 0) return [];
  const opening = turnIds.length > 0 ? and(inArray(agentEvents.turnId, turnIds), eq(agentEvents.isOpeningEvent, true)) : undefined;
  const named = eventIds.length > 0 ? inArray(agentEvents.id, eventIds) : undefined;
  return selectEvents(db, and(eq(agentEvents.agentId, agentId), or(opening, named)), "oldest_first");
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

/** Tool calls not completed yet, oldest first, at most `limit`: the pending calls of a stream's snapshot. */
export async function pendingToolCalls(db: Db, agentId: string, limit: number): Promise<ToolCallRow[]> {
  return db
    .select()
    .from(toolCalls)
    .where(and(eq(toolCalls.agentId, agentId), ne(toolCalls.state, "completed")))
    .orderBy(asc(toolCalls.createdAt), asc(toolCalls.id))
    .limit(limit);
}

/** Whether the agent has a model call under way (at most one: the unique index on started contexts). */
export async function modelCallStarted(db: Db, agentId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: modelCallContexts.id })
    .from(modelCallContexts)
    .where(and(eq(modelCallContexts.agentId, agentId), eq(modelCallContexts.state, "started")));
  return row !== undefined;
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
