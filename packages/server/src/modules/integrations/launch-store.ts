import { and, eq, inArray } from "drizzle-orm";
import { integrationAssignments } from "../../db/schema/index.js";
import type { Tx } from "../../platform/db/index.js";
import { newUuid } from "../../platform/ids.js";

export type AssignmentRow = typeof integrationAssignments.$inferSelect;
const a = integrationAssignments;

export async function insertAssignment(tx: Tx, row: Omit<AssignmentRow, "id" | "createdAt">): Promise<void> {
  await tx.insert(a).values({ id: newUuid(), ...row });
}

/** The agent's assigned conversation through this integration, if a launch gave it one. */
export async function findAssignment(tx: Tx, agentId: string, integrationId: string): Promise<AssignmentRow | undefined> {
  const [row] = await tx
    .select()
    .from(a)
    .where(and(eq(a.agentId, agentId), eq(a.integrationId, integrationId)));
  return row;
}

/** The agent's assigned conversations through these integrations, by integration id: one read for a page of handlers. */
export async function findAssignments(tx: Tx, agentId: string, integrationIds: string[]): Promise<Map<string, AssignmentRow>> {
  if (integrationIds.length === 0) return new Map();
  const rows = await tx
    .select()
    .from(a)
    .where(and(eq(a.agentId, agentId), inArray(a.integrationId, integrationIds)));
  return new Map(rows.map((row) => [row.integrationId, row]));
}

/** Whether a launch through this integration already owns the conversation (its agent may since be archived). */
export async function conversationLaunched(tx: Tx, integrationId: string, conversationKey: string): Promise<boolean> {
  const [row] = await tx
    .select({ id: a.id })
    .from(a)
    .where(and(eq(a.integrationId, integrationId), eq(a.conversationKey, conversationKey)))
    .limit(1);
  return row !== undefined;
}
