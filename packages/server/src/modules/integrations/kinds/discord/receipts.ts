import type { DiscordBot } from "./bot.js";
import type { ComponentHandler } from "../../inbound.js";
import type { Database } from "../../../../platform/db/index.js";
import { AppError } from "../../../../platform/errors.js";
import { decodeId, encodeId, isUuid } from "../../../../platform/ids.js";
import type { ArtifactsService } from "../../../artifacts/service.js";
import * as agents from "../../../agents/store.js";
import { SCHEDULED_OCCURRENCE, type ScheduledOccurrence } from "../../../cron-triggers/integration-target.js";
import { steerSubscribers } from "../../conversation-inputs.js";
import { postDiscordInteraction } from "./interaction-handler.js";
import { savePayload } from "../../inbound-store.js";
import { INTERACTION_OPENED } from "../../interaction-delivery.js";
import type { ReceiptHandler } from "../../inbound-processor.js";
import { markChoicePosted, openChoice, takeChoice } from "../../launch-choices.js";
import { launchForConversation } from "../../launch-service.js";
import type { KindCatalog } from "../../capability-schemas.js";
import { conversationLaunched } from "../../launch-store.js";
import { canonicalJson } from "../../subscriptions-service.js";
import type { IntegrationRow } from "../../store.js";

/** A message without text (an attachment alone) still reaches the agent: it learns that someone wrote. */
const NO_TEXT = "(a Discord message without text)";
/** Discord's message types a person writes: DEFAULT and REPLY (Discord docs: "Message Types"). */
const PERSON_MESSAGE_TYPES = new Set([0, 19]);
/** Custom ids of profile menus: `svc_launch:<choice id>`, each option's value a profile id. */
const CHOOSER_PREFIX = "svc_launch:";
const MAX_OPTION_LABEL = 100;
const SNOWFLAKE = /^[0-9]{15,20}$/;

type Deps = { db: Database; artifacts: ArtifactsService; catalog: KindCatalog; bot: DiscordBot };

/** What svc reads of a Gateway MESSAGE_CREATE, checked member by member: the payload is Discord's, stored as sent. */
interface DiscordMessage {
  id: string;
  channelId: string;
  guildId: string | undefined;
  authorId: string;
  authorIsBot: boolean;
  type: number;
  content: string;
  mentions: string[];
  mentionRoles: string[];
}

function messageOf(payload: Record<string, unknown>): DiscordMessage | undefined {
  const author = objectOf(payload["author"]);
  const [id, channelId, authorId] = [payload["id"], payload["channel_id"], author["id"]];
  if (!isSnowflake(id) || !isSnowflake(channelId) || !isSnowflake(authorId)) return undefined;
  const guildId = payload["guild_id"];
  return {
    id,
    channelId,
    guildId: isSnowflake(guildId) ? guildId : undefined,
    authorId,
    authorIsBot: author["bot"] === true,
    type: typeof payload["type"] === "number" ? payload["type"] : -1,
    content: typeof payload["content"] === "string" ? payload["content"] : "",
    mentions: Array.isArray(payload["mentions"]) ? payload["mentions"].flatMap((user) => (isSnowflake(objectOf(user)["id"]) ? [objectOf(user)["id"] as string] : [])) : [],
    mentionRoles: Array.isArray(payload["mention_roles"]) ? payload["mention_roles"].filter(isSnowflake) : [],
  };
}

/** The launcher's profiles (uuids); none without a launcher. */
function launcherProfiles(integration: IntegrationRow): string[] {
  const launcher = integration.settings["launcher"] as { profiles?: string[] } | undefined;
  return (launcher?.profiles ?? []).flatMap((id) => decodeId("agentProfile", id) ?? []);
}

/** The text without user, role and channel mentions, or NO_TEXT when nothing is left. */
function textOf(message: DiscordMessage): string {
  const stripped = message.content.replace(/<@[!&]?[0-9]+>/g, "").trim();
  return stripped === "" ? NO_TEXT : stripped;
}

