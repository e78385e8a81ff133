import { and, desc, eq, sql } from "drizzle-orm";
import { agentEvents, agents, agentTurns } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { Tx } from "../../platform/db/index.js";
import { newUuid } from "../../platform/ids.js";
import type { AgentSignals } from "../../runtime/signals.js";

/*
 * Writing an agent's timeline. Every function here runs inside a transaction that has locked the
 * agent's row with `lockAgent` first (DESIGN.md rule 1): that lock is what makes one writer per
 * timeline true, and the counter on the row makes sequences dense and in commit order.
 */

export type AgentRow = typeof agents.$inferSelect;
export type TurnRow = typeof agentTurns.$inferSelect;
export type EventRow = typeof agentEvents.$inferSelect;
export type EventKind = "agent_input" | "model_output" | "tool_result" | "context_checkpoint";

/** Locks the agent's row for the rest of the transaction; undefined when it does not exist. */
export async function lockAgent(tx: Tx, agentId: string): Promise<AgentRow | undefined> {
  const [agent] = await tx.select().from(agents).where(eq(agents.id, agentId)).for("update");
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
  opening?: boolean;
  /** Semantic events are the ones a conversation preview shows (design brief §2.8). */
  semantic: boolean;
  idempotencyKey?: string;
}

/**
 * Appends one event at the agent's next sequence, advances the counter and the turn's bookkeeping,
 * and signals followers after commit. `agent` must be the row `lockAgent` returned; its counter is
 * advanced in place so several appends in one transaction stay consistent.
 */
export async function appendEvent(tx: Tx, signals: AgentSignals, agent: AgentRow, event: NewEvent): Promise<EventRow> {
  const sequence = agent.nextEventSequence;
  const [row] = await tx
    .insert(agentEvents)
    .values({
      id: newUuid(),
      agentId: agent.id,
      turnId: event.turnId,
      sequence,
      eventKind: event.kind,
      isOpeningEvent: event.opening ?? false,
      agentInputId: event.agentInputId ?? null,
      modelOutputId: event.modelOutputId ?? null,
      toolCallId: event.toolCallId ?? null,
      contextCheckpointId: event.contextCheckpointId ?? null,
      idempotencyKey: event.idempotencyKey ?? null,
    })
    .returning();
  agent.nextEventSequence = sequence + 1;
  await tx.update(agents).set({ nextEventSequence: sequence + 1 }).where(eq(agents.id, agent.id));
  await tx
    .update(agentTurns)
    .set({
      eventCount: sql`${agentTurns.eventCount} + 1`,
      latestEventId: row!.id,
      ...(event.semantic ? { latestSemanticEventId: row!.id } : {}),
      updatedAt: dbNow,
    })
    .where(and(eq(agentTurns.id, event.turnId), eq(agentTurns.agentId, agent.id)));
  signals.eventsAppended(tx, agent.id);
  return row!;
}

/** The highest sequence written so far (0 before the first event). */
export function latestSequence(agent: AgentRow): number {
  return agent.nextEventSequence - 1;
}
