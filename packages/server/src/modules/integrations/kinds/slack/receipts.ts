import type { Database } from "../../../../platform/db/index.js";
import { decodeId } from "../../../../platform/ids.js";
import type { ArtifactsService } from "../../../artifacts/service.js";
import { steerSubscribers } from "../../conversation-inputs.js";
import type { ReceiptHandler } from "../../inbound-processor.js";
import { encodeId, isUuid } from "../../../../platform/ids.js";
import { markChoicePosted, openChoice, takeChoice } from "../../launch-choices.js";
import { launchForConversation } from "../../launch-service.js";
import type { KindCatalog } from "../../capability-schemas.js";
import { conversationLaunched } from "../../launch-store.js";
import { canonicalJson } from "../../subscriptions-service.js";
import type { SlackBot } from "./bot.js";
import { ANSWER_ACTION, answerByClick, postInteraction } from "./interaction-handler.js";
import { INTERACTION_OPENED } from "../../interaction-delivery.js";
import type { IntegrationRow } from "../../store.js";
import { savePayload } from "../../inbound-store.js";
import { AppError } from "../../../../platform/errors.js";
import { SCHEDULED_OCCURRENCE, type ScheduledOccurrence } from "../../../cron-triggers/integration-target.js";

/** What the Slack receiver kept of an event (integrations/slack/inbound.ts): checked again here, member by member. */
interface SlackEventPayload {
  team_id: string;
  event_id: string;
  event: { user?: unknown; channel?: unknown; ts?: unknown; thread_ts?: unknown; text?: unknown };
}

/** A message without text (a file alone) still reaches the agent: it learns that someone wrote. */
const NO_TEXT = "(a Slack message without text)";
/** The reaction that tells the asker the mention was heard (reference design brief §9: "Add a reaction to acknowledge"). */
const ACK_REACTION = "eyes";

interface SlackMessage {
  teamId: string;
  eventId: string;
  user: string;
  channel: string;
  ts: string;
  threadTs: string | undefined;
  text: string;
}

function messageOf(payload: Record<string, unknown>): SlackMessage | undefined {
  const { team_id: teamId, event_id: eventId, event } = payload as unknown as SlackEventPayload;
  const { user, channel, ts, thread_ts: threadTs, text } = event;
  if (typeof user !== "string" || typeof channel !== "string" || typeof ts !== "string") return undefined;
  return {
    teamId,
    eventId,
    user,
    channel,
    ts,
    threadTs: typeof threadTs === "string" ? threadTs : undefined,
    text: typeof text === "string" ? text : "",
  };
}

/** The launcher's profiles (uuids) for a mention in `channel`, or none: no launcher, an empty one, or another channel. */
function launcherProfiles(integration: IntegrationRow, channel: string): string[] {
  const launcher = integration.settings["launcher"] as { channel_id?: string; profiles?: string[] } | undefined;
  if (!launcher || (launcher.channel_id !== undefined && launcher.channel_id !== channel)) return [];
  return (launcher.profiles ?? []).flatMap((id) => decodeId("agentProfile", id) ?? []);
}

