import { expect } from "vitest";
import type { ApiClient, BrowserSession } from "./client.js";

/** The model-facing setup every agent test needs, made through the API like a user would. */

export type ApiFormat = "openai-responses" | "openai-chat-completions" | "anthropic-messages";

export interface AgentProject {
  token: string;
  /** The owner's browser session (org keys are minted through one). */
  session: BrowserSession;
  orgId: string;
  projectId: string;
  /** `/api/v1/orgs/{org}/projects/{project}` */
  base: string;
  providerName: string;
  modelName: string;
  configuredModelId: string;
}

/**
 * A user with an org whose default project is granted one model served by `providerUrl` (a fake provider's
 * base URL) in `format`.
 */
export async function agentProject(
  api: ApiClient,
  providerUrl: string,
  options: { format?: ApiFormat; contextWindowTokens?: number; maxOutputTokens?: number } = {},
): Promise<AgentProject> {
  const { token, org, project, session } = await api.userWithOrg();
  const auth = { token };
  const secret = await api.post(
    `/api/v1/orgs/${org.id}/secrets`,
    { owner: { kind: "org" }, name: "provider key", material: { kind: "generic", value: "sk-test-key" } },
    auth,
  );
  expect(secret.status, secret.text).toBe(201);
  const provider = await api.post(
    `/api/v1/orgs/${org.id}/model-provider-configs`,
    { name: "fake", api_format: options.format ?? "openai-chat-completions", base_url: providerUrl, credential_secret_id: secret.body.id },
    auth,
  );
  expect(provider.status, provider.text).toBe(201);
  const providerId = provider.body.config.id as string;
  const model = await api.post(
    `/api/v1/orgs/${org.id}/model-provider-configs/${providerId}/models`,
    {
      name: "fast",
      provider_model_slug: "fake-model",
      context_window_tokens: options.contextWindowTokens ?? 128_000,
      max_output_tokens: options.maxOutputTokens ?? 4096,
    },
    auth,
  );
  expect(model.status, model.text).toBe(201);
  const modelId = model.body.id as string;
  const grant = await api.post(`/api/v1/orgs/${org.id}/projects/${project.id}/model-grants`, { configured_model_id: modelId }, auth);
  expect(grant.status, grant.text).toBe(201);
  return {
    token,
    session,
    orgId: org.id,
    projectId: project.id,
    base: `/api/v1/orgs/${org.id}/projects/${project.id}`,
    providerName: "fake",
    modelName: "fast",
    configuredModelId: modelId,
  };
}

/** A YAML agent config for the project's model; `rest` is appended verbatim (e.g. a `tools:` map). */
export function yamlConfig(project: AgentProject, rest = "", instruction = "You are a helpful test agent."): string {
  return `version: v1\ninstruction: ${JSON.stringify(instruction)}\nmodel:\n  provider_config: ${project.providerName}\n  name: ${project.modelName}\n${rest}`;
}
