import { sql } from "drizzle-orm";
import { bigint, boolean, check, foreignKey, index, integer, jsonb, pgTable, text, unique, uuid } from "drizzle-orm/pg-core";
import type { AgentDefinition } from "../../runtime/definition.js";
import { createdAt, dbNow, idColumn, optionalTime, requiredTime, updatedAt } from "./columns.js";
import { users } from "./identity.js";
import { projects } from "./orgs.js";

/*
 * What an agent is: immutable configs, named profiles pointing at them, agents, and the actors inputs
 * are attributed to. Every row carries org_id and project_id and points at its project through
 * (org_id, project_id), so nothing can reference another org's rows; deleting a project cascades.
 */

/**
 * Immutable. The same definition submitted twice resolves to the same row through the unique key on
 * (project, effective hash, format, source hash). The model is pinned by id, not by foreign key: a config
 * outlives the model it names, and a run against a deleted model fails with a clear error instead.
 */
export const agentConfigs = pgTable(
  "agent_configs",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    projectId: uuid("project_id").notNull(),
    source: text("source").notNull(),
    sourceFormat: text("source_format").notNull(),
    sourceHash: text("source_hash").notNull(),
    compilerVersion: text("compiler_version").notNull(),
    compiledDefinition: jsonb("compiled_definition").$type<AgentDefinition>().notNull(),
    effectiveDefinitionHash: text("effective_definition_hash").notNull(),
    instructionHash: text("instruction_hash").notNull(),
    configuredModelId: uuid("configured_model_id").notNull(),
    configuredModelRevisionId: uuid("configured_model_revision_id").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    unique("agent_configs_org_id_id").on(t.orgId, t.id),
    unique("agent_configs_identity").on(t.projectId, t.effectiveDefinitionHash, t.sourceFormat, t.sourceHash),
    foreignKey({ columns: [t.orgId, t.projectId], foreignColumns: [projects.orgId, projects.id] }).onDelete("cascade"),
    check("agent_configs_source_format", sql`${t.sourceFormat} IN ('yaml', 'json')`),
    // The project's configs listed newest first (GET …/agent-configs), a page at a time.
    index("agent_configs_project_created").on(t.orgId, t.projectId, t.createdAt, t.id),
  ],
);

export const agentProfiles = pgTable(
  "agent_profiles",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    projectId: uuid("project_id").notNull(),
    name: text("name").notNull(),
    currentConfigId: uuid("current_config_id").notNull(),
    currentGeneration: integer("current_generation").notNull().default(1),
    idempotencyKey: text("idempotency_key"),
    /** What the profile is for; shown to MCP clients as its tool's description (docs/mcp.md). */
    description: text("description").notNull().default(""),
    /** Offered as a tool by the project's MCP endpoint (docs/mcp.md, "svc as an MCP server"). */
    mcpTool: boolean("mcp_tool").notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    unique("agent_profiles_org_id_id").on(t.orgId, t.id),
    unique("agent_profiles_project_name").on(t.projectId, t.name),
    unique("agent_profiles_project_idempotency_key").on(t.projectId, t.idempotencyKey),
    foreignKey({ columns: [t.orgId, t.projectId], foreignColumns: [projects.orgId, projects.id] }).onDelete("cascade"),
    foreignKey({ columns: [t.orgId, t.currentConfigId], foreignColumns: [agentConfigs.orgId, agentConfigs.id] }),
    check("agent_profiles_generation", sql`${t.currentGeneration} >= 1`),
    index("agent_profiles_project_created_idx").on(t.projectId, t.createdAt, t.id),
  ],
);

/** Every config a profile has pointed at, by increasing generation. */
export const agentProfileVersions = pgTable(
  "agent_profile_versions",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    agentProfileId: uuid("agent_profile_id").notNull(),
    generation: integer("generation").notNull(),
    agentConfigId: uuid("agent_config_id").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    unique("agent_profile_versions_generation").on(t.agentProfileId, t.generation),
    foreignKey({ columns: [t.orgId, t.agentProfileId], foreignColumns: [agentProfiles.orgId, agentProfiles.id] }).onDelete("cascade"),
    foreignKey({ columns: [t.orgId, t.agentConfigId], foreignColumns: [agentConfigs.orgId, agentConfigs.id] }),
  ],
);

/**
 * The agents row is the per-agent lock: every mutation of an agent's timeline locks it first, and
 * `next_event_sequence` hands out dense, gap-free event sequences in commit order (DESIGN.md rule 1).
 */
