import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { startFakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { createConfig, finalOutputs, launch, untilEvents } from "../support/agent-loop.js";
import { ApiClient } from "../support/client.js";
import { exited, freePort, ready, SVC_ENTRY } from "../support/process.js";
import { useProcessDatabases } from "../support/process-database.js";

/*
 * Logs never carry what tenants entrust to svc (issue 9, item 4): `svc serve` runs at trace level while a
 * user signs up, stores a provider key and a secret, and an agent answers a message and fails a request;
 * then its whole output is searched for every planted value, on the database the run tests.
 */
const databaseEnv = useProcessDatabases("logs");

const PLANTED = {
  password: "planted-password-7c1",
  providerKey: "sk-planted-provider-key-93d",
  secret: "planted-secret-value-4ab",
  message: "planted message text 51e",
};

describe("log secrecy", () => {
  it("writes no token, password, secret value or message content to the log at trace level", { timeout: 120_000 }, async () => {
    const provider = await startFakeProvider();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const env = { ...process.env, ...(await databaseEnv()), PORT: String(port), HOST: "127.0.0.1", SVC_PUBLIC_URL: url, SVC_LOG_LEVEL: "trace", SVC_ALLOW_PRIVATE_NETWORK: "true" };
    const child = spawn(process.execPath, [...SVC_ENTRY, "serve"], { env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    try {
      await ready(url, child);
      const api = new ApiClient(url, url);
      const session = await api.signup({ email: "logs@example.com", password: PLANTED.password });
      const token = await api.pat(session);
      const org = await api.post("/api/v1/orgs", { name: "Logs" }, { token });
      const [orgId, projectId] = [org.body.org.id as string, org.body.project.id as string];
      const key = await api.post(`/api/v1/orgs/${orgId}/secrets`, { owner: { kind: "org" }, name: "provider", material: { kind: "generic", value: PLANTED.providerKey } }, { token });
      await api.post(`/api/v1/orgs/${orgId}/secrets`, { owner: { kind: "org" }, name: "other", material: { kind: "generic", value: PLANTED.secret } }, { token });
      const providerConfig = await api.post(
        `/api/v1/orgs/${orgId}/model-provider-configs`,
        { name: "fake", api_format: "openai-chat-completions", base_url: provider.baseUrl, credential_secret_id: key.body.id },
        { token },
      );
      const model = await api.post(
        `/api/v1/orgs/${orgId}/model-provider-configs/${providerConfig.body.config.id}/models`,
        { name: "fast", provider_model_slug: "fake-model", context_window_tokens: 128000, max_output_tokens: 4096 },
        { token },
      );
      await api.post(`/api/v1/orgs/${orgId}/projects/${projectId}/model-grants`, { configured_model_id: model.body.id }, { token });
      const project = { token, session, orgId, projectId, base: `/api/v1/orgs/${orgId}/projects/${projectId}`, providerName: "fake", modelName: "fast", configuredModelId: model.body.id as string };
      const source = `version: v1\ninstruction: "Be brief."\nmodel:\n  provider_config: fake\n  name: fast\n`;
      const agentId = await launch(api, project, await createConfig(api, project, source), PLANTED.message);
      await untilEvents(api, project, agentId, (list) => finalOutputs(list).length === 1);
      // A refused request with the planted text in it, and one with a bad token.
      await api.post(`${project.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "text", text: `${PLANTED.message}\u0000` }] }, { token });
      await api.get("/api/v1/me", { token: `${token}x` });
    } finally {
      child.kill("SIGTERM");
      await exited(child);
      await provider.close();
    }
    expect(output.length).toBeGreaterThan(1000);
    for (const [what, value] of Object.entries(PLANTED)) expect(output.includes(value), `${what} appears in the log`).toBe(false);
    expect(/svc_pat_v1_[A-Za-z0-9_-]{10,}/.test(output), "a personal access token appears in the log").toBe(false);
    // Requests are logged by their route's pattern with the status; agent steps with the agent's public id.
    expect(output).toContain(`"method":"GET","route":"/api/v1/me","status":401`);
    expect(output).toMatch(/"agent_id":"agt_[a-z2-7]{26}".*"msg":"model step finished"/);
  });
});
