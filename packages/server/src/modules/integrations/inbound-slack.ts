import type { Database } from "../../platform/db/index.js";
import { decodeId } from "../../platform/ids.js";
import type { ArtifactsService } from "../artifacts/service.js";
import { steerSubscribers } from "./conversation-inputs.js";
import type { ReceiptHandler } from "./inbound-processor.js";
import { launchForConversation } from "./launch-service.js";
import type { SlackBot } from "./slack-bot.js";
import type { IntegrationRow } from "./store.js";

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
export function slackReceiptHandlers(deps: { db: Database; artifacts: ArtifactsService; bot: SlackBot }): Record<string, ReceiptHandler> {
  return {
    /** A reply in a thread steers the thread's subscribers; the bot user's own messages never do. */
    async message(receipt, integration) {
      const message = messageOf(receipt.payload);
      if (!message?.threadTs || message.user === integration.providerAccountRef) return;
      await steerSubscribers(deps, integration, {
        conversation: { channel_id: message.channel, thread_ts: message.threadTs },
        person: { tenantId: message.teamId, userId: message.user },
        text: message.text.trim() === "" ? NO_TEXT : message.text,
        eventId: message.eventId,
      });
    },

    /**
     * A mention launches the launcher's profile in the mention's thread (its own ts when it starts one).
     * A thread an earlier launch owns launches nothing: its replies steer that agent instead.
     */
    async app_mention(receipt, integration) {
      const message = messageOf(receipt.payload);
      if (!message || message.user === integration.providerAccountRef) return;
      const profiles = launcherProfiles(integration, message.channel);
      if (profiles.length !== 1) return;
      const mention = integration.providerAccountRef ? `<@${integration.providerAccountRef}>` : "";
      const text = message.text.replaceAll(mention, "").trim();
      const outcome = await launchForConversation(deps, {
        integration,
        profileId: profiles[0]!,
        conversation: { channel_id: message.channel, thread_ts: message.threadTs ?? message.ts },
        person: { tenantId: message.teamId, userId: message.user },
        text: text === "" ? NO_TEXT : text,
        key: `slack:${integration.id}:${message.eventId}`,
      });
      if (!outcome.launched) return;
      // After the launch: a failed reaction retries the receipt, and the launch finds its agent by key.
      await deps.bot.call(integration, "reactions.add", { channel: message.channel, timestamp: message.ts, name: ACK_REACTION }, ["already_reacted"]);
    },
  };
}
