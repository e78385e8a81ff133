import type { Issue } from "../../../../platform/errors.js";
import type { OutboundPolicy } from "../../../../platform/net/outbound.js";
import type { SecretMaterial } from "../../../secrets/schemas.js";
import { CredentialRejected, type IdentityClaim, type IntegrationKind, type VerifiedIdentity } from "../../kind.js";
import { slackThreadCatalog } from "./catalog.js";
import { slackInbound } from "./inbound.js";
import { createSlackOAuth } from "./oauth.js";
import { createSlackTools } from "./tools.js";
import { createSlackWebApi, stringMember, type SlackWebApi } from "./web-api.js";

export interface SlackSettings {
  apiUrl: string;
  authorizeUrl: string;
  policy: OutboundPolicy;
}

/**
 * `slack_thread`: a Slack app's bot in one workspace. The credential is a `slack_app_credentials` secret
 * (the bot token in access_token, and the app's client id, client secret and signing secret). Verified
 * identity: provider_tenant_id is the workspace (team) id, provider_account_ref the bot's user id.
 */
export function createSlackThreadKind(settings: SlackSettings): IntegrationKind {
  const api = createSlackWebApi({ apiUrl: settings.apiUrl, policy: settings.policy });
  const verifyToken = (token: string, claim: IdentityClaim, pointer: string) => whoIs(api, token, claim, pointer);
  return {
    ...slackThreadCatalog,
    credentialKinds: ["slack_app_credentials"],
    profileReferences(settings) {
      const launcher = settings["launcher"] as { profiles?: string[] } | undefined;
      return (launcher?.profiles ?? []).map((profileId, index) => ({ pointer: `/launcher/profiles/${index}`, profileId }));
    },
    providerConfigIssues: (config) => (Object.keys(config).length === 0 ? [] : [{ path: "", message: "must be an empty object for slack_thread" }]),
    async verify(material: SecretMaterial, claim: IdentityClaim): Promise<VerifiedIdentity> {
      if (material.kind !== "slack_app_credentials") throw new CredentialRejected([{ path: "/credential_secret_id", message: "must be a slack_app_credentials secret" }]);
      return verifyToken(material.access_token, claim, "/credential_secret_id");
    },
    oauth: createSlackOAuth({ api, authorizeUrl: settings.authorizeUrl, verifyToken }),
    inbound: slackInbound,
    tools: createSlackTools(api),
    postsInteractions: true,
    runsSchedules: true,
  };
}

/**
 * Slack's `auth.test` for a bot token: the workspace and bot it belongs to. A refused token, a user
 * token, an Enterprise Grid install or an identity other than the one claimed is the caller's input to
 * fix; nothing is saved.
 */
async function whoIs(api: SlackWebApi, token: string, claim: IdentityClaim, pointer: string): Promise<VerifiedIdentity> {
  const answer = await api.call("auth.test", {}, token);
  if (!answer.ok) throw new CredentialRejected([{ path: pointer, message: `Slack refused the bot token (${answer.error})` }]);
  const teamId = stringMember(answer, "team_id");
  const botUserId = stringMember(answer, "user_id");
  const botId = stringMember(answer, "bot_id");
  if (!teamId || !botUserId || !botId) throw new CredentialRejected([{ path: pointer, message: "the token is not a Slack bot token (xoxb-…)" }]);
  if (answer["is_enterprise_install"] === true) throw new CredentialRejected([{ path: pointer, message: "Enterprise Grid org-wide installs are not supported" }]);
  const issues: Issue[] = [];
  if (claim.tenantId !== undefined && claim.tenantId !== teamId) {
    issues.push({ path: "/provider_tenant_id", message: `the bot token belongs to Slack workspace ${teamId}, not ${claim.tenantId}` });
  }
  if (claim.accountRef !== undefined && claim.accountRef !== botUserId) {
    issues.push({ path: "/provider_account_ref", message: `the bot token is Slack bot user ${botUserId}, not ${claim.accountRef}` });
  }
  if (issues.length > 0) throw new CredentialRejected(issues);
  const facts: Record<string, string> = { bot_id: botId };
  const appId = stringMember(answer, "app_id");
  const teamName = stringMember(answer, "team");
  if (appId) facts["app_id"] = appId;
  if (teamName) facts["team_name"] = teamName;
  return { tenantId: teamId, accountRef: botUserId, facts };
}
