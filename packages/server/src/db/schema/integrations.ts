import { sql } from "drizzle-orm";
import { boolean, check, foreignKey, index, integer, jsonb, pgTable, text, unique, uuid } from "drizzle-orm/pg-core";
import { createdAt, dbNow, idColumn, optionalTime, requiredTime, updatedAt } from "./columns.js";
import { agents } from "./agents.js";
import { users } from "./identity.js";
import { projects } from "./orgs.js";
import { secrets, type SecretEnvelope } from "./secrets.js";

/**
 * Integrations (spec: Integration): per-project connections to a provider. Identity fields stay null
 * until the first verified connection and are kept after a disconnect. `provider_identity` holds the
 * verified facts a kind needs later (a Slack app and bot id) that the API does not show.
 */
export const integrations = pgTable(
  "integrations",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    projectId: uuid("project_id").notNull(),
    name: text("name").notNull(),
    kind: text("kind").notNull(),
    state: text("state").notNull().default("disconnected"),
    setupRevision: integer("setup_revision").notNull().default(1),
    lastOAuthFlowId: uuid("last_oauth_flow_id"),
    settings: jsonb("settings").$type<Record<string, unknown>>().notNull().default({}),
    providerTenantId: text("provider_tenant_id"),
    providerAccountRef: text("provider_account_ref"),
    providerAgentDisplayName: text("provider_agent_display_name").notNull().default(""),
    botMention: text("bot_mention"),
    credentialSecretId: uuid("credential_secret_id"),
    providerConfig: jsonb("provider_config").$type<Record<string, unknown>>().notNull().default({}),
    providerIdentity: jsonb("provider_identity").$type<Record<string, string>>().notNull().default({}),
    runtimeFailureMessage: text("runtime_failure_message"),
    runtimeFailureRetryAt: optionalTime("runtime_failure_retry_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    unique("integrations_org_id_id").on(t.orgId, t.id),
    unique("integrations_project_name").on(t.projectId, t.name),
    foreignKey({ columns: [t.orgId, t.projectId], foreignColumns: [projects.orgId, projects.id] }).onDelete("cascade"),
    // A credential in use blocks the secret's deletion (409 from the secrets service).
    foreignKey({ name: "integrations_credential_secret_fk", columns: [t.orgId, t.credentialSecretId], foreignColumns: [secrets.orgId, secrets.id] }),
    check("integrations_state", sql`${t.state} IN ('active', 'disconnected')`),
    check("integrations_setup_revision", sql`${t.setupRevision} >= 1`),
    check(
      "integrations_runtime_failure",
      sql`(${t.runtimeFailureMessage} IS NULL) = (${t.runtimeFailureRetryAt} IS NULL)`,
    ),
    index("integrations_org_created_idx").on(t.orgId, t.createdAt, t.id),
    index("integrations_credential_idx").on(t.orgId, t.credentialSecretId),
  ],
);

/**
 * One provider OAuth install started through the API. The app credentials the caller supplied wait here,
 * sealed, until the provider redirects back with a code; a flow is redeemed at most once, before it expires.
 */
export const integrationOAuthFlows = pgTable(
  "integration_oauth_flows",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    integrationId: uuid("integration_id").notNull(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    envelope: jsonb("envelope").$type<SecretEnvelope>().notNull(),
    returnTo: text("return_to"),
    expiresAt: requiredTime("expires_at"),
    consumedAt: optionalTime("consumed_at"),
    createdAt: createdAt(),
  },
  (t) => [
    foreignKey({ columns: [t.orgId, t.integrationId], foreignColumns: [integrations.orgId, integrations.id] }).onDelete("cascade"),
    index("integration_oauth_flows_integration_idx").on(t.integrationId),
  ],
);

/**
 * An agent subscribed to one concrete provider conversation through an integration. `conversation_key`
 * is the conversation's canonical JSON, so the same address written in another member order is the same
 * conversation. `events` is the subscription's filter, names from its kind's list (GitHub's
 * `discussion_comment`, `review_comment`, `commit`); null forwards every event.
 */