/** `slack_thread` receipts by event kind. */
export function slackReceiptHandlers(deps: { db: Database; artifacts: ArtifactsService; catalog: KindCatalog; bot: SlackBot }): Record<string, ReceiptHandler> {
  return {
    /** A reply in a thread steers the thread's subscribers; the bot user's own messages never do. */
    async message(receipt, integration) {
      const message = messageOf(receipt.payload);
      if (!message?.threadTs || message.user === integration.providerAccountRef) return;
      // Slack also sends a mention as app_mention, whose handler decides between launching and steering.
      if (integration.providerAccountRef && message.text.includes(`<@${integration.providerAccountRef}>`)) return;
      await steerSubscribers(deps, integration, {
        conversation: { channel_id: message.channel, thread_ts: message.threadTs },
        person: { tenantId: message.teamId, userId: message.user },
        text: message.text.trim() === "" ? NO_TEXT : message.text,
        messageKey: `${message.channel}:${message.ts}`,
      });
    },

    /**
     * A mention launches the launcher's profile in the mention's thread (its own ts when it starts one),
     * or offers a chooser of several. A thread an earlier launch owns launches nothing; there, and without
     * a launcher, the mention steers the thread's subscribers like any reply.
     */
    async app_mention(receipt, integration) {
      const message = messageOf(receipt.payload);
      if (!message || message.user === integration.providerAccountRef) return;
      const profiles = launcherProfiles(integration, message.channel);
      const mention = integration.providerAccountRef ? `<@${integration.providerAccountRef}>` : "";
      const stripped = message.text.replaceAll(mention, "").trim();
      const request = {
        integration,
        conversation: { channel_id: message.channel, thread_ts: message.threadTs ?? message.ts },
        person: { tenantId: message.teamId, userId: message.user },
        text: stripped === "" ? NO_TEXT : stripped,
      };
      let heard = false;
      let launchedAgentId: string | undefined;
      if (profiles.length > 1) {
        heard = await offerChoice(deps, request, profiles, message.eventId);
      } else if (profiles.length === 1) {
        const outcome = await launchForConversation(deps, { ...request, profileId: profiles[0]!, key: `slack:${encodeId("integration", integration.id)}:${message.eventId}` });
        if (outcome.launched) [heard, launchedAgentId] = [true, outcome.agentId];
      }
      // The thread's subscribers hear the mention too, except the agent it launched (its opening input).
      await steerSubscribers(deps, integration, { ...request, messageKey: `${message.channel}:${message.ts}`, exceptAgentIds: launchedAgentId ? [launchedAgentId] : [] });
      if (!heard) return;
      // After the launch: a failed reaction retries the receipt, and the launch finds its agent by key.
      await deps.bot.call(integration, "reactions.add", { channel: message.channel, timestamp: message.ts, name: ACK_REACTION }, ["already_reacted"]);
    },

    /**
     * A schedule's slot (cron-triggers/integration-target.ts): posts the opening message in the channel,
     * keeps its ts on the receipt at once (a retry reuses that thread, never posts again), then launches
     * the profile in the new thread with the rendered message, attributed to no person.
     */
    async [SCHEDULED_OCCURRENCE](receipt, integration) {
      const occurrence = receipt.payload as unknown as ScheduledOccurrence;
      let threadTs = occurrence.posted_ts;
      if (threadTs === undefined) {
        const posted = await deps.bot.call(integration, "chat.postMessage", { channel: occurrence.channel_id, text: occurrence.opening_message });
        if (typeof posted?.["ts"] !== "string") throw new AppError("upstream_unavailable", "Slack answered chat.postMessage without a ts");
        threadTs = posted["ts"];
        await deps.db.tx((tx) => savePayload(tx, receipt.id, { ...occurrence, posted_ts: threadTs }));
      }
      // Checked when the schedule was saved; a receipt naming no profile can never launch (failed, not retried).
      const profileId = decodeId("agentProfile", occurrence.agent_profile_id);
      if (!profileId) throw new AppError("invalid_request", "the scheduled occurrence names no agent profile");
      await launchForConversation(deps, {
        integration,
        profileId,
        conversation: { channel_id: occurrence.channel_id, thread_ts: threadTs },
        text: occurrence.message,
        key: `slack:${encodeId("integration", integration.id)}:${receipt.providerEventId}`,
      });
    },

    /** An interaction the agent's handler routed here: posted to the agent's thread with answer buttons. */
    async [INTERACTION_OPENED](receipt, integration) {
      await postInteraction(deps, receipt, integration);
    },

    /**
     * A click: an answer button answers its interaction; a pick in a profile chooser, the first pick of an
     * open menu, launches that profile. Later clicks change nothing.
     */
    async block_actions(receipt, integration) {
      const action = receipt.payload["action"] as { action_id?: unknown; value?: unknown } | undefined;
      if (typeof action?.action_id !== "string" || typeof action.value !== "string") return;
      if (action.action_id.startsWith(ANSWER_ACTION)) return answerByClick(deps, receipt, integration, action.value);
      if (!action.action_id.startsWith(CHOOSER_ACTION)) return;
      const [choiceId, profileId] = action.value.split(":");
      if (!choiceId || !profileId || !isUuid(choiceId) || !isUuid(profileId)) return;
      const taken = await deps.db.tx((tx) => takeChoice(tx, integration.id, choiceId, profileId, receipt.providerEventId));
      if (!taken) return;
      await launchForConversation(deps, {
        integration,
        profileId,
        conversation: taken.conversation,
        person: { tenantId: taken.personTenantId, userId: taken.personUserId },
        text: taken.text,
        key: `slack:${encodeId("integration", integration.id)}:${taken.sourceEventId}`,
      });
    },
  };
}

/** Button action ids of a profile chooser; the value is `<choice id>:<profile id>`. */
const CHOOSER_ACTION = "svc_launch_";
/** Slack's limit on a button's text. */
const MAX_BUTTON_TEXT = 75;

/**
 * Posts the chooser in the mention's thread, once per mention (a redelivery finds it posted). False when
 * the thread is launched already or no offered profile exists any more.
 */
async function offerChoice(
  deps: { db: Database; bot: SlackBot },
  request: { integration: IntegrationRow; conversation: { channel_id: string; thread_ts: string }; person: { tenantId: string; userId: string }; text: string },
  profiles: string[],
  eventId: string,
): Promise<boolean> {
  const { integration, conversation } = request;
  if (await deps.db.tx((tx) => conversationLaunched(tx, integration.id, canonicalJson(conversation)))) return false;
  const { choice, options } = await openChoice(deps.db, { ...request, sourceEventId: eventId, profileIds: profiles });
  if (options.length === 0) return false;
  if (choice.postedTs !== null) return true;
  const buttons = options.map((option, index) => ({
    type: "button",
    action_id: `${CHOOSER_ACTION}${index}`,
    text: { type: "plain_text", text: option.name.slice(0, MAX_BUTTON_TEXT) || `Profile ${index + 1}` },
    value: `${choice.id}:${option.profileId}`,
  }));
  const prompt = "Which agent should take this? The first choice starts it; this menu expires in an hour.";
  const blocks = [
    { type: "section", text: { type: "mrkdwn", text: prompt } },
    { type: "actions", elements: buttons },
  ];
  const posted = await deps.bot.call(integration, "chat.postMessage", {
    channel: conversation.channel_id,
    thread_ts: conversation.thread_ts,
    text: prompt,
    blocks: JSON.stringify(blocks),
  });
  if (typeof posted?.["ts"] === "string") await markChoicePosted(deps.db, choice.id, posted["ts"]);
  return true;
}
