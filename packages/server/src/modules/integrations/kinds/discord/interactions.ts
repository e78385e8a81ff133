import { createPublicKey, verify } from "node:crypto";
import { sql } from "drizzle-orm";
import { Type } from "typebox";
import type { Database } from "../../../../platform/db/index.js";
import { rawRows } from "../../../../platform/db/index.js";
import { unauthorized } from "../../../../platform/errors.js";
import type { HttpApp } from "../../../../platform/http/app.js";
import type { IntegrationRow } from "../../store.js";
import { routableIntegrations } from "../../inbound-store.js";
import type { ArtifactsService } from "../../../artifacts/service.js";
import type { KindCatalog } from "../../capability-schemas.js";
import { componentHandlers, parseSignedJson, rawBody, rawJsonBodies, type ComponentAnswer } from "../../inbound.js";
import { discordAnswerHandler } from "./interaction-handler.js";
import { discordLaunchChoiceHandler } from "./receipts.js";
import { DISCORD_SNOWFLAKE } from "./catalog.js";

/** Discord's interaction and callback types (Discord docs: "Receiving and Responding"). */
const PING = 1;
const MESSAGE_COMPONENT = 3;
const PONG = 1;
const CHANNEL_MESSAGE_WITH_SOURCE = 4;
const UPDATE_MESSAGE = 7;
const EPHEMERAL = 1 << 6;
/** A signed request older or newer than this is refused: a captured callback cannot be replayed later. */
const MAX_SKEW_SECONDS = 300;
/** The DER prefix that makes a raw 32-byte Ed25519 key an SPKI public key node:crypto reads. */
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");
/** What the clicker sees when no handler issued the component's custom id (an expired menu, a question answered elsewhere). */
export const UNKNOWN_COMPONENT_REPLY = "This action is no longer available.";

/**
 * `POST /api/integrations/discord/{applicationID}/interactions` (reference docs: integrations/discord,
 * "Questions, approvals and profile menus"): Discord's Interactions Endpoint URL. Every request is
 * checked against the public key of each integration connected to that application before anything is
 * read from it; a forged or stale one is 401 and changes nothing. PING is answered with PONG; a
 * component click goes to the handler that issued its custom id: a profile menu's, or a question's or
 * an approval's buttons.
 */
export async function discordInteractionRoutes(app: HttpApp, deps: { db: Database; artifacts: ArtifactsService; catalog: KindCatalog }): Promise<void> {
  const components = componentHandlers([discordLaunchChoiceHandler(deps), discordAnswerHandler(deps)]);
  await app.register(async (scope) => {
    rawJsonBodies(scope);
    scope.post(
      "/api/integrations/discord/:applicationID/interactions",
      {
        config: { auth: "public" as const },
        schema: { hide: true, params: Type.Object({ applicationID: Type.String({ pattern: DISCORD_SNOWFLAKE }) }) },
      },
      async (request) => {
        const raw = rawBody(request.body);
        const signature = headerOf(request.headers["x-signature-ed25519"]);
        const timestamp = headerOf(request.headers["x-signature-timestamp"]);
        const { applicationID } = request.params as { applicationID: string };
        const integration = await signer(deps.db, applicationID, raw, signature, timestamp);
        const interaction = parseSignedJson(raw);
        if (interaction["type"] === PING) return { type: PONG };
        if (interaction["type"] === MESSAGE_COMPONENT) return callbackOf(await components.handle(componentClick(integration, interaction)));
        return callbackOf(undefined);
      },
    );
  });
}

/** The integration whose public key signed `timestamp + body`, within the allowed skew of the database clock; else 401. */
async function signer(db: Database, applicationId: string, raw: Buffer, signature?: string, timestamp?: string): Promise<IntegrationRow> {
  if (!signature || !/^[0-9a-f]{128}$/i.test(signature) || !timestamp || !/^[0-9]{1,12}$/.test(timestamp)) throw unauthorized("the interaction is not signed");
  const [clock] = await rawRows<{ now: number }>(db.read, sql`SELECT extract(epoch from statement_timestamp())::float8 AS now`);
  if (Math.abs(Number(clock!.now) - Number(timestamp)) > MAX_SKEW_SECONDS) throw unauthorized("the interaction's timestamp is too old or in the future");
  const signed = Buffer.concat([Buffer.from(timestamp, "utf8"), raw]);
  const candidates = await routableIntegrations(db.read, "discord_thread", applicationId);
  const found = candidates.find((row) => row.state === "active" && verifies(row.providerConfig["public_key"], signed, signature));
  if (!found) throw unauthorized("the interaction's signature does not verify with this application's public key");
  return found;
}

function verifies(publicKey: unknown, signed: Buffer, signatureHex: string): boolean {
  if (typeof publicKey !== "string") return false;
  const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(publicKey, "hex")]), format: "der", type: "spki" });
  return verify(null, signed, key, Buffer.from(signatureHex, "hex"));
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