/** `discord_thread` receipts by event kind: the Gateway stores MESSAGE_CREATE dispatches. */
export function discordReceiptHandlers(deps: Deps): Record<string, ReceiptHandler> {
  return {
    /**
     * A mention of the bot user or its managed role, outside a thread an earlier launch owns, launches the
     * launcher's profile (a parent channel's mention gets a new thread first) or offers a menu of several.
     * Then the message steers the agents subscribed to its thread, keyed by the message id, except the
     * one it launched (its opening input). Bots never do either.
     */
    async MESSAGE_CREATE(receipt, integration) {
      const message = messageOf(receipt.payload);
      if (!message || message.authorIsBot || message.authorId === integration.providerAccountRef || !PERSON_MESSAGE_TYPES.has(message.type)) return;
      const person = { tenantId: message.guildId ?? integration.providerTenantId ?? "", userId: message.authorId };
      const here = { thread_id: message.channelId };
      let launched: string | undefined;
      if (launcherProfiles(integration).length > 0 && (await mentionsBot(deps.bot, integration, message)) && !(await ownedElsewhere(deps.db, integration, here, message.id))) {
        launched = await launchFromMention(deps, integration, message, person);
      }
      await steerSubscribers(deps, integration, { conversation: here, person, text: textOf(message), messageKey: message.id, exceptAgentIds: launched ? [launched] : [] });
    },

    /** An interaction the agent's handler routed here: posted to the agent's thread with answer buttons. */
    async [INTERACTION_OPENED](receipt, integration) {
      await postDiscordInteraction(deps, receipt, integration);
    },

    /**
     * A schedule's occurrence (reference docs: integrations/discord, "Scheduled threads"): posts the opening
     * message in the channel and saves its id on the receipt at once (a retry never posts again), starts a
     * thread on it (a retry finds it started), then launches the profile in the thread with the rendered
     * message, attributed to no person.
     */
    async [SCHEDULED_OCCURRENCE](receipt, integration) {
      const occurrence = receipt.payload as unknown as ScheduledOccurrence;
      let messageId = occurrence.posted_message_id;
      if (messageId === undefined) {
        messageId = await deps.bot.postMessage(integration, occurrence.channel_id, { content: occurrence.opening_message });
        const posted = { ...occurrence, posted_message_id: messageId };
        await deps.db.tx((tx) => savePayload(tx, receipt.id, posted));
      }
      // Checked when the schedule was saved; a receipt naming no profile can never launch (failed, not retried).
      const profileId = decodeId("agentProfile", occurrence.agent_profile_id);
      if (!profileId) throw new AppError("invalid_request", "the scheduled occurrence names no agent profile");
      const threadId = await deps.bot.startThread(integration, occurrence.channel_id, messageId, threadName(occurrence.opening_message));
      await launchForConversation(deps, { integration, profileId, conversation: { thread_id: threadId }, text: occurrence.message, key: launchKey(integration, receipt.providerEventId) });
    },
  };
}

/** A thread's name from its opening message: the first line, which Discord shows in the channel's thread list. */
const threadName = (opening: string) => opening.split("\n", 1)[0]!.trim();

/** Mentions the bot user, or its Discord-managed role (verified with Discord, not by name). */
async function mentionsBot(bot: DiscordBot, integration: IntegrationRow, message: DiscordMessage): Promise<boolean> {
  if (integration.providerAccountRef && message.mentions.includes(integration.providerAccountRef)) return true;
  if (message.mentionRoles.length === 0 || !message.guildId) return false;
  const role = await bot.managedRole(integration, message.guildId);
  return role !== undefined && message.mentionRoles.includes(role);
}

/**
 * Whether an earlier launch, not this message's own, owns the message's thread: then the mention is a
 * message like any other, and Discord is not asked anything. This message's launch is found again on a
 * retry (by its key), so a receipt retried after launching finishes its work.
 */
async function ownedElsewhere(db: Database, integration: IntegrationRow, here: { thread_id: string }, messageId: string): Promise<boolean> {
  return db.tx(async (tx) => (await conversationLaunched(tx, integration.id, canonicalJson(here))) && !(await agents.findByIdempotencyKey(tx, integration.projectId, launchKey(integration, messageId))));
}

