import { createHmac, timingSafeEqual } from "node:crypto";
import { invalidRequest } from "../../../../platform/errors.js";
import { parseJsonWithin } from "../../../../platform/http/json-depth.js";
import type { SecretMaterial } from "../../../secrets/schemas.js";
import type { InboundClaims, InboundEvent, InboundReceiver, InboundRequest } from "../../kind.js";

/**
 * Slack's Events API and interactivity requests (Slack docs: "Verifying requests from Slack"): the
 * signature is `v0=` and the hex HMAC-SHA256, keyed with the app's signing secret, of
 * `v0:{X-Slack-Request-Timestamp}:{raw body}`. Events arrive as JSON, interactions as a form with one
 * `payload` member holding JSON.
 */
export const slackInbound: InboundReceiver = {
  claims(request) {
    const signedAt = Number.parseInt(header(request, "x-slack-request-timestamp") ?? "", 10);
    const base = { signedAt: Number.isSafeInteger(signedAt) ? signedAt : undefined };
    return request.endpoint === "events" ? { ...base, ...eventClaims(parseJson(request.rawBody.toString("utf8"))) } : { ...base, ...actionClaims(request.rawBody) };
  },
  routesTo(identity, claims) {
    // auth.test names the app for a bot token; an identity saved without it is matched on the workspace alone.
    return identity["app_id"] === undefined || identity["app_id"] === claims.appId;
  },
  verify(material: SecretMaterial, request: InboundRequest) {
    if (material.kind !== "slack_app_credentials" || material.signing_secret === "") return false;
    const timestamp = header(request, "x-slack-request-timestamp");
    const signature = header(request, "x-slack-signature");
    if (timestamp === undefined || signature === undefined) return false;
    const mac = createHmac("sha256", material.signing_secret).update(`v0:${timestamp}:`).update(request.rawBody).digest("hex");
    const expected = Buffer.from(`v0=${mac}`, "utf8");
    const given = Buffer.from(signature, "utf8");
    return given.length === expected.length && timingSafeEqual(given, expected);
  },
};

/** The message subtypes a person sends; every other subtype (edits, deletions, joins, bots) is not a reply. */
const PERSON_SUBTYPES = new Set(["file_share", "thread_broadcast"]);

function eventClaims(body: Record<string, unknown>): Omit<InboundClaims, "signedAt"> {
  if (body["type"] === "url_verification") {
    const challenge = str(body, "challenge");
    if (challenge === undefined) throw invalidRequest("url_verification needs a challenge");
    return { challenge, events: [] };
  }
  if (body["type"] !== "event_callback") return { events: [] };
  const tenantId = str(body, "team_id");
  const appId = str(body, "api_app_id");
  const eventId = str(body, "event_id");
  const event = obj(body["event"]);
  if (!tenantId || !appId || !eventId || !event) throw invalidRequest("an event_callback needs team_id, api_app_id, event_id and event");
  return { tenantId, appId, events: keptEvent(eventId, event, tenantId) };
}

/** Mentions, and replies in threads written by people; bot messages (svc's own included) are never kept. */
function keptEvent(eventId: string, event: Record<string, unknown>, tenantId: string): InboundEvent[] {
  const type = str(event, "type");
  const subtype = str(event, "subtype");
  if (event["bot_id"] !== undefined || str(event, "user") === undefined || str(event, "channel") === undefined) return [];
  if (subtype !== undefined && !PERSON_SUBTYPES.has(subtype)) return [];
  const payload = { team_id: tenantId, event_id: eventId, event };
  if (type === "app_mention") return [{ providerEventId: eventId, eventKind: "app_mention", payload }];
  const threadTs = str(event, "thread_ts");
  if (type === "message" && threadTs !== undefined && threadTs !== str(event, "ts")) return [{ providerEventId: eventId, eventKind: "message", payload }];
  return [];
}

function actionClaims(rawBody: Buffer): Omit<InboundClaims, "signedAt"> {
  const form = new URLSearchParams(rawBody.toString("utf8"));
  const body = parseJson(form.get("payload") ?? "");
  const tenantId = str(obj(body["team"]) ?? {}, "id");
  const appId = str(body, "api_app_id");
  const userId = str(obj(body["user"]) ?? {}, "id");
  if (!tenantId || !appId || !userId) throw invalidRequest("an interaction payload needs team.id, api_app_id and user.id");
  const actions = Array.isArray(body["actions"]) ? body["actions"] : [];
  const action = obj(actions[0]);
  const actionTs = action ? str(action, "action_ts") : undefined;
  if (body["type"] !== "block_actions" || !action || !actionTs) return { tenantId, appId, events: [] };
  // One click is one person's action at one time: Slack gives interactions no event id of their own.
  const payload = { team_id: tenantId, user_id: userId, action, container: obj(body["container"]) ?? {}, channel: obj(body["channel"]) ?? {} };
  return { tenantId, appId, events: [{ providerEventId: `action:${userId}:${actionTs}`, eventKind: "block_actions", payload }] };
}

function parseJson(text: string): Record<string, unknown> {
  try {
    const value = parseJsonWithin(text);
    const body = obj(value);
    if (body) return body;
  } catch {
    // Reported below as the caller's error.
  }
  throw invalidRequest("the body is not a Slack request");
}

function header(request: InboundRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === "string" ? value : undefined;
}

function obj(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function str(from: Record<string, unknown>, member: string): string | undefined {
  const value = from[member];
  return typeof value === "string" && value !== "" ? value : undefined;
}