export const integrationSubscriptions = pgTable(
  "integration_subscriptions",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    projectId: uuid("project_id").notNull(),
    integrationId: uuid("integration_id").notNull(),
    agentId: uuid("agent_id").notNull(),
    conversation: jsonb("conversation").$type<Record<string, unknown>>().notNull(),
    conversationKey: text("conversation_key").notNull(),
    events: text("events").array(),
    createdAt: createdAt(),
  },
  (t) => [
    unique("integration_subscriptions_attachment").on(t.integrationId, t.conversationKey, t.agentId),
    foreignKey({ columns: [t.orgId, t.integrationId], foreignColumns: [integrations.orgId, integrations.id] }).onDelete("cascade"),
    foreignKey({ columns: [t.orgId, t.agentId], foreignColumns: [agents.orgId, agents.id] }).onDelete("cascade"),
    index("integration_subscriptions_list_idx").on(t.integrationId, t.createdAt, t.id),
    index("integration_subscriptions_agent_idx").on(t.agentId),
  ],
);

/**
 * The conversation an agent's integration tools and interaction handler act on (reference docs:
 * integrations/overview, "A provider or scheduled launch records one immutable conversation for that
 * integration and agent"). Written once, by the launch, before the first input; never changed. It also
 * marks the conversation as launched: a later mention there does not launch a replacement.
 */
export const integrationAssignments = pgTable(
  "integration_assignments",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    projectId: uuid("project_id").notNull(),
    integrationId: uuid("integration_id").notNull(),
    agentId: uuid("agent_id").notNull(),
    conversation: jsonb("conversation").$type<Record<string, unknown>>().notNull(),
    conversationKey: text("conversation_key").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    unique("integration_assignments_agent").on(t.agentId, t.integrationId),
    foreignKey({ columns: [t.orgId, t.integrationId], foreignColumns: [integrations.orgId, integrations.id] }).onDelete("cascade"),
    foreignKey({ columns: [t.orgId, t.agentId], foreignColumns: [agents.orgId, agents.id] }).onDelete("cascade"),
    index("integration_assignments_conversation_idx").on(t.integrationId, t.conversationKey),
  ],
);

/**
 * A profile chooser a mention opened (reference docs: integrations/slack, "With several, the first reply
 * asks which profile to use"): the mention waits here until someone picks a profile or the menu expires.
 * The first pick wins (`chosen_event` is the click that won, so its retry can finish the launch).
 */
export const integrationLaunchChoices = pgTable(
  "integration_launch_choices",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    integrationId: uuid("integration_id").notNull(),
    sourceEventId: text("source_event_id").notNull(),
    conversation: jsonb("conversation").$type<Record<string, unknown>>().notNull(),
    profileIds: jsonb("profile_ids").$type<string[]>().notNull(),
    personTenantId: text("person_tenant_id").notNull(),
    personUserId: text("person_user_id").notNull(),
    text: text("text").notNull(),
    postedTs: text("posted_ts"),
    chosenProfileId: uuid("chosen_profile_id"),
    chosenEvent: text("chosen_event"),
    expiresAt: requiredTime("expires_at"),
    createdAt: createdAt(),
  },
  (t) => [
    unique("integration_launch_choices_event").on(t.integrationId, t.sourceEventId),
    foreignKey({ columns: [t.orgId, t.integrationId], foreignColumns: [integrations.orgId, integrations.id] }).onDelete("cascade"),
  ],
);

/**
 * An agent's interaction handler selection as the `set_interaction_handler` tool last wrote it (reference
 * docs: integrations/overview, "Route questions and approvals"). No row: automatic selection, nothing set.
 * `integration_id` null selects the dashboard only. With `auto_select`, an input admitted to a turn after
 * `set_at` selects again (modules/integrations/handler-selection.ts).
 */
export const agentHandlerSelections = pgTable(
  "agent_handler_selections",
  {
    agentId: uuid("agent_id").primaryKey(),
    orgId: uuid("org_id").notNull(),
    integrationId: uuid("integration_id"),
    autoSelect: boolean("auto_select").notNull(),
    setAt: requiredTime("set_at").default(dbNow),
  },
  (t) => [foreignKey({ columns: [t.orgId, t.agentId], foreignColumns: [agents.orgId, agents.id] }).onDelete("cascade")],
);
