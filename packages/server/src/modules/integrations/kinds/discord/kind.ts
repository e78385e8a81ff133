import type { Issue } from "../../../../platform/errors.js";
import type { OutboundPolicy } from "../../../../platform/net/outbound.js";
import type { SecretMaterial } from "../../../secrets/schemas.js";
import { CredentialRejected, type IdentityClaim, type IntegrationKind, type VerifiedIdentity } from "../../kind.js";
import { createRestClient, scalarMember, type RestClient } from "../rest.js";
import { discordThreadCatalog } from "./catalog.js";
import { createDiscordTools } from "./tools.js";
import { discordInbound } from "./interactions.js";

/** An Ed25519 public key as the Developer Portal shows it: 32 bytes, hex. */
const PUBLIC_KEY = /^[0-9a-fA-F]{64}$/;
const CREDENTIAL = "/credential_secret_id";

/**
 * `discord_thread`: a Discord application's bot. The credential is a generic secret holding the bot
 * token (reference docs: integrations/discord, "Connect your bot"). Verified identity: provider_tenant_id
 * is the Application ID, provider_account_ref the bot's user id, and the bot's name is the display name
 * when the caller gives none.
 */
export function createDiscordThreadKind(settings: { apiUrl: string; policy: OutboundPolicy }): IntegrationKind {
  const rest = createRestClient({ provider: "Discord", baseUrl: settings.apiUrl, policy: settings.policy });
  return {
    ...discordThreadCatalog,
    credentialKinds: ["generic"],
    profileReferences(settings) {
      const launcher = settings["launcher"] as { profiles?: string[] } | undefined;
      return (launcher?.profiles ?? []).map((profileId, index) => ({ pointer: `/launcher/profiles/${index}`, profileId }));
    },
    providerConfigIssues: discordConfigIssues,
    async verify(material: SecretMaterial, claim: IdentityClaim): Promise<VerifiedIdentity> {
      if (material.kind !== "generic") throw new CredentialRejected([{ path: CREDENTIAL, message: "must be a generic secret holding the bot token" }]);
      return whoIs(rest, material.value, claim);
    },
    tools: createDiscordTools(rest),
    inbound: discordInbound,
    postsInteractions: true,
    runsSchedules: true,
  };
}

/** Spec: Discord's provider_config accepts only `public_key`, a 32-byte hex-encoded Ed25519 key. */
export function discordConfigIssues(config: Record<string, unknown>): Issue[] {
  const issues: Issue[] = [];
  for (const [key, value] of Object.entries(config)) {
    if (key !== "public_key") issues.push({ path: `/${key}`, message: "is not a discord_thread setting; only public_key is accepted" });
    else if (typeof value !== "string" || !PUBLIC_KEY.test(value)) issues.push({ path: "/public_key", message: "must be a 32-byte Ed25519 public key, as 64 hex digits" });
  }
  return issues;
}

/**
 * Discord's REST API for a bot token: `GET /users/@me` is the bot user, `GET /applications/@me` its
 * application. A refused token, a user that is not a bot, or another application or bot than claimed is
 * the caller's input to fix; nothing is saved.
 */
async function whoIs(rest: RestClient, token: string, claim: IdentityClaim): Promise<VerifiedIdentity> {
  const headers = { authorization: `Bot ${token}` };
  const user = await rest.call("GET", "/users/@me", headers);
  if (user.status === 401 || user.status === 403) throw new CredentialRejected([{ path: CREDENTIAL, message: `Discord refused the bot token (HTTP ${user.status})` }]);
  const botUserId = scalarMember(user.body, "id");
  const isBot = typeof user.body === "object" && user.body !== null && (user.body as Record<string, unknown>)["bot"] === true;
  if (user.status !== 200 || !botUserId || !isBot) throw new CredentialRejected([{ path: CREDENTIAL, message: "the token is not a Discord bot token" }]);
  const app = await rest.call("GET", "/applications/@me", headers);
  const appId = scalarMember(app.body, "id");
  if (app.status !== 200 || !appId) throw new CredentialRejected([{ path: CREDENTIAL, message: `Discord did not name the bot's application (HTTP ${app.status})` }]);
  const issues: Issue[] = [];
  if (claim.tenantId !== undefined && claim.tenantId !== appId) issues.push({ path: "/provider_tenant_id", message: `the bot token belongs to Discord application ${appId}, not ${claim.tenantId}` });
  if (claim.accountRef !== undefined && claim.accountRef !== botUserId) issues.push({ path: "/provider_account_ref", message: `the bot token is Discord bot user ${botUserId}, not ${claim.accountRef}` });
  if (issues.length > 0) throw new CredentialRejected(issues);
  const name = scalarMember(user.body, "global_name") ?? scalarMember(user.body, "username");
  return { tenantId: appId, accountRef: botUserId, ...(name ? { displayName: name } : {}), facts: {} };
}
