import type { Database } from "../../platform/db/index.js";
import { upsertIntegrationActor } from "../actors/service.js";
import { launchInTx } from "../agents/service.js";
import * as agents from "../agents/store.js";
import type { ArtifactsService } from "../artifacts/service.js";
import type { KindCatalog } from "./capability-schemas.js";
import { deriveLaunchConfig } from "./launch-config.js";
import * as launches from "./launch-store.js";
import * as store from "./store.js";
import { attachForIntegration, canonicalJson } from "./subscriptions-service.js";

/** What a launch from a provider conversation needs; a kind's receipt handlers are handed it. */
export interface LaunchDeps {
  db: Database;
  artifacts: ArtifactsService;
  catalog: KindCatalog;
}

/** A launch an integration makes for a provider conversation (a mention, a chosen profile, a schedule). */
export interface ConversationLaunch {
  integration: store.IntegrationRow;
  /** The profile (uuid) whose current config to launch. */
  profileId: string;
  conversation: Record<string, unknown>;
  /** Who asked, in the provider: the opening input's `integration` actor; none for a schedule (no actor, as a cron trigger's input). */
  person?: { tenantId: string; userId: string };
  text: string;
  /** Unique per provider event: a redelivered event finds the agent it launched. */
  key: string;
  /**
   * Which of several launches of one provider event owns its own claim on the conversation (a GitHub
   * launcher slot's key): each launches once per conversation. Without it the conversation has one owner.
   */
  owner?: string;
}

export type LaunchOutcome = { launched: true; agentId: string; created: boolean } | { launched: false; reason: "conversation_taken" | "integration_inactive" };

/**
 * Kind-neutral launch core (docs/architecture.md, "Inbound events"): in one transaction, with the
 * integration row locked, launches the profile's current config with the integration's tools added
 * (launch-config.ts), attaches the conversation's
 * subscription and records the agent's assignment before the opening input, which is attributed to the
 * asker's integration actor. A conversation an earlier launch of this integration owns launches nothing
 * (reference docs: integrations/overview, "True saved launch ownership prevents a replacement").
 */
export async function launchForConversation(deps: LaunchDeps, launch: ConversationLaunch): Promise<LaunchOutcome> {
  const blocks = [{ type: "text" as const, text: launch.text }];
  const prepared = await deps.artifacts.prepareContentBlocks(blocks, new Set(["text"]));
  const { integration } = launch;
  // The assignment's key marks the conversation taken; a slot's ownership is part of it.
  const conversationKey = canonicalJson(launch.conversation) + (launch.owner === undefined ? "" : ` slot:${launch.owner}`);
  return deps.db.tx(async (tx): Promise<LaunchOutcome> => {
    const locked = await store.findIntegration(tx, integration.orgId, integration.projectId, integration.id, "update");
    if (!locked || locked.state !== "active") return { launched: false, reason: "integration_inactive" };
    const existing = await agents.findByIdempotencyKey(tx, locked.projectId, launch.key);
    if (existing) return { launched: true, agentId: existing.id, created: false };
    if (await launches.conversationLaunched(tx, locked.id, conversationKey)) return { launched: false, reason: "conversation_taken" };
    const actorId = launch.person ? (await upsertIntegrationActor(tx, locked.orgId, locked.projectId, launch.person)).id : null;
    const configId = await deriveLaunchConfig(tx, deps.catalog, locked, launch.profileId);
    const { agent } = await launchInTx(tx, deps, {
      orgId: locked.orgId,
      projectId: locked.projectId,
      profileId: launch.profileId,
      configId,
      message: { text: launch.text, prepared, actorId },
      key: launch.key,
      attach: async (row) => {
        await attachForIntegration(tx, deps.catalog, locked, row.id, launch.conversation);
        await launches.insertAssignment(tx, {
          orgId: locked.orgId,
          projectId: locked.projectId,
          integrationId: locked.id,
          agentId: row.id,
          conversation: launch.conversation,
          conversationKey,
        });
      },
    });
    return { launched: true, agentId: agent.agent.id, created: true };
  });
}
