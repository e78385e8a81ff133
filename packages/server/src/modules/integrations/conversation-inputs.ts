import type { Database } from "../../platform/db/index.js";
import { encodeId } from "../../platform/ids.js";
import { jsonDigest } from "../../platform/json.js";
import { lockAgent } from "../../runtime/store/journal.js";
import * as inputs from "../../runtime/store/inputs.js";
import { upsertIntegrationActor } from "../actors/service.js";
import type { ArtifactsService } from "../artifacts/service.js";
import { cancelOpenInteractions } from "../interactions/cancel.js";
import { CONTENT_SCOPE, enqueueContentInput } from "../inputs/service.js";
import type { IntegrationRow } from "./store.js";
import { canonicalJson, MAX_AGENTS_PER_CONVERSATION } from "./subscriptions-service.js";
import * as subs from "./subscriptions-store.js";

/** A message a person wrote in a provider conversation, as every kind hands it to the runtime. */
export interface ConversationMessage {
  conversation: Record<string, unknown>;
  /** The provider's tenant and user id of the writer: the input's `integration` actor. */
  person: { tenantId: string; userId: string };
  text: string;
  /**
   * The message's identity at the provider (for Slack its channel and ts): the inputs' idempotency key, so
   * a redelivered event, or a second event about the same message, adds nothing.
   */
  messageKey: string;
  /** Agents that must not get it: the ones this message just launched (one per GitHub launcher slot), whose opening input it is. */
  exceptAgentIds?: readonly string[];
  /** The subscription event it is (GitHub's `commit`, …): only subscriptions selecting it get it. None: every subscription does. */
  event?: string;
}

/** What a delivery found: the conversation's subscribed agents whatever their selection, and how many got a new input. */
export interface Delivered {
  subscribers: number;
  reached: number;
}

/**
 * How a conversation's news reaches its agents: `steering` (a person's reply: it steers the current work
 * and cancels open interactions) or `queued` (news the agent takes up once its current work is done).
 */
export type ConversationDelivery = "steering" | "queued";

/**
 * A message a person wrote in a subscribed conversation steers each subscribed, active agent (reference
 * docs: integrations/slack, "Thread replies steer the selected agent and cancel its outstanding interactions").
 */
export function steerSubscribers(deps: { db: Database; artifacts: ArtifactsService }, integration: IntegrationRow, message: ConversationMessage): Promise<Delivered> {
  return deliverToSubscribers(deps, integration, message, "steering");
}

/**
 * Kind-neutral: the message becomes an input of each subscribed, active agent (at most 16) whose
 * subscription selects its event, in `delivery` mode, a steering one with cancel_open_interactions,
 * attributed to the writer's integration actor, keyed by the message. One transaction; answers how many
 * agents subscribe to the conversation and how many it reached.
 */
export async function deliverToSubscribers(
  deps: { db: Database; artifacts: ArtifactsService },
  integration: IntegrationRow,
  message: ConversationMessage,
  delivery: ConversationDelivery,
): Promise<Delivered> {
  const blocks = [{ type: "text" as const, text: message.text }];
  // A text block is checked in memory, so this may precede the transaction.
  const prepared = await deps.artifacts.prepareContentBlocks(blocks, new Set(["text"]));
  const key = `integration:${encodeId("integration", integration.id)}:${message.messageKey}`;
  const cancel = delivery === "steering";
  const digest = jsonDigest({ mode: delivery, actor: message.person, blocks, cancel });
  return deps.db.tx(async (tx) => {
    const conversationKey = canonicalJson(message.conversation);
    const subscribers = await subs.countConversationAgents(tx, integration.id, conversationKey);
    const agentIds = await subs.conversationAgents(tx, integration.id, conversationKey, MAX_AGENTS_PER_CONVERSATION, message.event);
    if (agentIds.length === 0) return { subscribers, reached: 0 };
    const actor = await upsertIntegrationActor(tx, integration.orgId, integration.projectId, message.person);
    let reached = 0;
    for (const agentId of agentIds.filter((id) => !message.exceptAgentIds?.includes(id)).sort()) {
      const agent = await lockAgent(tx, agentId);
      if (!agent || agent.state !== "active" || (await inputs.findByKey(tx, agentId, CONTENT_SCOPE, key))) continue;
      const input = await enqueueContentInput(tx, deps, agent, { deliveryMode: delivery, actorId: actor.id, prepared, key, digest });
      if (cancel) await cancelOpenInteractions(tx, agent, input.id);
      reached += 1;
    }
    return { subscribers, reached };
  });
}
