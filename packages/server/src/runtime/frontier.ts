import { and, asc, eq, gte } from "drizzle-orm";
import { modelCallContexts, toolCalls } from "../db/schema/index.js";
import type { Tx } from "../platform/db/index.js";
import { latestTurn, type TurnRow } from "./store/journal.js";
import { runsInToolStep } from "./tools/catalog.js";

/*
 * What an agent should do next, computed from durable facts under the agent lock (reference design-brief.md §3.3,
 * ported to code as §12 suggests). Only the latest turn matters, and in it only what happened after the
 * latest cancel: a cancel is a stop boundary. The turn row keeps that boundary and the latest prompt
 * (`appendEvent` maintains both), so nothing here reads the timeline.
 */

export type ContextRow = typeof modelCallContexts.$inferSelect;
export type ToolCallRow = typeof toolCalls.$inferSelect;

export interface TurnState {
  turn: TurnRow;
  /** Tool calls of the turn's live part. */
  toolCalls: ToolCallRow[];
  /** Model contexts of the turn's live part, oldest first. */
  contexts: ContextRow[];
  /** Highest sequence of an event that asks the model to answer (content input, tool result, checkpoint). */
  latestPromptSequence: number;
}

/** The state of the agent's latest turn, or undefined before the first turn. */
export async function loadTurnState(tx: Tx, agentId: string): Promise<TurnState | undefined> {
  const turn = await latestTurn(tx, agentId);
  if (!turn) return undefined;
  const contexts = await tx
    .select()
    .from(modelCallContexts)
    .where(and(eq(modelCallContexts.turnId, turn.id), gte(modelCallContexts.inputEventSequence, turn.stopSequence)))
    .orderBy(asc(modelCallContexts.createdAt), asc(modelCallContexts.attemptNumber));
  // A cancel completes every unfinished tool call of the turn, so all of them count.
  const calls = await tx.select().from(toolCalls).where(eq(toolCalls.turnId, turn.id)).orderBy(asc(toolCalls.createdAt), asc(toolCalls.id));
  return { turn, toolCalls: calls, contexts, latestPromptSequence: turn.latestPromptSequence };
}

/** Whether a ready call runs in a tool step, outside the claim: MCP calls and the built-in tools that read or store bytes. */
const runsInStep = (c: ToolCallRow) => c.type === "mcp" || (c.type === "built_in" && runsInToolStep(c.name));

/** Tool calls the worker itself must move on in the claim: permission checks, and ready transactional built-in calls. */
export function pendingToolWork(state: TurnState): ToolCallRow[] {
  return state.toolCalls.filter((c) => c.state === "awaiting_authorization" || (c.state === "ready" && c.type === "built_in" && !runsInStep(c)));
}

/** Calls cleared to run outside the claim, in a tool step: MCP calls and the `skill` tool. */
export function readyStepCalls(state: TurnState): ToolCallRow[] {
  return state.toolCalls.filter((c) => c.state === "ready" && runsInStep(c));
}

/** Some tool call of the latest batch still waits (on a person, an external result, or the worker). */
export function batchIncomplete(state: TurnState): boolean {
  return state.toolCalls.some((c) => c.state !== "completed");
}
