import type { Database, Tx } from "../../platform/db/index.js";
import { AppError, notFound, type Issue } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import type { PageRequest } from "../../platform/http/lists.js";
import { newUuid } from "../../platform/ids.js";
import { findProjectModel } from "../models/project-models.js";
import { requireProject } from "../orgs/access.js";
import { canonicalJson, sha256Tagged } from "../../platform/json.js";
import { TtlCache } from "../../platform/ttl-cache.js";
import { buildDefinition, COMPILER_VERSION } from "./compile.js";
import { ConfigIssues } from "./issues.js";
import type { McpServerChoice } from "./mcp-section.js";
import { resolveInteractionHandlers } from "./interaction-handlers-section.js";
import { bindModel } from "./model-rules.js";
import { findProjectSecret } from "../secrets/store.js";
import { readSource } from "./read-source.js";
import { resolveSkills } from "./skills-section.js";
import { resolveDelegates } from "./delegates-section.js";
import { resolveIntegrationTools } from "./integration-tools-section.js";
import type { KindCatalog } from "../integrations/capability-schemas.js";
import { resolveMachineSources } from "./machines-section.js";
import { resolveMemoryStores } from "./memory-section.js";
import type { SourceFormat } from "./source.js";
import * as store from "./store.js";

export type { AgentConfigRow } from "./store.js";
export type { SourceFormat } from "./source.js";

export interface ConfigSource {
  source: string;
  sourceFormat: SourceFormat;
}

/**
 * Agent configs: immutable, compiled definitions of what an agent is. Creating one needs agent.operate
 * (operators launch agents with configs they write), reading one agent.read.
 */
export function createAgentConfigService(deps: { db: Database; catalog: KindCatalog }) {
  const { db, catalog } = deps;

  return {
    async createConfig(principal: Principal, orgId: string, projectId: string, input: ConfigSource) {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "agent.operate");
        return compileConfig(tx, catalog, orgId, projectId, input);
      });
    },

    /**
     * The same checks as createConfig, without saving: the issues found (none when the source compiles). An
     * invalid source is an answer here, not an error; only access is refused as one.
     */
    async validateConfig(principal: Principal, orgId: string, projectId: string, input: ConfigSource): Promise<Issue[]> {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "agent.operate");
        try {
          await checkConfig(tx, catalog, orgId, projectId, input);
          return [];
        } catch (err) {
          if (err instanceof AppError && err.code === "validation_failed" && err.details.issues) return err.details.issues;
          throw err;
        }
      });
    },

    /** Whether the caller may read the project's configs (agent.read); throws when not. */
    async checkReadable(principal: Principal, orgId: string, projectId: string): Promise<void> {
      await db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "agent.read");
      });
    },

    /** One page of the project's configs (agent.read), newest first by default. */
    async listConfigs(principal: Principal, orgId: string, projectId: string, page: PageRequest): Promise<store.AgentConfigRow[]> {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "agent.read");
        return store.listConfigs(tx, orgId, projectId, page);
      });
    },

    async getConfig(principal: Principal, orgId: string, projectId: string, configId: string): Promise<store.AgentConfigRow> {
      return db.tx(async (tx) => {
        await requireProject(tx, principal, orgId, projectId, "agent.read");
        const row = await store.findConfig(tx, orgId, projectId, configId);
        if (!row) throw notFound("agent config");
        return row;
      });
    },
  };
}

export type AgentConfigService = ReturnType<typeof createAgentConfigService>;

/**
 * Compiles a config source into the project's config, inside the caller's transaction (which has checked
 * access). The same definition from the same source returns the existing row (`created: false`). Any
 * problem with the source is a 400 validation_failed listing every issue with its line and column.
 */
export async function compileConfig(
  tx: Tx,
  catalog: KindCatalog,
  orgId: string,
  projectId: string,
  input: ConfigSource,
): Promise<{ row: store.AgentConfigRow; created: boolean }> {
  const { source, sourceFormat } = input;
  const { definition, sourceHash } = await checkConfig(tx, catalog, orgId, projectId, input);
  const identity = { projectId, effectiveDefinitionHash: sha256Tagged(canonicalJson(definition)), sourceFormat, sourceHash };
  const existing = await findByIdentity(tx, identity);
  if (existing) return { row: existing, created: false };
  const inserted = await store.insertConfig(tx, {
    id: newUuid(),
    orgId,
    ...identity,
    source,
    compilerVersion: COMPILER_VERSION,
    compiledDefinition: definition,
    instructionHash: sha256Tagged(definition.instruction),
    configuredModelId: definition.model.configuredModelId,
    configuredModelRevisionId: definition.model.configuredModelRevisionId,
  });
  if (inserted) {
    remember(tx, identity, inserted);
    return { row: inserted, created: true };
  }
  // A concurrent request committed the same config between the lookup and the insert: it is this one.
  return { row: (await store.findConfigByIdentity(tx, identity))!, created: false };
}

/**
 * Every check of a compile (the document, then what it names in the project), inside the caller's
 * transaction; writes nothing. Throws validation_failed listing every issue; else the definition.
 */