export const agents = pgTable(
  "agents",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    projectId: uuid("project_id").notNull(),
    name: text("name").notNull().default(""),
    state: text("state").notNull().default("active"),
    currentConfigId: uuid("current_config_id").notNull(),
    /** Provenance only: deleting the profile keeps the agent running on its own config. */
    agentProfileId: uuid("agent_profile_id"),
    idempotencyKey: text("idempotency_key"),
    /** The coordinator that launched this agent with `delegate` (docs/delegation.md); null for a top-level agent. */
    parentAgentId: uuid("parent_agent_id"),
    /** The top-level agent of its delegation tree; null for a top-level agent. */
    rootAgentId: uuid("root_agent_id"),
    /** 0 for a top-level agent, its parent's plus one for a child (at most runtime/tools/delegation.ts MAX_DEPTH). */
    delegationDepth: integer("delegation_depth").notNull().default(0),
    nextEventSequence: bigint("next_event_sequence", { mode: "number" }).notNull().default(1),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    archivedAt: optionalTime("archived_at"),
  },
  (t) => [
    unique("agents_org_id_id").on(t.orgId, t.id),
    unique("agents_project_idempotency_key").on(t.projectId, t.idempotencyKey),
    foreignKey({ columns: [t.orgId, t.projectId], foreignColumns: [projects.orgId, projects.id] }).onDelete("cascade"),
    foreignKey({ columns: [t.orgId, t.currentConfigId], foreignColumns: [agentConfigs.orgId, agentConfigs.id] }),
    foreignKey({ columns: [t.agentProfileId], foreignColumns: [agentProfiles.id] }).onDelete("set null"),
    foreignKey({ name: "agents_parent_agent_fk", columns: [t.orgId, t.parentAgentId], foreignColumns: [t.orgId, t.id] }).onDelete("cascade"),
    index("agents_parent_created_idx").on(t.parentAgentId, t.createdAt, t.id).where(sql`${t.parentAgentId} IS NOT NULL`),
    check("agents_state", sql`(${t.state} = 'active' AND ${t.archivedAt} IS NULL) OR (${t.state} = 'archived' AND ${t.archivedAt} IS NOT NULL)`),
    check("agents_next_event_sequence", sql`${t.nextEventSequence} >= 1`),
    index("agents_project_active_created_idx").on(t.projectId, t.createdAt, t.id).where(sql`${t.state} = 'active'`),
    index("agents_profile_idx").on(t.agentProfileId),
  ],
);

/**
 * Who an input or a resolution is attributed to. `svc` actors stand for the service's own users (one per
 * user and project, made on first use); `external` actors are upserted through the API by
 * (provider_tenant_id, provider_user_id); `integration` actors are written by integrations. An absent
 * tenant is stored as '' so the uniqueness key treats it as one value.
 */
export const actors = pgTable(
  "actors",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    projectId: uuid("project_id").notNull(),
    provider: text("provider").notNull(),
    providerTenantId: text("provider_tenant_id").notNull().default(""),
    providerUserId: text("provider_user_id").notNull(),
    displayName: text("display_name"),
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull().default({}),
    userId: uuid("user_id").references(() => users.id, { onDelete: "set null" }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    unique("actors_org_id_id").on(t.orgId, t.id),
    unique("actors_identity").on(t.projectId, t.provider, t.providerTenantId, t.providerUserId),
    foreignKey({ columns: [t.orgId, t.projectId], foreignColumns: [projects.orgId, projects.id] }).onDelete("cascade"),
    check("actors_provider", sql`${t.provider} IN ('svc', 'integration', 'external')`),
    index("actors_project_created_idx").on(t.projectId, t.createdAt, t.id),
  ],
);

/**
 * Everything that enters an agent's conversation. Content inputs wait in the backlog (`received`) until
 * the worker admits them into a turn; the other kinds are applied by their own request and are
 * `immediate`. The request digest lets an Idempotency-Key replay be told from a conflicting reuse.
 */
export const agentInputs = pgTable(
  "agent_inputs",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    agentId: uuid("agent_id").notNull(),
    state: text("state").notNull().default("received"),
    inputKind: text("input_kind").notNull(),
    deliveryMode: text("delivery_mode").notNull(),
    inputRank: bigint("input_rank", { mode: "number" }).notNull().default(0),
    actorId: uuid("actor_id"),
    /**
     * The organization API key that sent a content input naming no actor (docs/usage-and-budgets.md: usage
     * belongs to the actor, else to the key). A plain id: the input outlives a revoked or deleted key.
     */
    apiKeyId: uuid("api_key_id"),
    controlType: text("control_type"),
    interactionId: uuid("interaction_id"),
    agentConfigId: uuid("agent_config_id"),
    idempotencyScope: text("idempotency_scope").notNull(),
    /** Null for content inputs sent without an Idempotency-Key (NULLs never collide in the unique key). */
    inputIdempotencyKey: text("input_idempotency_key"),
    requestDigest: text("request_digest").notNull(),
    contentBlocks: jsonb("content_blocks").$type<unknown[]>().notNull().default([]),
    queuedAt: requiredTime("queued_at").default(dbNow),
    admittedEventId: uuid("admitted_event_id"),
    resolvedAt: optionalTime("resolved_at"),
    canceledAt: optionalTime("canceled_at"),
  },
  (t) => [
    unique("agent_inputs_idempotency").on(t.agentId, t.idempotencyScope, t.inputIdempotencyKey),
    foreignKey({ columns: [t.orgId, t.agentId], foreignColumns: [agents.orgId, agents.id] }).onDelete("cascade"),
    foreignKey({ columns: [t.orgId, t.actorId], foreignColumns: [actors.orgId, actors.id] }),
    check("agent_inputs_state", sql`${t.state} IN ('received', 'resolved', 'rejected', 'canceled')`),
    check("agent_inputs_kind", sql`${t.inputKind} IN ('content', 'control', 'interaction_response', 'config_change')`),
    check(
      "agent_inputs_delivery_mode",
      sql`(${t.inputKind} = 'content' AND ${t.deliveryMode} IN ('queued', 'steering'))
        OR (${t.inputKind} <> 'content' AND ${t.deliveryMode} = 'immediate')`,
    ),
    index("agent_inputs_backlog_idx").on(t.agentId, t.deliveryMode, t.inputRank, t.queuedAt, t.id).where(sql`${t.state} = 'received'`),
  ],
);
