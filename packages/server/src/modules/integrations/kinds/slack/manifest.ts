import { AppError, type Issue } from "../../../../platform/errors.js";
import { CredentialRejected, type AppRegistration, type OAuthAppCredentials } from "../../kind.js";
import { stringMember, type SlackWebApi } from "./web-api.js";

/** The bot scopes the thread runtime needs: mentions, thread history, posting, reactions and files. */
export const SLACK_BOT_SCOPES = [
  "app_mentions:read",
  "channels:history",
  "groups:history",
  "im:history",
  "mpim:history",
  "chat:write",
  "reactions:write",
  "files:read",
  "files:write",
  "users:read",
] as const;

/**
 * The events the thread runtime handles (mentions, thread and DM messages) and the lifecycle events
 * that disable an install (reference design brief, Integrations: token revoked, app uninstalled).
 * Each message event needs the matching *:history scope in SLACK_BOT_SCOPES.
 */
const BOT_EVENTS = ["app_mention", "message.channels", "message.groups", "message.im", "message.mpim", "tokens_revoked", "app_uninstalled"];

/** Slack's answers to a configuration token it will not act on: the caller's token to replace. */
const TOKEN_ERRORS = new Set(["not_authed", "invalid_auth", "token_expired", "token_revoked", "account_inactive", "not_allowed_token_type"]);

/** The Slack app svc needs, as an app manifest (Slack: "App manifest reference"). */
export function slackManifest(app: AppRegistration): Record<string, unknown> {
  return {
    display_information: { name: app.name },
    features: { bot_user: { display_name: app.name, always_online: true } },
    oauth_config: { redirect_urls: [app.redirectUri], scopes: { bot: [...SLACK_BOT_SCOPES] } },
    settings: {
      event_subscriptions: { request_url: app.eventsUrl, bot_events: BOT_EVENTS },
      interactivity: { is_enabled: true, request_url: app.actionsUrl },
      org_deploy_enabled: false,
      socket_mode_enabled: false,
      token_rotation_enabled: false,
    },
  };
}

/**
 * Slack's `apps.manifest.create` as the holder of an app configuration token: answers the new app's id
 * and credentials. Slack refusing the token or the manifest is the caller's input (CredentialRejected
 * with the request member to fix); an answer without the credentials is not Slack's.
 */
export async function createSlackApp(api: SlackWebApi, configurationToken: string, app: AppRegistration): Promise<OAuthAppCredentials & { appId: string }> {
  const answer = await api.call("apps.manifest.create", { manifest: JSON.stringify(slackManifest(app)) }, configurationToken);
  if (!answer.ok) {
    if (TOKEN_ERRORS.has(answer.error)) throw new CredentialRejected([{ path: "/app_configuration_token", message: `Slack refused the app configuration token (${answer.error})` }]);
    throw new CredentialRejected(manifestIssues(answer.error, answer["errors"]));
  }
  const credentials = answer["credentials"];
  const members = typeof credentials === "object" && credentials !== null ? (credentials as Record<string, unknown>) : {};
  const appId = stringMember(answer, "app_id");
  const clientId = stringMember(members, "client_id");
  const clientSecret = stringMember(members, "client_secret");
  const signingSecret = stringMember(members, "signing_secret");
  if (!appId || !clientId || !clientSecret || !signingSecret) throw new AppError("upstream_unavailable", "Slack's apps.manifest.create answer has no app credentials");
  return { appId, client_id: clientId, client_secret: clientSecret, signing_secret: signingSecret };
}

/**
 * Slack's reasons for refusing the app, one issue each (at most five). The name is the only member of
 * the manifest a caller chooses; anything else (an events URL Slack could not verify, say) is the request's.
 */
function manifestIssues(error: string, errors: unknown): Issue[] {
  const listed = Array.isArray(errors) ? errors.filter((e): e is Record<string, unknown> => typeof e === "object" && e !== null).slice(0, 5) : [];
  const issues = listed.map((e) => {
    const pointer = typeof e["pointer"] === "string" ? e["pointer"] : "";
    const message = typeof e["message"] === "string" ? e["message"].slice(0, 300) : "refused";
    const path = NAME_POINTERS.some((p) => pointer.startsWith(p)) ? "/app_name" : "";
    return { path, message: `Slack refused the app (${error.slice(0, 100)}): ${message}${path === "" && pointer ? ` at ${pointer.slice(0, 100)}` : ""}` };
  });
  return issues.length > 0 ? issues : [{ path: "", message: `Slack refused to create the app (${error.slice(0, 100)})` }];
}

const NAME_POINTERS = ["/display_information/name", "/features/bot_user/display_name"];
