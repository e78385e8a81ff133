import { idPattern } from "../../../../platform/ids.js";
import type { IntegrationKindCatalog } from "../../kind.js";
import { pathsSchema } from "../attachments.js";

/**
 * The `discord_thread` catalog (docs/integrations.md; reference docs: integrations/discord "Thread tools
 * and subscriptions", "Scheduled threads"). Discord ids are snowflakes: decimal numbers of up to 20 digits.
 */
export const DISCORD_SNOWFLAKE = "^[0-9]{15,20}$";
/** Discord takes at most 10 attachments in one message (Discord docs: "Uploading Files"). */
export const MAX_ATTACHMENTS = 10;
/** A Discord select menu offers at most 25 options, the most a profile chooser can offer. */
export const MAX_LAUNCHER_PROFILES = 25;

const snowflake = (description: string) => ({ type: "string", pattern: DISCORD_SNOWFLAKE, description });
const profileId = { type: "string", pattern: idPattern("agentProfile") };

export const discordThreadCatalog: IntegrationKindCatalog = {
  name: "discord_thread",
  description: "A Discord bot: mentions start agents in threads, thread messages steer them, questions and approvals are answered with buttons.",
  capabilities: {
    tools: {
      read: {
        description: "Reads the messages of the Discord thread assigned to this agent, newest first. Pass the oldest message id as before for earlier ones.",
        input_schema: {
          type: "object",
          properties: {
            before: snowflake("Only messages older than this message id."),
            limit: { type: "integer", minimum: 1, maximum: 100 },
          },
          additionalProperties: false,
        },
      },
      post_message: {
        description:
          "Posts a message to the Discord thread assigned to this agent, with up to 10 attachments in all: artifacts by artifact_ids, " +
          "or stored files by exact paths (/artifacts/<artifact_id>, /memory/<store>/<file>).",
        input_schema: {
          type: "object",
          properties: {
            content: { type: "string", minLength: 1, maxLength: 2000 },
            artifact_ids: { type: "array", items: { type: "string", pattern: idPattern("artifact") }, maxItems: MAX_ATTACHMENTS, uniqueItems: true },
            paths: pathsSchema(MAX_ATTACHMENTS),
          },
          required: ["content"],
          additionalProperties: false,
        },
      },
    },
    settings: {
      description:
        "The integration's settings. With launcher.profiles, a mention of the bot user or its managed role starts an agent in a thread: " +
        "one profile starts at once, several offer a menu. An empty list launches nothing.",
      input_schema: {
        type: "object",
        properties: {
          launcher: {
            type: "object",
            properties: { profiles: { type: "array", items: profileId, maxItems: MAX_LAUNCHER_PROFILES, uniqueItems: true } },
            required: ["profiles"],
            additionalProperties: false,
          },
        },
        additionalProperties: false,
      },
    },
    subscription: {
      conversation_schema: {
        type: "object",
        description: "A thread (thread_id; guild_id and channel_id optional), or a channel (channel_id without thread_id).",
        properties: {
          guild_id: snowflake("The server (guild) id."),
          channel_id: snowflake("The parent channel id, or the channel of a channel subscription."),
          thread_id: snowflake("The thread id."),
        },
        anyOf: [{ required: ["thread_id"] }, { required: ["channel_id"] }],
        additionalProperties: false,
      },
    },
    interaction_handler: {
      description: "Posts questions and approvals to the agent's assigned Discord thread, with buttons to answer them.",
      input_schema: { type: "object", properties: {}, additionalProperties: false },
    },
    schedule: {
      description: "Posts the opening message in a server text or announcement channel and starts the profile in its new thread.",
      input_schema: {
        type: "object",
        properties: {
          agent_profile_id: profileId,
          channel_id: snowflake("A server text or announcement channel."),
          opening_message_template: { type: "string", minLength: 1, maxLength: 2000 },
          message_template: { type: "string", minLength: 1, maxLength: 65536 },
        },
        required: ["agent_profile_id", "channel_id", "opening_message_template", "message_template"],
        additionalProperties: false,
      },
    },
  },
};
