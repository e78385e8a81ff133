import { eq } from "drizzle-orm";
import { integrationEventReceipts, integrations } from "../../db/schema/index.js";
import type { Tx } from "../../platform/db/index.js";
import { newUuid } from "../../platform/ids.js";
import type { AgentDefinition } from "../../runtime/definition.js";
import type { InteractionRow } from "../../runtime/store/interactions.js";
import type { KindCatalog } from "./capability-schemas.js";
import { currentSelection } from "./handler-selection.js";
import { findAssignment } from "./launch-store.js";

/** The receipt kind of an interaction an integration's handler shows; its kind's receipt handlers post it. */
export const INTERACTION_OPENED = "interaction_opened";


/**
 * Routes a newly opened interaction to the agent's selected interaction handler (handler-selection.ts):
 * when its integration assigned the agent a conversation, a durable receipt naming that conversation is
 * written in the interaction's own transaction (its captured destination). The receipts processor posts it
 * later, with retries; a failed post never touches the interaction, which stays answerable through the API.
 * No selection or no assignment: the interaction is for the dashboard only.
 */
export async function routeInteraction(tx: Tx, catalog: Pick<KindCatalog, "postsInteractions"> | undefined, definition: AgentDefinition, interaction: InteractionRow): Promise<void> {
  // Most agents name no handler: nothing to read.
  if (!definition.interactionHandlers?.length) return;
  const { handler } = await currentSelection(tx, interaction.agentId, definition.interactionHandlers);
  if (!handler) return;
  const [integration] = await tx.select({ kind: integrations.kind }).from(integrations).where(eq(integrations.id, handler.integrationId));
  if (!integration || !catalog?.postsInteractions(integration.kind)) return;
  const assignment = await findAssignment(tx, interaction.agentId, handler.integrationId);
  if (!assignment) return;
  await tx
    .insert(integrationEventReceipts)
    .values({
      id: newUuid(),
      integrationId: handler.integrationId,
      providerEventId: `interaction:${interaction.id}`,
      eventKind: INTERACTION_OPENED,
      payload: { interaction_id: interaction.id, agent_id: interaction.agentId, conversation: assignment.conversation },
    })
    .onConflictDoNothing();
}
