import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { agentInteractions, toolCalls } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset, type PageRequest } from "../../platform/http/lists.js";
import { newUuid } from "../../platform/ids.js";

type Db = AppDb | Tx;
export type InteractionRow = typeof agentInteractions.$inferSelect;
export type InteractionKind = "permission" | "question";

export interface InteractionForm {
  title: string;
  context?: Array<{ label: string; value: string }>;
  questions: Array<{ prompt: string; multiple?: boolean; options: Array<{ label: string; allows_text?: boolean }> }>;
}

export async function insertInteraction(
  tx: Db,
  row: { agentId: string; turnId: string; toolCallId: string; kind: InteractionKind; request: InteractionForm },
): Promise<InteractionRow> {
  const [created] = await tx
    .insert(agentInteractions)
    .values({ id: newUuid(), agentId: row.agentId, turnId: row.turnId, toolCallId: row.toolCallId, interactionKind: row.kind, request: row.request as unknown as Record<string, unknown> })
    .returning();
  return created!;
}

export async function findInteraction(tx: Db, agentId: string, interactionId: string): Promise<InteractionRow | undefined> {
  const [row] = await tx.select().from(agentInteractions).where(and(eq(agentInteractions.agentId, agentId), eq(agentInteractions.id, interactionId)));
  return row;
}

/** By id alone, for a provider's button that names the interaction; the caller checks whose it is. */
export async function findInteractionById(tx: Db, interactionId: string): Promise<InteractionRow | undefined> {
  const [row] = await tx.select().from(agentInteractions).where(eq(agentInteractions.id, interactionId));
  return row;
}

export async function openInteractionsOfTurn(tx: Db, turnId: string): Promise<Array<InteractionRow & { toolName: string }>> {
  return tx
    .select({ interaction: agentInteractions, toolName: toolCalls.name })
    .from(agentInteractions)
    .innerJoin(toolCalls, eq(toolCalls.id, agentInteractions.toolCallId))
    .where(and(eq(agentInteractions.turnId, turnId), eq(agentInteractions.state, "open"), sql`${toolCalls.state} <> 'completed'`))
    .orderBy(asc(agentInteractions.createdAt))
    .then((rows) => rows.map((r) => ({ ...r.interaction, toolName: r.toolName })));
}

export async function settle(
  tx: Db,
  interactionId: string,
  change: { state: "resolved" | "canceled"; resolution?: Record<string, unknown>; resolvedByInputId?: string | null },
): Promise<InteractionRow> {
  const [row] = await tx
    .update(agentInteractions)
    .set({ state: change.state, resolution: change.resolution ?? null, resolvedByInputId: change.resolvedByInputId ?? null, resolvedAt: dbNow })
    .where(eq(agentInteractions.id, interactionId))
    .returning();
  return row!;
}

export async function cancelMany(tx: Db, ids: string[], resolvedByInputId: string | null): Promise<void> {
  if (ids.length === 0) return;
  await tx.update(agentInteractions).set({ state: "canceled", resolvedAt: dbNow, resolvedByInputId }).where(inArray(agentInteractions.id, ids));
}

export async function listInteractions(tx: Db, agentId: string, state: string | undefined, page: PageRequest): Promise<InteractionRow[]> {
  const ks = keyset(page.sort, { created_at: agentInteractions.createdAt, id: agentInteractions.id }, page.cursor);
  return tx
    .select()
    .from(agentInteractions)
    .where(allOf(eq(agentInteractions.agentId, agentId), state ? eq(agentInteractions.state, state) : undefined, ks.where))
    .orderBy(...ks.orderBy)
    .limit(page.limit + 1);
}
