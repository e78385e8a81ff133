import { and, countDistinct, eq, getTableColumns, isNull, or, sql } from "drizzle-orm";
import type { PgInsertValue } from "drizzle-orm/pg-core";
import { agents, integrationSubscriptions } from "../../db/schema/index.js";
import type { Tx } from "../../platform/db/index.js";
import { allOf, keyset, type PageRequest } from "../../platform/http/lists.js";

export type SubscriptionRow = typeof integrationSubscriptions.$inferSelect;
/** A subscription as listed: with its agent's name (a read of the agents table, for the view only). */
export type SubscriptionWithAgent = SubscriptionRow & { agentName: string };

const sub = integrationSubscriptions;
const sortColumns = { created_at: sub.createdAt, id: sub.id };
const withAgentName = { ...getTableColumns(sub), agentName: agents.name };

export async function insertSubscription(tx: Tx, row: PgInsertValue<typeof integrationSubscriptions>): Promise<SubscriptionRow> {
  const [inserted] = await tx.insert(sub).values(row).returning();
  return inserted!;
}

export async function findAttachment(tx: Tx, integrationId: string, conversationKey: string, agentId: string): Promise<SubscriptionRow | undefined> {
  const [row] = await tx
    .select()
    .from(sub)
    .where(and(eq(sub.integrationId, integrationId), eq(sub.conversationKey, conversationKey), eq(sub.agentId, agentId)));
  return row;
}

/** Replaces an attachment's event selection (null: every event). */
export async function setEvents(tx: Tx, subscriptionId: string, events: string[] | null): Promise<SubscriptionRow> {
  const [updated] = await tx.update(sub).set({ events }).where(eq(sub.id, subscriptionId)).returning();
  return updated!;
}

/** How many agents the conversation forwards to through this integration. */
export async function countConversationAgents(tx: Tx, integrationId: string, conversationKey: string): Promise<number> {
  const [row] = await tx
    .select({ agents: countDistinct(sub.agentId) })
    .from(sub)
    .where(and(eq(sub.integrationId, integrationId), eq(sub.conversationKey, conversationKey)));
  return row?.agents ?? 0;
}

/** One page of the integration's subscriptions, oldest first (`limit + 1` rows). */
export async function listSubscriptions(tx: Tx, integrationId: string, page: PageRequest): Promise<SubscriptionWithAgent[]> {
  const ks = keyset(page.sort, sortColumns, page.cursor);
  const rows = await tx
    .select(withAgentName)
    .from(sub)
    .innerJoin(agents, and(eq(agents.orgId, sub.orgId), eq(agents.id, sub.agentId)))
    .where(allOf(eq(sub.integrationId, integrationId), ks.where))
    .orderBy(...ks.orderBy)
    .limit(page.limit + 1);
  return rows;
}

export async function findSubscriptionWithAgent(tx: Tx, integrationId: string, subscriptionId: string): Promise<SubscriptionWithAgent | undefined> {
  const [row] = await tx
    .select(withAgentName)
    .from(sub)
    .innerJoin(agents, and(eq(agents.orgId, sub.orgId), eq(agents.id, sub.agentId)))
    .where(and(eq(sub.integrationId, integrationId), eq(sub.id, subscriptionId)));
  return row;
}

export async function deleteSubscription(tx: Tx, integrationId: string, subscriptionId: string): Promise<boolean> {
  const deleted = await tx
    .delete(sub)
    .where(and(eq(sub.integrationId, integrationId), eq(sub.id, subscriptionId)))
    .returning({ id: sub.id });
  return deleted.length > 0;
}

/** Agent archival ends its subscriptions (reference docs: integrations/overview, "Stop forwarding"). */
export async function deleteAgentSubscriptions(tx: Tx, agentId: string): Promise<void> {
  await tx.delete(sub).where(eq(sub.agentId, agentId));
}

/**
 * The project's agent, share-locked: archival (which locks the agent row for update and ends its
 * subscriptions) waits for this transaction, so it cannot miss a subscription made meanwhile.
 */
export async function shareAgent(tx: Tx, orgId: string, projectId: string, agentId: string): Promise<{ state: string; name: string } | undefined> {
  const [row] = await tx
    .select({ state: agents.state, name: agents.name })
    .from(agents)
    .where(and(eq(agents.orgId, orgId), eq(agents.projectId, projectId), eq(agents.id, agentId)))
    .for("share");
  return row;
}

/**
 * The agents the conversation forwards to through this integration (at most `limit`). With `event`, only
 * those whose subscription selects it (no selection selects every event).
 */
export async function conversationAgents(tx: Tx, integrationId: string, conversationKey: string, limit: number, event?: string): Promise<string[]> {
  const selects = event === undefined ? undefined : or(isNull(sub.events), sql`${event} = ANY(${sub.events})`);
  const rows = await tx
    .selectDistinct({ agentId: sub.agentId })
    .from(sub)
    .where(and(eq(sub.integrationId, integrationId), eq(sub.conversationKey, conversationKey), selects))
    .limit(limit);
  return rows.map((row) => row.agentId);
}
