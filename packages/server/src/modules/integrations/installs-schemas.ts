import { Type } from "typebox";
import { component } from "../../platform/http/components.js";
import { Cursor, Limit, NameFilter, ResourceSort } from "../../platform/http/lists.js";
import { Id, Timestamp } from "../../platform/http/schemas.js";
import { OAuthSetupRequest } from "./schemas.js";

const strict = { additionalProperties: false } as const;

export const IntegrationInstall = component("IntegrationInstall", Type.Object(
  {
    id: Id("integrationInstall"),
    org_id: Id("org"),
    project_id: Id("project"),
    agent_profile_id: Type.Optional(Id("agentProfile")),
    agent_id: Type.Optional(Id("agent")),
    provider: Type.String({ description: "Always slack." }),
    integration_kind: Type.String({ description: "Always slack_thread." }),
    connection_mode: Type.String({ description: "events_api: Slack posts events and interactions to svc over HTTPS." }),
    state: Type.Enum(["active", "disabled"], { description: "disabled while the integration is disconnected." }),
    provider_tenant_id: Type.String({ description: "The Slack workspace (team) id." }),
    provider_account_ref: Type.String({ description: "The bot's Slack user id." }),
    provider_agent_display_name: Type.String(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  {
    ...strict,
    description:
      "A connected slack_thread integration whose launcher offers an agent profile, shown as the reference's install. Its id " +
      "is the integration's with the iin_ prefix. agent_profile_id is the profile the list was filtered by, otherwise the first " +
      "the launcher offers; agent_id is never set. Provider credentials are never returned.",
  },
));

export const ListIntegrationInstallsQuery = Type.Object(
  {
    name: Type.Optional({ ...NameFilter, description: "A case-insensitive glob over provider_agent_display_name." }),
    agent_profile_id: Type.Optional({ ...Id("agentProfile"), description: "Only installs whose launcher offers this profile." }),
    oauth_flow_id: Type.Optional({ ...Id("integrationOAuthFlow"), description: "Only the install this OAuth setup flow completed." }),
    sort: Type.Optional(ResourceSort),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
  },
  strict,
);

export const InstallParams = Type.Object({ orgID: Id("org"), projectID: Id("project"), integrationInstallID: Id("integrationInstall") });
export const ProfileSetupParams = Type.Object({ orgID: Id("org"), projectID: Id("project"), agentProfileID: Id("agentProfile") });

const { client_id, client_secret, signing_secret, return_to } = OAuthSetupRequest.properties;

export const CreateIntegrationOAuthSetupRequest = Type.Object(
  { provider: Type.Optional(Type.Enum(["slack"], { default: "slack" })), client_id, client_secret, signing_secret, return_to },
  strict,
);

export const CreateSlackSetupRequest = Type.Object(
  {
    app_name: Type.String({ minLength: 1, maxLength: 35, description: "The Slack app's and its bot's name; also the install's provider_agent_display_name." }),
    // Sent as an HTTP Authorization header: printable ASCII only, so no input can break the header.
    app_configuration_token: Type.String({
      minLength: 1,
      maxLength: 1024,
      pattern: "^[\\x21-\\x7e]+$",
      description: "A Slack app configuration token (xoxe.xoxp-…); used once to create the app, never stored.",
    }),
    return_to,
  },
  strict,
);

export const SlackSetup = component("SlackSetup", Type.Object(
  {
    provider: Type.String(),
    flow_id: Id("integrationOAuthFlow"),
    slack_app_id: Type.String(),
    oauth_url: Type.String({ format: "uri" }),
    redirect_uri: Type.String({ format: "uri" }),
    events_url: Type.String({ format: "uri" }),
    actions_url: Type.String({ format: "uri" }),
    expires_at: Timestamp,
  },
  strict,
));
