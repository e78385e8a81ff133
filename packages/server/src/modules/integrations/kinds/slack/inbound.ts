import { createHmac, timingSafeEqual } from "node:crypto";
import type { Database } from "../../../../platform/db/index.js";
import { invalidRequest, unauthorized } from "../../../../platform/errors.js";
import { parseJsonWithin } from "../../../../platform/http/json-depth.js";
import { MAX_CALLBACK_BYTES } from "../../inbound.js";
import type { InboundAcceptor } from "../../inbound-service.js";
import { insertReceipts } from "../../inbound-store.js";
import type { InboundEvent, InboundReceiver, InboundRequest } from "../../kind.js";

const SIGNATURE = /^v0=[0-9a-f]{64}$/;
const TIMESTAMP = /^[0-9]{1,12}$/;

/**
 * Slack's Events API and interactivity requests (Slack docs: "Verifying requests from Slack"): the
 * signature is `v0=` and the hex HMAC-SHA256, keyed with the app's signing secret, of
 * `v0:{X-Slack-Request-Timestamp}:{raw body}`. Events arrive as JSON, interactions as a form with one
 * `payload` member holding JSON. Before the signature is checked only the workspace and app are read
 * from the body: they name the candidates whose signing secrets may verify it.
 */
export const slackInbound: InboundReceiver = {
  routes: [
    { path: "slack/events", endpoint: "events" },
    { path: "slack/actions", endpoint: "actions" },
  ],
  maxBodyBytes: MAX_CALLBACK_BYTES,
  keyIn: "credential",
  signature(request) {
    const timestamp = header(request, "x-slack-request-timestamp");
    if (!SIGNATURE.test(header(request, "x-slack-signature") ?? "") || timestamp === undefined || !TIMESTAMP.test(timestamp)) {
      throw unauthorized("the request is not signed (X-Slack-Signature, X-Slack-Request-Timestamp)");
    }
    const { tenantId, appId, challenge } = requestClaims(request);
    // auth.test names the app for a bot token; an identity saved without it is matched on the workspace alone.
    // A URL verification names no app: any of the kind's newest may be the one being set up.
    const routesTo = (identity: Record<string, string>) => challenge !== undefined || identity["app_id"] === undefined || identity["app_id"] === appId;
    return { signedAt: Number(timestamp), tenantId, routesTo };
  },
  keyOf: ({ credential }) => (credential?.kind === "slack_app_credentials" && credential.signing_secret !== "" ? credential.signing_secret : undefined),
  verify(signingSecret, request) {
    const mac = createHmac("sha256", signingSecret).update(`v0:${header(request, "x-slack-request-timestamp")}:`).update(request.rawBody).digest("hex");
    const expected = Buffer.from(`v0=${mac}`, "utf8");
    const given = Buffer.from(header(request, "x-slack-signature") ?? "", "utf8");
    return given.length === expected.length && timingSafeEqual(given, expected);
  },
};

/** What a verified Slack request asks for: a URL verification's challenge, or the events to keep. */
interface SlackClaims {
  tenantId?: string;
  appId?: string;
  challenge?: string;
  events: InboundEvent[];
}

/**
 * The per-integration work once a request verified: a URL verification is answered with its challenge;
 * each kept event becomes a receipt of every verifying, active integration, in one short transaction, and
 * the receipts processor does the work after Slack is answered.
 */
export function slackAcceptor(deps: { db: Database }): InboundAcceptor {
  return {
    async accept(request, signers) {
      const claims = requestClaims(request);
      if (claims.challenge !== undefined) return { status: 200, body: { challenge: claims.challenge } };
      // A disconnected integration stops forwarding and keeps nothing for later (reference docs: integrations/overview).
      const active = signers.filter((row) => row.state === "active");
      if (claims.events.length > 0 && active.length > 0) {
        await deps.db.tx(async (tx) => {
          for (const row of active) await insertReceipts(tx, row.id, claims.events);
        });
      }
      return { status: 200 };
    },
  };
}

function requestClaims(request: InboundRequest): SlackClaims {
  return request.endpoint === "events" ? eventClaims(parseJson(request.rawBody.toString("utf8"))) : actionClaims(request.rawBody);
}

/** The message subtypes a person sends; every other subtype (edits, deletions, joins, bots) is not a reply. */
const PERSON_SUBTYPES = new Set(["file_share", "thread_broadcast"]);

function eventClaims(body: Record<string, unknown>): SlackClaims {
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

function actionClaims(rawBody: Buffer): SlackClaims {
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