/** Launches (or offers the menu) and acknowledges; answers the launched agent, if one profile was launched. */
async function launchFromMention(deps: Deps, integration: IntegrationRow, message: DiscordMessage, person: { tenantId: string; userId: string }): Promise<string | undefined> {
  const channel = await deps.bot.channel(integration, message.channelId);
  const text = textOf(message);
  const threadId = channel.isThread ? channel.id : await deps.bot.startThread(integration, message.channelId, message.id, text);
  const request = { integration, conversation: { thread_id: threadId }, person, text };
  const profiles = launcherProfiles(integration);
  let agentId: string | undefined;
  let heard: boolean;
  if (profiles.length > 1) {
    heard = await offerChoice(deps, request, profiles, message.id);
  } else {
    const outcome = await launchForConversation(deps, { ...request, profileId: profiles[0]!, key: launchKey(integration, message.id) });
    [heard, agentId] = outcome.launched ? [true, outcome.agentId] : [false, undefined];
  }
  // After the launch: a failed reaction retries the receipt, and the launch finds its agent by key.
  if (heard) await deps.bot.acknowledge(integration, message.channelId, message.id);
  return agentId;
}

const launchKey = (integration: IntegrationRow, messageId: string) => `discord:${encodeId("integration", integration.id)}:${messageId}`;

/**
 * Posts the profile menu in the thread, once per mention (a redelivery finds it posted), and not at all
 * while another mention's menu is open there (that one still decides); false when no offered profile
 * exists any more.
 */
async function offerChoice(
  deps: Deps,
  request: { integration: IntegrationRow; conversation: { thread_id: string }; person: { tenantId: string; userId: string }; text: string },
  profiles: string[],
  messageId: string,
): Promise<boolean> {
  const { choice, options } = await openChoice(deps.db, { ...request, sourceEventId: messageId, profileIds: profiles, onePerConversation: true });
  if (options.length === 0) return false;
  if (choice.postedTs !== null || choice.sourceEventId !== messageId) return true;
  const content = "Which agent should take this? The first choice starts it; this menu expires in an hour.";
  const menu = {
    type: 3,
    custom_id: `${CHOOSER_PREFIX}${choice.id}`,
    placeholder: "Choose an agent profile",
    options: options.map((option, index) => ({ label: option.name.slice(0, MAX_OPTION_LABEL) || `Profile ${index + 1}`, value: option.profileId })),
  };
  const posted = await deps.bot.postMessage(request.integration, request.conversation.thread_id, { content, components: [{ type: 1, components: [menu] }] });
  await markChoicePosted(deps.db, choice.id, posted);
  return true;
}

/**
 * The profile menu's clicks, through the interactions endpoint: the first pick of an unexpired menu
 * launches that profile in the menu's thread; later clicks are told it is taken. Not this seam's custom id: undefined.
 */
export function discordLaunchChoiceHandler(deps: { db: Database; artifacts: ArtifactsService; catalog: KindCatalog }): ComponentHandler {
  return async (click) => {
    if (!click.customId.startsWith(CHOOSER_PREFIX)) return undefined;
    const choiceId = click.customId.slice(CHOOSER_PREFIX.length);
    const profileId = click.values[0];
    if (!isUuid(choiceId) || !profileId || !isUuid(profileId)) return undefined;
    const taken = await deps.db.tx((tx) => takeChoice(tx, click.integration.id, choiceId, profileId, `${click.messageId}:${click.userId}`));
    if (!taken) return { kind: "reply", content: "This menu was already answered or has expired." };
    const outcome = await launchForConversation(deps, {
      integration: click.integration,
      profileId,
      conversation: taken.conversation,
      person: { tenantId: taken.personTenantId, userId: taken.personUserId },
      text: taken.text,
      key: launchKey(click.integration, taken.sourceEventId),
    });
    if (!outcome.launched) return { kind: "update", content: "This thread already has an agent." };
    return { kind: "update", content: `Started by <@${click.userId}>.` };
  };
}

const isSnowflake = (value: unknown): value is string => typeof value === "string" && SNOWFLAKE.test(value);
const objectOf = (value: unknown): Record<string, unknown> => (typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {});
