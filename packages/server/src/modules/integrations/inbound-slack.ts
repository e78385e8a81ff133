import type { Database } from "../../platform/db/index.js";
import type { ArtifactsService } from "../artifacts/service.js";
import { steerSubscribers } from "./conversation-inputs.js";
import type { ReceiptHandler } from "./inbound-processor.js";

/** What the Slack receiver kept of a message event (integrations/slack/inbound.ts): checked again here, member by member. */
interface SlackMessagePayload {
  team_id: string;
  event_id: string;
  event: { user?: unknown; channel?: unknown; thread_ts?: unknown; text?: unknown };
}

/** A reply without text (a file alone) still steers: the agent learns that someone answered. */
const NO_TEXT = "(a Slack message without text)";

/** `slack_thread` receipts by event kind. */
export function slackReceiptHandlers(deps: { db: Database; artifacts: ArtifactsService }): Record<string, ReceiptHandler> {
  return {
    /** A reply in a thread steers the thread's subscribers; the bot's own messages never do. */
    async message(receipt, integration) {
      const { team_id: teamId, event_id: eventId, event } = receipt.payload as unknown as SlackMessagePayload;
      const [user, channel, threadTs] = [event.user, event.channel, event.thread_ts];
      if (typeof user !== "string" || typeof channel !== "string" || typeof threadTs !== "string") return;
      if (user === integration.providerAccountRef) return;
      const text = typeof event.text === "string" && event.text.trim() !== "" ? event.text : NO_TEXT;
      await steerSubscribers(deps, integration, {
        conversation: { channel_id: channel, thread_ts: threadTs },
        person: { tenantId: teamId, userId: user },
        text,
        eventId,
      });
    },
  };
}
