import { createPublicKey, verify } from "node:crypto";
import type { Database } from "../../../../platform/db/index.js";
import { AppError, unauthorized } from "../../../../platform/errors.js";
import type { ArtifactsService } from "../../../artifacts/service.js";
import type { KindCatalog } from "../../capability-schemas.js";
import { componentHandlers, MAX_CALLBACK_BYTES, parseSignedJson, type ComponentAnswer } from "../../inbound.js";
import type { InboundAcceptor } from "../../inbound-service.js";
import type { InboundReceiver } from "../../kind.js";
import type { IntegrationRow } from "../../store.js";
import { DISCORD_SNOWFLAKE } from "./catalog.js";
import { discordAnswerHandler } from "./interaction-handler.js";
import { discordLaunchChoiceHandler } from "./receipts.js";

/** Discord's interaction and callback types (Discord docs: "Receiving and Responding"). */
const PING = 1;
const MESSAGE_COMPONENT = 3;
const PONG = 1;
const CHANNEL_MESSAGE_WITH_SOURCE = 4;
const UPDATE_MESSAGE = 7;
const EPHEMERAL = 1 << 6;
/** The DER prefix that makes a raw 32-byte Ed25519 key an SPKI public key node:crypto reads. */
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");
/** What the clicker sees when no handler issued the component's custom id (an expired menu, a question answered elsewhere). */
export const UNKNOWN_COMPONENT_REPLY = "This action is no longer available.";

const SIGNATURE = /^[0-9a-f]{128}$/i;
const TIMESTAMP = /^[0-9]{1,12}$/;
const PUBLIC_KEY = /^[0-9a-f]{64}$/i;

/**
 * `POST /api/integrations/discord/{applicationID}/interactions` (reference docs: integrations/discord,
 * "Questions, approvals and profile menus"): Discord's Interactions Endpoint URL. The signature is Ed25519
 * over `timestamp + body`, checked with the public key (provider_config) of each integration connected to
 * that application before anything is read from the body.
 */
export const discordInbound: InboundReceiver = {
  routes: [{ path: "discord/:applicationID/interactions", endpoint: "interactions" }],
  maxBodyBytes: MAX_CALLBACK_BYTES,
  keyIn: "provider_config",
  signature(request) {
    const applicationId = request.params["applicationID"] ?? "";
    const signature = headerOf(request.headers["x-signature-ed25519"]) ?? "";
    const timestamp = headerOf(request.headers["x-signature-timestamp"]) ?? "";
    if (!new RegExp(DISCORD_SNOWFLAKE).test(applicationId)) throw new AppError("invalid_request", "the path does not name a Discord application");
    if (!SIGNATURE.test(signature) || !TIMESTAMP.test(timestamp)) throw unauthorized("the interaction is not signed");
    return { signedAt: Number(timestamp), tenantId: applicationId };
  },
  keyOf: ({ providerConfig }) => {
    const key = providerConfig["public_key"];
    return typeof key === "string" && PUBLIC_KEY.test(key) ? key : undefined;
  },
  verify(publicKey, request) {
    const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(publicKey, "hex")]), format: "der", type: "spki" });
    const signed = Buffer.concat([Buffer.from(headerOf(request.headers["x-signature-timestamp"]) ?? "", "utf8"), request.rawBody]);
    return verify(null, signed, key, Buffer.from(headerOf(request.headers["x-signature-ed25519"]) ?? "", "hex"));
  },
};

/**
 * The per-integration work once an interaction verified: PING is answered with PONG; a component click
 * goes to the handler that issued its custom id: a profile menu's, or a question's or an approval's buttons.
 */
export function discordAcceptor(deps: { db: Database; artifacts: ArtifactsService; catalog: KindCatalog }): InboundAcceptor {
  const components = componentHandlers([discordLaunchChoiceHandler(deps), discordAnswerHandler(deps)]);
  return {
    async accept(request, signers) {
      const integration = signers.find((row) => row.state === "active");
      if (!integration) throw unauthorized("the interaction's application has no connected integration");
      const interaction = parseSignedJson(request.rawBody);
      if (interaction["type"] === PING) return { status: 200, body: { type: PONG } };
      if (interaction["type"] === MESSAGE_COMPONENT) return { status: 200, body: callbackOf(await components.handle(componentClick(integration, interaction))) };
      return { status: 200, body: callbackOf(undefined) };
    },
  };
}

function componentClick(integration: IntegrationRow, interaction: Record<string, unknown>) {
  const data = objectOf(interaction["data"]);
  const member = objectOf(interaction["member"]);
  const user = objectOf(member["user"] ?? interaction["user"]);
  const values = Array.isArray(data["values"]) ? data["values"].filter((value): value is string => typeof value === "string") : [];
  return {
    integration,
    customId: stringOf(data["custom_id"]),
    values,
    userId: stringOf(user["id"]),
    // Outside a server (no guild), the application stands for the tenant, as for a mention (receipts.ts).
    tenantId: stringOf(interaction["guild_id"]) || (integration.providerTenantId ?? ""),
    channelId: stringOf(interaction["channel_id"]),
    messageId: stringOf(objectOf(interaction["message"])["id"]),
  };
}

/**
 * Discord's interaction response for a handler's answer. No handler knew the custom id: a private reply
 * saying the action is gone, so the clicker sees why nothing happened and Discord does not report a failed
 * interaction.
 */
function callbackOf(answer: ComponentAnswer | undefined) {
  if (answer === undefined) return { type: CHANNEL_MESSAGE_WITH_SOURCE, data: { content: UNKNOWN_COMPONENT_REPLY, flags: EPHEMERAL } };
  if (answer.kind === "update") return { type: UPDATE_MESSAGE, data: { content: answer.content, components: [] } };
  return { type: CHANNEL_MESSAGE_WITH_SOURCE, data: { content: answer.content, flags: EPHEMERAL } };
}

const headerOf = (value: string | string[] | undefined) => (typeof value === "string" ? value : undefined);
const objectOf = (value: unknown): Record<string, unknown> => (typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {});
const stringOf = (value: unknown): string => (typeof value === "string" ? value : "");
