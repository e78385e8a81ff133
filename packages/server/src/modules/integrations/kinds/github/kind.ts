import type { KeyObject } from "node:crypto";
import type { Issue } from "../../../../platform/errors.js";
import type { OutboundPolicy } from "../../../../platform/net/outbound.js";
import type { SecretMaterial } from "../../../secrets/schemas.js";
import { CredentialRejected, type IdentityClaim, type IntegrationKind, type VerifiedIdentity } from "../../kind.js";
import { createRestClient, scalarMember, objectMember, type RestClient } from "../rest.js";
import { GITHUB_HEADERS } from "./api.js";
import { appJwt, appPrivateKey } from "./app-jwt.js";
import { githubPrCatalog } from "./catalog.js";
import { createInstallationTokens } from "./installation-token.js";
import { createGithubTools } from "./tools.js";
import { githubInbound } from "./webhooks.js";

const CREDENTIAL = "/credential_secret_id";

/**
 * What a pull request subscription can select (reference docs: integrations/github, "Configure incoming PR
 * work"): comments in its conversation, comments on the diff and submitted reviews, and new commits
 * (its synchronization). Omitting `events` selects all three.
 */
export const PULL_REQUEST_EVENTS = ["discussion_comment", "review_comment", "commit"] as const;
export type PullRequestEventName = (typeof PULL_REQUEST_EVENTS)[number];

/**
 * `github_pr`: a GitHub App installed on an account. The credential is a `github_app_credentials` secret
 * (app id, private key, webhook secret). Verified identity: provider_tenant_id is the app id,
 * provider_account_ref the installation id, bot_mention `@<slug>[bot]` (reference docs: integrations/github).
 */
export function createGithubPrKind(settings: { apiUrl: string; policy: OutboundPolicy }): IntegrationKind {
  const rest = createRestClient({ provider: "GitHub", baseUrl: settings.apiUrl, policy: settings.policy });
  return {
    ...githubPrCatalog,
    tools: createGithubTools({ rest, tokens: createInstallationTokens(rest) }),
    inbound: githubInbound,
    credentialKinds: ["github_app_credentials"],
    subscriptionEvents: PULL_REQUEST_EVENTS,
    profileReferences(settings) {
      const launcher = settings["launcher"] as { slots?: Array<{ agent_profile_id: string }> } | undefined;
      return (launcher?.slots ?? []).map((slot, index) => ({ pointer: `/launcher/slots/${index}/agent_profile_id`, profileId: slot.agent_profile_id }));
    },
    settingsIssues: launcherSlotIssues,
    providerConfigIssues: (config) => (Object.keys(config).length === 0 ? [] : [{ path: "", message: "must be an empty object for github_pr" }]),
    async verify(material: SecretMaterial, claim: IdentityClaim): Promise<VerifiedIdentity> {
      if (material.kind !== "github_app_credentials") throw new CredentialRejected([{ path: CREDENTIAL, message: "must be a github_app_credentials secret" }]);
      const issues: Issue[] = [];
      const key = appPrivateKey(material.private_key);
      if (!key) issues.push({ path: CREDENTIAL, message: "the secret's private_key is not an RSA private key in PEM" });
      if (!material.webhook_secret) issues.push({ path: CREDENTIAL, message: "the secret needs the App's webhook_secret, to verify GitHub's deliveries" });
      if (claim.tenantId !== undefined && claim.tenantId !== material.app_id) issues.push({ path: "/provider_tenant_id", message: `the secret is for GitHub App ${material.app_id}, not ${claim.tenantId}` });
      if (claim.accountRef === undefined) issues.push({ path: "/provider_account_ref", message: "is required for github_pr: the App installation's numeric id" });
      else if (!/^[0-9]{1,20}$/.test(claim.accountRef)) issues.push({ path: "/provider_account_ref", message: "must be the App installation's numeric id" });
      if (issues.length > 0 || !key || claim.accountRef === undefined) throw new CredentialRejected(issues);
      return verifyInstallation(rest, material.app_id, key, claim.accountRef);
    },
  };
}

/**
 * The app (`GET /app` with the app JWT), its installation (`GET /app/installations/{id}`) and a token for
 * it (`POST /app/installations/{id}/access_tokens`): a suspended installation, or one of another app,
 * cannot be connected.
 */
async function verifyInstallation(rest: RestClient, appId: string, key: KeyObject, installationId: string): Promise<VerifiedIdentity> {
  const headers = { ...GITHUB_HEADERS, authorization: `Bearer ${appJwt(appId, key)}` };
  const app = await rest.call("GET", "/app", headers);
  if (app.status !== 200 || scalarMember(app.body, "id") !== appId) {
    throw new CredentialRejected([{ path: CREDENTIAL, message: `GitHub did not accept the App's id and private key (HTTP ${app.status})` }]);
  }
  const installation = await rest.call("GET", `/app/installations/${installationId}`, headers);
  if (installation.status !== 200 || scalarMember(installation.body, "app_id") !== appId) {
    throw new CredentialRejected([{ path: "/provider_account_ref", message: `GitHub App ${appId} has no installation ${installationId} (HTTP ${installation.status})` }]);
  }
  const token = await rest.call("POST", `/app/installations/${installationId}/access_tokens`, headers, {});
  if (token.status !== 201 || !scalarMember(token.body, "token")) {
    throw new CredentialRejected([{ path: "/provider_account_ref", message: `GitHub refused a token for installation ${installationId} (HTTP ${token.status}); it may be suspended` }]);
  }
  const slug = scalarMember(app.body, "slug");
  const facts: Record<string, string> = {};
  const login = scalarMember(objectMember(installation.body, "account"), "login");
  if (slug) facts["app_slug"] = slug;
  if (login) facts["account_login"] = login;
  return { tenantId: appId, accountRef: installationId, ...(slug ? { botMention: `@${slug}[bot]` } : {}), facts };
}

/** Each slot's key names its own agent on a pull request (its launch key and ownership): two slots may not share one. */
function launcherSlotIssues(settings: Record<string, unknown>): Issue[] {
  const launcher = settings["launcher"] as { slots?: Array<{ key: string }> } | undefined;
  const first = new Map<string, number>();
  return (launcher?.slots ?? []).flatMap((slot, index) => {
    const earlier = first.get(slot.key);
    if (earlier === undefined) first.set(slot.key, index);
    return earlier === undefined ? [] : [{ path: `/launcher/slots/${index}/key`, message: `repeats the key of slot ${earlier}; each slot needs its own key` }];
  });
}
