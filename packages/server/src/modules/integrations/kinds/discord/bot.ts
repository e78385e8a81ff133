import type { Database } from "../../../../platform/db/index.js";
import { AppError } from "../../../../platform/errors.js";
import type { OutboundPolicy } from "../../../../platform/net/outbound.js";
import type { IntegrationRow } from "../../store.js";
import type { SecretsService } from "../../../secrets/service.js";
import { createRestClient, objectMember, scalarMember, type RestAnswer } from "../rest.js";

/** Discord's channel types that are threads (Discord docs: "Channel Object", announcement, public and private threads). */
const THREAD_TYPES = new Set([10, 11, 12]);
/** Discord's error code for "A thread has already been created for this message". */
const THREAD_ALREADY_CREATED = 160004;
/** A thread name is 1 to 100 characters. */
const MAX_THREAD_NAME = 100;
/** The acknowledgement reaction (reference docs: integrations/discord, "The bot adds an eyes reaction"). */
const ACK_EMOJI = encodeURIComponent("👀");

export interface DiscordChannel {
  id: string;
  isThread: boolean;
}

/**
 * Discord's REST API as an integration's bot, the token read from its credential on every call (a
 * rotation needs no restart). A 429 is `rate_limited` with Discord's retry delay (integrations/rest.ts),
 * which the receipt processor turns into a durable retry; any other refusal is `upstream_unavailable`.
 */
export function createDiscordBot(deps: { db: Database; secrets: Pick<SecretsService, "resolvePayload">; apiUrl: string; policy: OutboundPolicy }) {
  const rest = createRestClient({ provider: "Discord", baseUrl: deps.apiUrl, policy: deps.policy });

  async function call(integration: IntegrationRow, method: "GET" | "POST" | "PUT", path: string, json?: unknown): Promise<RestAnswer> {
    if (integration.credentialSecretId === null) throw new AppError("conflict", "the integration has no credential");
    const material = await deps.db.tx((tx) => deps.secrets.resolvePayload(tx, integration.orgId, integration.projectId, integration.credentialSecretId!));
    if (material.kind !== "generic") throw new AppError("conflict", "the integration's credential is not a generic secret");
    return rest.call(method, path, { authorization: `Bot ${material.value}` }, json);
  }

  function refused(what: string, answer: RestAnswer): AppError {
    return new AppError("upstream_unavailable", `Discord refused ${what} (HTTP ${answer.status}${codeOf(answer) === undefined ? "" : `, code ${codeOf(answer)}`})`);
  }

  return {
    /** `GET /channels/{id}`: whether the message's channel is already a thread. */
    async channel(integration: IntegrationRow, channelId: string): Promise<DiscordChannel> {
      const answer = await call(integration, "GET", `/channels/${channelId}`);
      const type = (answer.body as Record<string, unknown> | undefined)?.["type"];
      if (answer.status !== 200 || typeof type !== "number") throw refused("the channel lookup", answer);
      return { id: channelId, isThread: THREAD_TYPES.has(type) };
    },

    /**
     * `POST /channels/{channel}/messages/{message}/threads`: the public thread on the mention. A retry
     * finds it made already; such a thread's id is the message's (Discord docs: "Start Thread from Message").
     */
    async startThread(integration: IntegrationRow, channelId: string, messageId: string, name: string): Promise<string> {
      const answer = await call(integration, "POST", `/channels/${channelId}/messages/${messageId}/threads`, { name: name.slice(0, MAX_THREAD_NAME) || "svc" });
      if (answer.status === 400 && codeOf(answer) === THREAD_ALREADY_CREATED) return messageId;
      const id = scalarMember(answer.body, "id");
      if ((answer.status !== 200 && answer.status !== 201) || !id) throw refused("starting a thread", answer);
      return id;
    },

    /** `POST /channels/{channel}/messages`; answers the message id. */
    async postMessage(integration: IntegrationRow, channelId: string, message: Record<string, unknown>): Promise<string> {
      const answer = await call(integration, "POST", `/channels/${channelId}/messages`, { ...message, allowed_mentions: { parse: [] } });
      const id = scalarMember(answer.body, "id");
      if (answer.status !== 200 || !id) throw refused("posting a message", answer);
      return id;
    },

    /** Adds the acknowledgement reaction; a missing Add Reactions permission does not fail the event (reference docs: integrations/discord). */
    async acknowledge(integration: IntegrationRow, channelId: string, messageId: string): Promise<void> {
      await call(integration, "PUT", `/channels/${channelId}/messages/${messageId}/reactions/${ACK_EMOJI}/@me`);
    },

    /** The guild's role Discord manages for this bot (`tags.bot_id`), if any: mentioning it is mentioning the bot. */
    async managedRole(integration: IntegrationRow, guildId: string): Promise<string | undefined> {
      const answer = await call(integration, "GET", `/guilds/${guildId}/roles`);
      if (answer.status !== 200 || !Array.isArray(answer.body)) throw refused("the role lookup", answer);
      const role = answer.body.find((candidate: unknown) => scalarMember(objectMember(candidate, "tags"), "bot_id") === integration.providerAccountRef);
      return scalarMember(role, "id");
    },
  };
}

export type DiscordBot = ReturnType<typeof createDiscordBot>;

const codeOf = (answer: RestAnswer): number | undefined => {
  const code = (answer.body as Record<string, unknown> | undefined)?.["code"];
  return typeof code === "number" ? code : undefined;
};
