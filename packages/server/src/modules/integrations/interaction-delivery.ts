import { integrationEventReceipts } from "../../db/schema/index.js";
import type { Tx } from "../../platform/db/index.js";
import { newUuid } from "../../platform/ids.js";
import type { AgentDefinition } from "../../runtime/definition.js";
import type { InteractionRow } from "../../runtime/store/interactions.js";
import { findAssignment } from "./launch-store.js";

/** The receipt kind of an interaction an integration's handler shows; its kind's receipt handlers post it. */
export const INTERACTION_OPENED = "interaction_opened";

/**
 * Routes a newly opened interaction to the agent's interaction handler (reference docs: integrations/overview,
 * "Route questions and approvals"): the first configured handler whose integration assigned the agent a
 * conversation gets a durable receipt, in the interaction's own transaction, naming that conversation. The
 * receipts processor posts it later, with retries; a failed post never touches the interaction, which stays
 * answerable through the API. No handler or no assignment: the interaction is for the dashboard only.
 */
export async function routeInteraction(tx: Tx, definition: AgentDefinition, interaction: InteractionRow): Promise<void> {
  for (const handler of definition.interactionHandlers ?? []) {
    const assignment = await findAssignment(tx, interaction.agentId, handler.integrationId);
    if (!assignment) continue;
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
    return;
  }
}
