import { idPattern } from "../../../../platform/ids.js";
import type { IntegrationKindCatalog } from "../../kind.js";
import { pathsSchema } from "../attachments.js";

/**
 * The `slack_thread` catalog (docs/integrations.md; reference docs: integrations/slack "Thread tools and
 * subscriptions", "Scheduled threads"). Slack ids: channels start with C (public), G (private) or D
 * (direct message); a thread is named by its parent message's `ts`.
 */
export const SLACK_CHANNEL_ID = "^[CDG][A-Z0-9]{2,}$";
const SLACK_TS = "^[0-9]{1,20}\\.[0-9]{1,10}$";
/** The most files one post shares (svc's bound; files.completeUploadExternal takes a list). */
export const MAX_ATTACHMENTS = 20;
/** Slack shows at most 25 buttons in one message, the most a profile chooser can offer. */
export const MAX_LAUNCHER_PROFILES = 25;

const channelId = { type: "string", pattern: SLACK_CHANNEL_ID, description: "A Slack channel id (C…, G… or D…)." };
const profileId = { type: "string", pattern: idPattern("agentProfile") };

export const slackThreadCatalog: IntegrationKindCatalog = {
  name: "slack_thread",
  description: "A Slack bot: mentions start agents in threads, thread replies steer them, questions and approvals are answered in the thread.",
  capabilities: {
    tools: {
      read: {
        description: "Reads the messages of the Slack thread assigned to this agent, oldest first. Pass next_cursor back as cursor for later replies.",
        input_schema: {
          type: "object",
          properties: {
            cursor: { type: "string", minLength: 1, maxLength: 1024 },
            limit: { type: "integer", minimum: 1, maximum: 100 },
          },
          additionalProperties: false,
        },
      },
      post_message: {
        description:
          "Posts a message to the Slack thread assigned to this agent, with up to 20 files in all: artifacts by artifact_ids, " +
          "or stored files by exact paths (/artifacts/<artifact_id>, /memory/<store>/<file>).",
        input_schema: {
          type: "object",
          properties: {
            text: { type: "string", minLength: 1, maxLength: 40000 },
            artifact_ids: { type: "array", items: { type: "string", pattern: idPattern("artifact") }, maxItems: MAX_ATTACHMENTS, uniqueItems: true },
            paths: pathsSchema(MAX_ATTACHMENTS),
          },
          required: ["text"],
          additionalProperties: false,
        },
      },
    },
    settings: {
      description:
        "The integration's settings. With launcher.profiles, a mention of the bot (in launcher.channel_id only, when given) starts an agent " +
        "in its thread: one profile starts at once, several offer a choice. An empty list launches nothing. What agents post (messages, " +
        "question and approval prompts) is escaped so Slack shows it as written: allow_mentions lets their <!here>, <!channel>, " +
        "<!everyone>, <!subteam^…>, <@U…> and <#C…> notify, allow_links lets their <url|label> links through; both are off by default.",
      input_schema: {
        type: "object",
        properties: {
          launcher: {
            type: "object",
            properties: {
              channel_id: channelId,
              profiles: { type: "array", items: profileId, maxItems: MAX_LAUNCHER_PROFILES, uniqueItems: true },
            },
            required: ["profiles"],
            additionalProperties: false,
          },
          allow_mentions: { type: "boolean", description: "Whether agents' mentions notify (broadcasts, user groups, people, channels). Off by default." },
          allow_links: { type: "boolean", description: "Whether agents' <url|label> links are sent as links. Off by default." },
        },
        additionalProperties: false,
      },
    },
    subscription: {
      conversation_schema: {
        type: "object",
        properties: {
          channel_id: channelId,
          thread_ts: { type: "string", pattern: SLACK_TS, description: "The ts of the thread's parent message." },
        },
        required: ["channel_id", "thread_ts"],
        additionalProperties: false,
      },
    },
    interaction_handler: {
      description: "Posts questions and approvals to the agent's assigned Slack thread, with buttons to answer them.",
      input_schema: { type: "object", properties: {}, additionalProperties: false },
    },
    schedule: {
      description: "Posts the opening message in a channel the bot has joined and starts the profile in its new thread.",
      input_schema: {
        type: "object",
        properties: {
          agent_profile_id: profileId,
          channel_id: { ...channelId, pattern: "^[CG][A-Z0-9]{2,}$", description: "A channel the bot has joined; not a direct message." },
          opening_message_template: { type: "string", minLength: 1, maxLength: 2000 },
          message_template: { type: "string", minLength: 1, maxLength: 65536 },
        },
        required: ["agent_profile_id", "channel_id", "opening_message_template", "message_template"],
        additionalProperties: false,
      },
    },
  },
};
