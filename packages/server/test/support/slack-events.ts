import { createHmac } from "node:crypto";

/**
 * Slack's side of the Events API and interactivity: requests signed as Slack signs them (Slack docs:
 * "Verifying requests from Slack"), `v0=` + hex HMAC-SHA256 of `v0:{timestamp}:{raw body}` with the app's
 * signing secret, posted to svc's inbound endpoints.
 */

export interface SignedPost {
  /** Unix seconds; now by default. */
  timestamp?: number;
  /** Overrides the computed signature (a forgery). */
  signature?: string;
  /** Slack's redelivery counter (X-Slack-Retry-Num). */
  retryNum?: number;
}

export function slackSignature(signingSecret: string, timestamp: number, rawBody: string): string {
  return `v0=${createHmac("sha256", signingSecret).update(`v0:${timestamp}:${rawBody}`).digest("hex")}`;
}

async function signedPost(url: string, signingSecret: string, rawBody: string, contentType: string, options: SignedPost) {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = {
    "content-type": contentType,
    "x-slack-request-timestamp": String(timestamp),
    "x-slack-signature": options.signature ?? slackSignature(signingSecret, timestamp, rawBody),
  };
  if (options.retryNum !== undefined) {
    headers["x-slack-retry-num"] = String(options.retryNum);
    headers["x-slack-retry-reason"] = "http_timeout";
  }
  const response = await fetch(url, { method: "POST", headers, body: rawBody });
  const text = await response.text();
  return { status: response.status, text, body: text === "" ? undefined : (JSON.parse(text) as Record<string, unknown>) };
}

/** Posts an Events API body (JSON) to `<svcUrl>/api/integrations/slack/events`. */
export function postSlackEvent(svcUrl: string, signingSecret: string, body: object, options: SignedPost = {}) {
  return signedPost(`${svcUrl}/api/integrations/slack/events`, signingSecret, JSON.stringify(body), "application/json", options);
}

/** Posts an interaction (a form with one `payload` member) to `<svcUrl>/api/integrations/slack/actions`. */
export function postSlackAction(svcUrl: string, signingSecret: string, payload: object, options: SignedPost = {}) {
  const rawBody = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  return signedPost(`${svcUrl}/api/integrations/slack/actions`, signingSecret, rawBody, "application/x-www-form-urlencoded", options);
}

let counter = 0;

/** An event_callback envelope as Slack sends it, with a fresh event id. */
export function eventCallback(bot: { teamId: string; appId: string }, event: Record<string, unknown>, eventId = `Ev${Date.now()}${++counter}`) {
  return { token: "deprecated-verification-token", team_id: bot.teamId, api_app_id: bot.appId, event, type: "event_callback", event_id: eventId, event_time: Math.floor(Date.now() / 1000) };
}
