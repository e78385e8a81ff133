import { Type } from "typebox";
import { Cursor, Limit, NameFilter } from "../../platform/http/lists.js";
import { component } from "../../platform/http/components.js";
import { Id, Timestamp } from "../../platform/http/schemas.js";

/** Every kind the spec names (spec: Integration, integration_kind); kinds/index.ts composes one for each. */
export const SPEC_KINDS = ["slack_thread", "discord_thread", "github_pr"] as const;

export const TAG = "Integrations";
const strict = { additionalProperties: false } as const;
/** "object, any members" (spec): settings, provider_config, JSON Schemas. */
const anyObject = (description?: string) =>
  Type.Unsafe<Record<string, unknown>>({ type: "object", additionalProperties: true, ...(description ? { description } : {}) });
const AnyObject = anyObject();

export const INTEGRATION_NAME = "^[a-zA-Z][a-zA-Z0-9-]{0,31}$";
export const IntegrationName = component("IntegrationName", Type.String({
  pattern: INTEGRATION_NAME,
  description: "A letter, then letters, digits or hyphens; 1 to 32 characters. Immutable; unique in the project; agents see tools as int__<name>__<operation>.",
}));

const CapabilityDefinition = component(
  "IntegrationCapabilityDefinition",
  Type.Object({ description: Type.Optional(Type.String()), input_schema: AnyObject }, strict),
);

export const Capabilities = component("IntegrationCapabilities", Type.Object(
  {
    tools: Type.Record(Type.String(), CapabilityDefinition, { description: "By operation; an integration named eng offers operation read as int__eng__read." }),
    settings: Type.Optional(CapabilityDefinition),
    subscription: Type.Optional(component("IntegrationSubscriptionCapability", Type.Object({ conversation_schema: AnyObject }, strict))),
    interaction_handler: Type.Optional(CapabilityDefinition),
    schedule: Type.Optional(CapabilityDefinition),
  },
  strict,
));

const RuntimeFailure = component("IntegrationRuntimeFailure", Type.Object(
  {
    message: Type.String(),
    retry_at: { ...Timestamp, description: "The earliest time the runtime may retry; a retry can start later." },
  },
  strict,
));

export const Integration = component("Integration", Type.Object(
  {
    id: Id("integration"),
    project_id: Id("project"),
    name: IntegrationName,
    integration_kind: Type.Enum([...SPEC_KINDS], { description: "Immutable." }),
    state: Type.Enum(["active", "disconnected"]),
    setup_revision: Type.Integer({ minimum: 1, description: "Credential and transport revision; settings updates leave it unchanged." }),
    last_oauth_flow_id: Type.Optional(Id("integrationOAuthFlow")),
    runtime_failure: Type.Optional({
      ...RuntimeFailure,
      description: "Only in Get integration. Its absence does not establish that the provider is reachable.",
    }),
    settings: anyObject("Validated against capabilities.settings.input_schema."),
    provider_tenant_id: Type.Optional(Type.String({ description: "Verified provider identity (a Slack workspace id); kept after disconnect." })),
    provider_account_ref: Type.Optional(Type.String({ description: "Verified provider account (a Slack bot user id); kept after disconnect." })),
    provider_agent_display_name: Type.String({ description: "Trimmed; at most 512 UTF-8 bytes; empty means no label." }),
    bot_mention: Type.Optional(Type.String({ description: "A GitHub App's @slug; absent for other kinds." })),
    credential_secret_id: Type.Optional(Id("secret")),
    provider_config: anyObject("Non-secret provider configuration; an empty object for Slack."),
    capabilities: Capabilities,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { ...strict, description: "A project's connection to a provider (spec: Integration)." },
));

export const IntegrationDefinition = component(
  "IntegrationDefinition",
  Type.Object({ integration_kind: Type.Enum([...SPEC_KINDS]), description: Type.String(), capabilities: Capabilities }, strict),
);
export const IntegrationDefinitions = Type.Object({ data: Type.Array(IntegrationDefinition) }, strict);

export const CreateIntegrationRequest = Type.Object(
  {
    name: IntegrationName,
    integration_kind: Type.Enum([...SPEC_KINDS], { description: "The kinds this svc implements (GET …/integration-definitions)." }),
    settings: Type.Optional(anyObject("Defaults to {}; validated against the kind's capabilities.settings.input_schema.")),
  },
  strict,
);

export const UpdateIntegrationRequest = Type.Object(
  { settings: anyObject("Replaces the whole settings document.") },
  { ...strict, description: "Only the settings; name and integration_kind are immutable." },
);

export const ListIntegrationsQuery = Type.Object(
  { name: Type.Optional(NameFilter), limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) },
  strict,
);

