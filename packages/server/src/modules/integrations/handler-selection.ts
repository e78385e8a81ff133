import { and, desc, eq, inArray } from "drizzle-orm";
import { actors, agentEvents, agentHandlerSelections, agentInputs, integrationAssignments, integrations } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { Tx } from "../../platform/db/index.js";
import type { InteractionHandlerDefinition } from "../../runtime/definition.js";

/**
 * Which of an agent's configured interaction handlers shows its next interaction (reference docs:
 * integrations/overview, "Route questions and approvals"). A handler is eligible when the agent's config
 * names it. With automatic selection (the default), the last content input admitted to a turn selects:
 * one from an `integration` actor of a handler's workspace selects that handler (an actor of no handler's
 * tenant, the handler whose integration assigned the agent its conversation); any other input (the
 * console, the API) clears the selection. `set_interaction_handler` sets it explicitly; with `auto_select: false`
 * it stays until set again, otherwise until the next admitted input. Computed when needed from the inputs
 * and the one row the tool writes, so no turn has to record anything.
 */

export type Selection = { handler: InteractionHandlerDefinition | null; autoSelect: boolean };
const s = agentHandlerSelections;

export async function currentSelection(tx: Tx, agentId: string, handlers: readonly InteractionHandlerDefinition[]): Promise<Selection> {
  const [row] = await tx.select().from(s).where(eq(s.agentId, agentId));
  const byId = (id: string | null) => handlers.find((handler) => handler.integrationId === id) ?? null;
  if (row && !row.autoSelect) return { handler: byId(row.integrationId), autoSelect: false };
  const [last] = await tx
    .select({ admittedAt: agentEvents.createdAt, provider: actors.provider, tenant: actors.providerTenantId })
    .from(agentInputs)
    .innerJoin(agentEvents, eq(agentEvents.id, agentInputs.admittedEventId))
    .leftJoin(actors, eq(actors.id, agentInputs.actorId))
    .where(and(eq(agentInputs.agentId, agentId), eq(agentInputs.inputKind, "content")))
    .orderBy(desc(agentEvents.sequence))
    .limit(1);
  if (row && (!last || row.setAt >= last.admittedAt)) return { handler: byId(row.integrationId), autoSelect: true };
  if (!last || last.provider !== "integration" || handlers.length === 0) return { handler: null, autoSelect: true };
  const candidates = await tx
    .select({ id: integrations.id, tenant: integrations.providerTenantId })
    .from(integrations)
    .where(inArray(integrations.id, handlers.map((handler) => handler.integrationId)))
    .orderBy(integrations.id);
  const origin = candidates.find((candidate) => candidate.tenant === last.tenant) ?? (await assigningHandler(tx, agentId, candidates));
  return { handler: origin ? byId(origin.id) : null, autoSelect: true };
}

/**
 * A person whose tenant is not the integration's (a Discord member's is their server, the integration's
 * its application): their input selects the handler whose integration assigned this agent its conversation.
 */
async function assigningHandler(tx: Tx, agentId: string, candidates: Array<{ id: string }>): Promise<{ id: string } | undefined> {
  const [assigned] = await tx
    .select({ id: integrationAssignments.integrationId })
    .from(integrationAssignments)
    .where(and(eq(integrationAssignments.agentId, agentId), inArray(integrationAssignments.integrationId, candidates.map((candidate) => candidate.id))))
    .orderBy(integrationAssignments.integrationId)
    .limit(1);
  return assigned;
}

/** What `set_interaction_handler` wrote; `autoSelect` undefined keeps the current mode. */
export async function saveSelection(tx: Tx, agent: { id: string; orgId: string }, integrationId: string | null, autoSelect: boolean | undefined): Promise<boolean> {
  const [row] = await tx.select({ autoSelect: s.autoSelect }).from(s).where(eq(s.agentId, agent.id));
  const mode = autoSelect ?? row?.autoSelect ?? true;
  await tx
    .insert(s)
    .values({ agentId: agent.id, orgId: agent.orgId, integrationId, autoSelect: mode })
    .onConflictDoUpdate({ target: s.agentId, set: { integrationId, autoSelect: mode, setAt: dbNow } });
  return mode;
}
