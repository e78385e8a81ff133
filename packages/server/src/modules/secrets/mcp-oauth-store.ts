import { and, eq, isNull, lt, sql } from "drizzle-orm";
import type { PgInsertValue } from "drizzle-orm/pg-core";
import { mcpOAuthFlows } from "../../db/schema/index.js";
import { dbNow, dbSecondsFromNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";

type Db = AppDb | Tx;
export type FlowRow = typeof mcpOAuthFlows.$inferSelect;

export async function insertFlow(tx: Db, row: Omit<PgInsertValue<typeof mcpOAuthFlows>, "expiresAt">, ttlSeconds: number): Promise<FlowRow> {
  const [flow] = await tx
    .insert(mcpOAuthFlows)
    .values({ ...row, expiresAt: dbSecondsFromNow(ttlSeconds) })
    .returning();
  return flow!;
}

export async function findFlow(tx: Db, flowId: string): Promise<FlowRow | undefined> {
  const [flow] = await tx.select().from(mcpOAuthFlows).where(eq(mcpOAuthFlows.id, flowId));
  return flow;
}

/**
 * Marks the flow `userId` started used and returns it, once: a second callback with the same state, one
 * after the flow's expiry by the database clock, or one by another user finds nothing.
 */
export async function consumeFlow(tx: Db, flowId: string, userId: string): Promise<FlowRow | undefined> {
  const [flow] = await tx
    .update(mcpOAuthFlows)
    .set({ consumedAt: dbNow })
    .where(
      and(eq(mcpOAuthFlows.id, flowId), eq(mcpOAuthFlows.startedByUserId, userId), isNull(mcpOAuthFlows.consumedAt), sql`${mcpOAuthFlows.expiresAt} > ${dbNow}`),
    )
    .returning();
  return flow;
}

export async function recordSecret(tx: Db, flowId: string, secretId: string): Promise<void> {
  await tx.update(mcpOAuthFlows).set({ secretId }).where(eq(mcpOAuthFlows.id, flowId));
}

/** Flows that ended more than a day ago are of no use to anyone; maintenance deletes them. */
export async function deleteOldFlows(tx: Db): Promise<number> {
  const gone = await tx
    .delete(mcpOAuthFlows)
    .where(lt(mcpOAuthFlows.expiresAt, sql`${dbNow} - interval '1 day'`))
    .returning({ id: mcpOAuthFlows.id });
  return gone.length;
}
