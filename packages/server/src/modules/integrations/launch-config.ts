import type { Tx } from "../../platform/db/index.js";
import { integrationToolName } from "../../runtime/tools/catalog-integrations.js";
import { findProfile } from "../agent-profiles/service.js";
import type { StoredDefinition } from "../agent-configs/compile.js";
import { compileConfig, findConfig } from "../agent-configs/service.js";
import { isObject } from "../agent-configs/fields.js";
import { parseSource, type SourceFormat } from "../agent-configs/source.js";
import type { KindCatalog } from "./capability-schemas.js";
import type { IntegrationRow } from "./store.js";

/**
 * The config an integration launch runs (reference docs: integrations/overview, "Launch from provider
 * events"): the profile's current config with the integration's own entries added, saved as an ordinary
 * config. Compiling is content-addressed, so the same profile config and integration derive the same row.
 */

/** Config entries a launch through `integration` adds, by section; a section's entry the profile's config already has is kept as written. */
export interface LaunchAdditions {
  tools: Record<string, Record<string, unknown>>;
  interaction_handlers: Record<string, Record<string, unknown>>;
}

/** The built-in tools that let the model see and choose where its questions and approvals go. */
const HANDLER_TOOLS = ["list_interaction_handlers", "set_interaction_handler"];

/**
 * What an integration launch adds to the config (reference docs: integrations/overview, "Launch from
 * provider events" and "Route questions and approvals"): every tool operation of the integration's kind,
 * if svc runs that kind's tools (`int__<name>__read`, `int__<name>__post_message` for Slack); and, if svc
 * delivers the kind's interaction handler, `interaction_handlers: {<name>: {}}` with the
 * `list_interaction_handlers` and `set_interaction_handler` tools.
 */
export function launchAdditions(catalog: KindCatalog, integration: Pick<IntegrationRow, "name" | "kind">): LaunchAdditions {
  const operations = catalog.runsTools(integration.kind) ? Object.keys(catalog.catalog(integration.kind)?.capabilities.tools ?? {}) : [];
  const tools: Record<string, Record<string, unknown>> = Object.fromEntries(operations.map((operation) => [integrationToolName(integration.name, operation), {}]));
  if (!catalog.postsInteractions(integration.kind)) return { tools, interaction_handlers: {} };
  for (const name of HANDLER_TOOLS) tools[name] = {};
  return { tools, interaction_handlers: { [integration.name]: {} } };
}

/**
 * The derived config's id, or undefined to launch the profile as it is: an unknown profile (the launch then
 * answers its 404), or a model without tools (the additions are tools it could not call). Explicit entries
 * win as whole entries: `int__eng__read: {enabled: false}` in the profile's config stays disabled, and a
 * handler the profile names keeps its arguments.
 */
export async function deriveLaunchConfig(tx: Tx, catalog: KindCatalog, integration: IntegrationRow, profileId: string): Promise<string | undefined> {
  const profile = await findProfile(tx, integration.orgId, integration.projectId, profileId);
  if (!profile) return undefined;
  const config = await findConfig(tx, integration.orgId, integration.projectId, profile.currentConfigId);
  if (!config) return undefined;
  if (!(config.compiledDefinition as StoredDefinition).modelFacts.supportsTools) return config.id;
  const parsed = parseSource(config.source, config.sourceFormat as SourceFormat);
  // A stored config's source parsed when it was saved; a parser change that refuses it now launches it unchanged.
  if (!parsed.ok || !isObject(parsed.source.value)) return config.id;
  const document = parsed.source.value;
  const additions = launchAdditions(catalog, integration);
  const derived = { ...document };
  let added = false;
  for (const section of ["tools", "interaction_handlers"] as const) {
    const present = isObject(document[section]) ? document[section] : {};
    const missing = Object.entries(additions[section]).filter(([name]) => !Object.hasOwn(present, name));
    if (missing.length === 0) continue;
    derived[section] = { ...present, ...Object.fromEntries(missing) };
    added = true;
  }
  if (!added) return config.id;
  const { row } = await compileConfig(tx, catalog, integration.orgId, integration.projectId, { source: `${JSON.stringify(derived, null, 2)}\n`, sourceFormat: "json" });
  return row.id;
}
