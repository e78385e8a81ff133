import { expect } from "vitest";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import type { ApiClient } from "../support/client.js";

/** Shared by the integrations test files. */

export const ITG_ID = /^itg_[a-z2-7]{26}$/;
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** Every member the spec allows on an Integration; nothing else may appear. */
export const INTEGRATION_MEMBERS = [
  "id",
  "project_id",
  "name",
  "integration_kind",
  "state",
  "setup_revision",
  "last_oauth_flow_id",
  "runtime_failure",
  "settings",
  "provider_tenant_id",
  "provider_account_ref",
  "provider_agent_display_name",
  "bot_mention",
  "credential_secret_id",
  "provider_config",
  "capabilities",
  "created_at",
  "updated_at",
];

/** A project with a model (so it can have configs and profiles); the provider is never called. */
export async function integrationProject(api: ApiClient): Promise<AgentProject & { integrations: string }> {
  const p = await agentProject(api, "http://127.0.0.1:9/v1");
  return { ...p, integrations: `${p.base}/integrations` };
}

export async function createProfile(api: ApiClient, p: AgentProject, name = `profile ${Math.random()}`): Promise<string> {
  const config = await api.post(`${p.base}/agent-configs`, { source: yamlConfig(p), source_format: "yaml" }, { token: p.token });
  // The same source twice is the same config (200).
  expect([200, 201], config.text).toContain(config.status);
  const profile = await api.post(`${p.base}/agent-profiles`, { name, config: config.body.id }, { token: p.token });
  expect(profile.status, profile.text).toBe(201);
  return profile.body.id as string;
}

export async function createIntegration(api: ApiClient, p: { integrations: string; token: string }, name: string, settings: object = {}) {
  const reply = await api.post(p.integrations, { name, integration_kind: "slack_thread", settings }, { token: p.token });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

/** A slack_app_credentials secret owned by the project, holding `botToken`. */
export async function slackSecret(api: ApiClient, p: AgentProject, botToken: string, projectId = p.projectId): Promise<string> {
  const reply = await api.post(
    `/api/v1/orgs/${p.orgId}/secrets`,
    {
      owner: { kind: "project", project_id: projectId },
      name: `slack ${Math.random()}`,
      material: { kind: "slack_app_credentials", access_token: botToken, client_id: "111.222", client_secret: "client-secret-SENTINEL", signing_secret: "signing-SENTINEL" },
    },
    { token: p.token },
  );
  expect(reply.status, reply.text).toBe(201);
  return reply.body.id as string;
}

export function expectClosedIntegration(body: Record<string, unknown>): void {
  for (const key of Object.keys(body)) expect(INTEGRATION_MEMBERS, `unexpected member ${key}`).toContain(key);
}