async function checkConfig(tx: Tx, catalog: KindCatalog, orgId: string, projectId: string, input: ConfigSource) {
  const { source, sourceFormat } = input;
  const issues = new ConfigIssues();
  const { sourceHash, parsed, doc } = readSource(source, sourceFormat, issues);
  const bound = doc.model && bindModel(doc.model, await findProjectModel(tx, orgId, projectId, doc.model.providerConfig, doc.model.name), issues);
  const enabledTools = doc.tools.filter((tool) => tool.type === "custom" || tool.enabled);
  if (bound && enabledTools.length > 0 && !bound.facts.supportsTools) {
    issues.add(["tools"], `model "${bound.binding.name}" does not support tools in this project; remove the tools or choose another model`);
  }
  if (bound && doc.mcp.length > 0 && !bound.facts.supportsTools) {
    issues.add(["mcp"], `model "${bound.binding.name}" does not support tools in this project; remove the MCP servers or choose another model`);
  }
  await checkMcpSecrets(tx, orgId, projectId, doc.mcp, issues);
  const skills = await resolveSkills(tx, orgId, projectId, doc.skills, issues);
  if (bound && skills.length > 0 && !bound.facts.supportsTools) {
    issues.add(["skills"], `model "${bound.binding.name}" does not support tools in this project, and skills are loaded with the skill tool`);
  }
  const machineSources = await resolveMachineSources(tx, orgId, projectId, doc.machineSources, issues);
  if (bound && machineSources.length > 0 && !bound.facts.supportsTools) {
    issues.add(["machine_sources"], `model "${bound.binding.name}" does not support tools in this project, and machines are used with tools`);
  }
  const integrationChoices = doc.tools.filter((tool) => tool.type === "integration");
  const integrationTools = await resolveIntegrationTools(tx, catalog, projectId, integrationChoices, issues);
  const interactionHandlers = doc.interactionHandlers && (await resolveInteractionHandlers(tx, catalog, orgId, projectId, doc.interactionHandlers, issues));
  const delegates = doc.delegates && (await resolveDelegates(tx, projectId, doc.delegates, issues));
  if (bound && delegates && delegates.length > 0 && !bound.facts.supportsTools) {
    issues.add(["delegates"], `model "${bound.binding.name}" does not support tools in this project, and delegates are used with tools`);
  }
  const memory = doc.memory && (await resolveMemoryStores(tx, orgId, projectId, doc.memory, issues));
  if (bound && memory && memory.length > 0 && !bound.facts.supportsTools) {
    issues.add(["memory"], `model "${bound.binding.name}" does not support tools in this project, and memory is used with the file tools`);
  }
  issues.throwIfAny(source, parsed);
  // With no issues, the instruction and the model were valid and the model was bound.
  const definition = buildDefinition({
    instruction: doc.instruction!,
    binding: bound!.binding,
    facts: bound!.facts,
    tools: doc.tools,
    mcp: doc.mcp,
    skills,
    machineSources,
    machineToolsPermission: doc.machineToolsPermission,
    integrationTools,
    interactionHandlers,
    delegates,
    memory,
  });
  return { definition, sourceHash };
}

/** A bearer token must be a generic secret the project owns or was granted, as for every project secret use. */
/**
 * Config rows never change once written, so a row found by its identity is kept for the next compile of
 * the same definition (agents are relaunched and reconfigured with the same few configs).
 */
const knownConfigs = new TtlCache<string, store.AgentConfigRow>(Number.POSITIVE_INFINITY, 1024);

const identityKey = (identity: store.ConfigIdentity) =>
  `${identity.projectId}\u0000${identity.effectiveDefinitionHash}\u0000${identity.sourceFormat}\u0000${identity.sourceHash}`;

async function findByIdentity(tx: Tx, identity: store.ConfigIdentity): Promise<store.AgentConfigRow | undefined> {
  const known = knownConfigs.get(identityKey(identity));
  if (known) return known;
  const row = await store.findConfigByIdentity(tx, identity);
  if (row) remember(tx, identity, row);
  return row;
}

/** Only once the transaction commits: a row a rolled-back transaction wrote must not be found later. */
function remember(tx: Tx, identity: store.ConfigIdentity, row: store.AgentConfigRow): void {
  tx.afterCommit(() => knownConfigs.set(identityKey(identity), row, knownConfigs.version()));
}

async function checkMcpSecrets(tx: Tx, orgId: string, projectId: string, servers: readonly McpServerChoice[], issues: ConfigIssues): Promise<void> {
  for (const server of servers) {
    if (server.auth.type === "none") continue;
    const found = await findProjectSecret(tx, orgId, projectId, server.auth.secretId);
    const path = ["mcp", server.key, "auth", "secret_id"];
    const kind = server.auth.type === "bearer" ? "generic" : "oauth_token_set";
    if (!found) issues.add(path, `no secret ${server.auth.publicSecretId} is owned by or granted to this project`);
    else if (found.secret.kind !== kind) issues.add(path, `must be a${kind === "generic" ? "" : "n"} ${kind} secret holding the token; ${server.auth.publicSecretId} is ${found.secret.kind}`);
  }
}

/** The project's config, or undefined; for other modules, inside their transaction. */
export async function findConfig(tx: Tx, orgId: string, projectId: string, configId: string): Promise<store.AgentConfigRow | undefined> {
  return store.findConfig(tx, orgId, projectId, configId);
}

/** The project's configs among `configIds`, by id; for lists of things that point at configs. */
export async function findConfigs(tx: Tx, orgId: string, projectId: string, configIds: readonly string[]): Promise<Map<string, store.AgentConfigRow>> {
  const rows = await store.findConfigs(tx, orgId, projectId, [...new Set(configIds)]);
  return new Map(rows.map((row) => [row.id, row]));
}
