import type { Config } from "../config.js";
import type { IntegrationKind, IntegrationKindCatalog } from "./kind.js";
import { slackThreadCatalog } from "./slack/catalog.js";
import { createSlackThreadKind } from "./slack/kind.js";

/** Every kind the spec names (spec: Integration, integration_kind). */
export const SPEC_KINDS = ["slack_thread", "discord_thread", "github_pr"] as const;

/**
 * The kinds svc implements, in catalog order. discord_thread and github_pr are not listed until they
 * work: the catalog and create only offer what svc can connect (docs/integrations.md).
 */
export const KIND_CATALOGS: Readonly<Record<string, IntegrationKindCatalog>> = { slack_thread: slackThreadCatalog };
export const IMPLEMENTED_KINDS = Object.keys(KIND_CATALOGS);

export type IntegrationKinds = ReadonlyMap<string, IntegrationKind>;

/** The implemented kinds with their provider clients, pointed at the providers the configuration names. */
export function createIntegrationKinds(config: Pick<Config, "integrations" | "allowPrivateNetwork">): IntegrationKinds {
  const policy = { allowPrivateNetwork: config.allowPrivateNetwork };
  const kinds = [createSlackThreadKind({ apiUrl: config.integrations.slackApiUrl, authorizeUrl: config.integrations.slackAuthorizeUrl, policy })];
  return new Map(kinds.map((kind) => [kind.name, kind]));
}
