import type { Config } from "../../../config.js";
import type { IntegrationKind, IntegrationKindCatalog } from "../kind.js";
import { discordThreadCatalog } from "./discord/catalog.js";
import { createDiscordThreadKind } from "./discord/kind.js";
import { githubPrCatalog } from "./github/catalog.js";
import { createGithubPrKind } from "./github/kind.js";
import { slackThreadCatalog } from "./slack/catalog.js";
import { createSlackThreadKind } from "./slack/kind.js";

/** Every kind the spec names (spec: Integration, integration_kind). */
export const SPEC_KINDS = ["slack_thread", "discord_thread", "github_pr"] as const;

/** The kinds svc implements, in catalog order (the spec's order). */
export const KIND_CATALOGS: Readonly<Record<string, IntegrationKindCatalog>> = {
  slack_thread: slackThreadCatalog,
  discord_thread: discordThreadCatalog,
  github_pr: githubPrCatalog,
};
export const IMPLEMENTED_KINDS = Object.keys(KIND_CATALOGS);

/**
 * The kinds whose tools svc runs (their kind has an executor): an integration launch adds only these
 * kinds' tools, since a tool that can only fail would mislead the model. A test keeps it equal to the
 * kinds `createIntegrationKinds` makes with `tools`.
 */
export const KINDS_RUNNING_TOOLS: ReadonlySet<string> = new Set(["slack_thread", "discord_thread", "github_pr"]);

/** The kinds whose interaction handler svc delivers (posts questions and approvals to the conversation). */
export const KINDS_POSTING_INTERACTIONS: ReadonlySet<string> = new Set(["slack_thread", "discord_thread"]);

/** The kinds whose schedule capability svc fires (a receipt handler posts the opening message and launches). */
export const KINDS_RUNNING_SCHEDULES: ReadonlySet<string> = new Set(["slack_thread", "discord_thread"]);

export type IntegrationKinds = ReadonlyMap<string, IntegrationKind>;

/** The implemented kinds with their provider clients, pointed at the providers the configuration names. */
export function createIntegrationKinds(config: Pick<Config, "integrations" | "allowPrivateNetwork">): IntegrationKinds {
  const policy = { allowPrivateNetwork: config.allowPrivateNetwork };
  const kinds = [
    createSlackThreadKind({ apiUrl: config.integrations.slackApiUrl, authorizeUrl: config.integrations.slackAuthorizeUrl, policy }),
    createDiscordThreadKind({ apiUrl: config.integrations.discordApiUrl, policy }),
    createGithubPrKind({ apiUrl: config.integrations.githubApiUrl, policy }),
  ];
  return new Map(kinds.map((kind) => [kind.name, kind]));
}