const DisplayName = Type.String({ maxLength: 512, description: "Trimmed; at most 512 UTF-8 bytes. Omitted or empty clears the label." });

export const SetupIntegrationRequest = Type.Object(
  {
    expected_setup_revision: Type.Integer({ minimum: 1, description: "The integration's current setup_revision; another is a 409." }),
    provider_tenant_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "For Slack, the workspace (team) id; checked against the credential." })),
    provider_account_ref: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "For Slack, the bot user id; checked against the credential." })),
    provider_agent_display_name: Type.Optional(DisplayName),
    credential_secret_id: Id("secret"),
    provider_config: Type.Optional(anyObject("Replaces the provider configuration; omitted keeps it.")),
  },
  strict,
);

export const ReconnectIntegrationRequest = Type.Object({ expected_setup_revision: Type.Integer({ minimum: 1 }) }, strict);

export const OAuthSetupRequest = Type.Object(
  {
    client_id: Type.String({ minLength: 1, maxLength: 255 }),
    client_secret: Type.String({ minLength: 1, maxLength: 255 }),
    signing_secret: Type.String({ minLength: 1, maxLength: 255 }),
    return_to: Type.Optional(
      Type.String({ description: "Where the browser returns after the install: used when it is a path on svc's origin (`/…`), otherwise `/`." }),
    ),
  },
  strict,
);

export const IntegrationOAuthSetup = component("IntegrationOAuthSetup", Type.Object(
  {
    provider: Type.String(),
    flow_id: Id("integrationOAuthFlow"),
    oauth_url: Type.String({ format: "uri" }),
    redirect_uri: Type.String({ format: "uri" }),
    events_url: Type.String({ format: "uri" }),
    actions_url: Type.String({ format: "uri" }),
    expires_at: Timestamp,
  },
  strict,
));

export const OAuthCallbackQuery = Type.Object(
  {
    state: Type.String({ minLength: 1, maxLength: 512 }),
    code: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
    error: Type.Optional(Type.String({ maxLength: 255 })),
  },
  { additionalProperties: true },
);

export const IntegrationParams = Type.Object({ orgID: Id("org"), projectID: Id("project"), integrationID: Id("integration") });
export const OrgParams = Type.Object({ orgID: Id("org") });

export const Subscription = component("IntegrationSubscription", Type.Object(
  {
    id: Id("integrationSubscription"),
    integration_id: Id("integration"),
    project_id: Id("project"),
    agent_id: Id("agent"),
    agent_name: Type.String(),
    conversation: anyObject("One concrete provider conversation, as capabilities.subscription.conversation_schema describes it."),
    events: Type.Optional(Type.Array(Type.String(), { description: "The events the subscription selects; absent, it forwards every event." })),
    created_at: Timestamp,
  },
  strict,
));

const EventName = Type.String({ minLength: 1, maxLength: 64 });

export const CreateSubscriptionRequest = Type.Object(
  {
    agent_id: Id("agent"),
    conversation: anyObject("Validated against capabilities.subscription.conversation_schema."),
    events: Type.Optional(
      Type.Array(EventName, {
        minItems: 1,
        maxItems: 16,
        uniqueItems: true,
        description:
          "The events to forward, from the kind's list (github_pr: discussion_comment, review_comment, commit); omitted, all of them. " +
          "Kinds without a list (slack_thread, discord_thread) refuse it. Repeating an attachment replaces its selection.",
      }),
    ),
  },
  strict,
);

export const ListSubscriptionsQuery = Type.Object({ limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) }, strict);

export const SubscriptionParams = Type.Object({
  orgID: Id("org"),
  projectID: Id("project"),
  integrationID: Id("integration"),
  subscriptionID: Id("integrationSubscription"),
});

export const LaunchSubscription = component("LaunchSubscription", Type.Object(
  { integration_id: Id("integration"), conversation: anyObject("Validated against the integration's capabilities.subscription.conversation_schema.") },
  strict,
));
