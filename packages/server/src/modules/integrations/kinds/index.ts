import type { Config } from "../../../config.js";
import type { IntegrationKinds } from "../kind.js";
import { createDiscordThreadKind } from "./discord/kind.js";
import { createGithubPrKind } from "./github/kind.js";
import { createSlackThreadKind } from "./slack/kind.js";

/**
 * The kinds svc implements, in catalog order (the spec's order), with their provider clients pointed at
 * the providers the configuration names. Called only where the server is composed (services.ts): every
 * other part of the server is handed the result, or the KindCatalog made from it.
 */
export function createIntegrationKinds(config: Pick<Config, "integrations" | "allowPrivateNetwork">): IntegrationKinds {
  const policy = { allowPrivateNetwork: config.allowPrivateNetwork };
  const kinds = [
    createSlackThreadKind({ apiUrl: config.integrations.slackApiUrl, authorizeUrl: config.integrations.slackAuthorizeUrl, policy }),
    createDiscordThreadKind({ apiUrl: config.integrations.discordApiUrl, policy }),
    createGithubPrKind({ apiUrl: config.integrations.githubApiUrl, policy }),
  ];
  return new Map(kinds.map((kind) => [kind.name, kind]));
}
