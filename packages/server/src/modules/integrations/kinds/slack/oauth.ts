import { AppError } from "../../../../platform/errors.js";
import { CredentialRejected, type IdentityClaim, type OAuthInstaller, type VerifiedIdentity } from "../../kind.js";
import { createSlackApp, SLACK_BOT_SCOPES } from "./manifest.js";
import { stringMember, type SlackWebApi } from "./web-api.js";

/**
 * Slack's OAuth v2 install: the browser goes to the consent page with svc's signed state, Slack sends it
 * back to the redirect URI with a code, and `oauth.v2.access` trades the code (with the app's client id and
 * secret) for the bot token, which is then verified with `auth.test` like any other Slack credential.
 */
export function createSlackOAuth(deps: {
  api: SlackWebApi;
  authorizeUrl: string;
  verifyToken: (token: string, claim: IdentityClaim, pointer: string) => Promise<VerifiedIdentity>;
}): OAuthInstaller {
  return {
    provider: "slack",
    eventPaths: { events: "/api/integrations/slack/events", actions: "/api/integrations/slack/actions" },
    authorizeUrl(app, redirectUri, state) {
      const url = new URL(deps.authorizeUrl);
      url.searchParams.set("client_id", app.client_id);
      url.searchParams.set("scope", SLACK_BOT_SCOPES.join(","));
      url.searchParams.set("redirect_uri", redirectUri);
      url.searchParams.set("state", state);
      return url.href;
    },
    async redeem(app, code, redirectUri) {
      const answer = await deps.api.call("oauth.v2.access", { client_id: app.client_id, client_secret: app.client_secret, code, redirect_uri: redirectUri });
      if (!answer.ok) throw new CredentialRejected([{ path: "", message: `Slack refused the install code (${answer.error})` }]);
      const token = stringMember(answer, "access_token");
      const team = answer["team"];
      const teamId = typeof team === "object" && team !== null ? stringMember(team as Record<string, unknown>, "id") : undefined;
      if (!token || answer["token_type"] !== "bot" || !teamId) throw new AppError("upstream_unavailable", "Slack's oauth.v2.access answer has no bot token for a workspace");
      const granted = new Set((stringMember(answer, "scope") ?? "").split(","));
      const missing = SLACK_BOT_SCOPES.filter((scope) => !granted.has(scope));
      if (missing.length > 0) throw new CredentialRejected([{ path: "", message: `the install did not grant ${missing.join(", ")}` }]);
      const identity = await deps.verifyToken(token, { tenantId: teamId, accountRef: stringMember(answer, "bot_user_id") }, "");
      const appId = stringMember(answer, "app_id");
      if (appId) identity.facts["app_id"] = appId;
      return { identity, material: { kind: "slack_app_credentials", access_token: token, ...app } };
    },
    createApp: (configurationToken, app) => createSlackApp(deps.api, configurationToken, app),
  };
}
