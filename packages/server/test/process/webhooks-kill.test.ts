import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { startFakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, eventually, launch } from "../support/agent-loop.js";
import { ApiClient } from "../support/client.js";
import { exited, freePort, ready, SVC_ENTRY } from "../support/process.js";
import { useProcessDatabases } from "../support/process-database.js";
import { startWebhookReceiver, verified } from "../support/webhook-receiver.js";

/*
 * A webhook's delivery survives svc killed with SIGKILL between the change it reports and its delivery
 * (docs/webhooks.md, "Delivery"): the outbox row was written in the change's own transaction, so the
 * restarted svc sends it. The receiver is down while the approval opens (the first attempt fails), svc is
 * killed, the receiver comes up, svc starts again: the receiver gets the agent.waiting event exactly as
 * signed, and the delivery ends succeeded. On both databases: `svc serve` runs the sender.
 */
const TIMEOUT_MS = 300_000;
const databaseEnv = useProcessDatabases("webhooks-kill");
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const toolsYaml = `tools:\n  lookup:\n    type: custom\n    description: Looks a thing up\n    permission:\n      mode: always_ask\n    input_schema:\n      type: object\n      properties:\n        q: { type: string }\n      required: [q]\n`;

describe("webhooks across a crash", () => {
  it("svc killed between the change and its delivery loses nothing: the restarted svc delivers it", { timeout: TIMEOUT_MS }, async () => {
    const provider = await startFakeProvider();
    cleanups.push(() => provider.close());
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const env = {
      ...process.env,
      ...(await databaseEnv()),
      PORT: String(port),
      HOST: "127.0.0.1",
      SVC_LOG_LEVEL: "error",
      SVC_PUBLIC_URL: url,
      SVC_ALLOW_PRIVATE_NETWORK: "true",
      SVC_MAINTENANCE_INTERVAL_MS: "300",
      SVC_WORKER_POLL_MS: "100",
    };
    const start = async () => {
      const child = spawn(process.execPath, [...SVC_ENTRY, "serve"], { env, stdio: ["ignore", "pipe", "pipe"] });
      cleanups.push(async () => {
        // One that already ended has nothing to wait for.
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill("SIGKILL");
        await exited(child);
      });
      await ready(url, child);
      return child;
    };
    let child: ChildProcess = await start();
    const api = new ApiClient(url, url);

    const receiverPort = await freePort();
    const project = await agentProject(api, provider.baseUrl);
    const endpoints = `/api/v1/orgs/${project.orgId}/webhook-endpoints`;
    const endpoint = await api.post(endpoints, { url: `http://127.0.0.1:${receiverPort}/hook`, event_types: ["agent.waiting"] }, { token: project.token });
    expect(endpoint.status, endpoint.text).toBe(201);
    const deliveries = async () => (await api.get(`${endpoints}/${endpoint.body.id}/deliveries`, { token: project.token })).body.data as any[];

    provider.script({ toolCalls: [{ name: "lookup", input: { q: "one" } }] });
    const agentId = await launch(api, project, await createConfig(api, project, yamlConfig(project, toolsYaml)), "go");
    // The approval opened and its event was written; the receiver is not listening, so the first attempt failed.
    const [pending] = await eventually(deliveries, (list) => list.length === 1 && list[0].status === "pending" && list[0].last_error !== null);
    expect(pending.attempts).toBeGreaterThanOrEqual(1);

    child.kill("SIGKILL");
    await exited(child);
    const receiver = await startWebhookReceiver(receiverPort);
    cleanups.push(() => receiver.close());
    child = await start();

    const [request] = await eventually(async () => receiver.ofType("agent.waiting"), (list) => list.length >= 1, 120_000);
    const event = await verified(endpoint.body.secret, request!);
    expect(event.data).toMatchObject({ agent_id: agentId, project_id: project.projectId, interaction: { interaction_kind: "permission", state: "open" } });
    expect(request!.headers["webhook-id"]).toBe(pending.webhook_id);
    const [delivered] = await eventually(deliveries, (list) => list[0]?.status === "succeeded");
    expect(delivered).toMatchObject({ id: pending.id, status: "succeeded", last_status_code: 204 });
    expect(receiver.ofType("agent.waiting")).toHaveLength(1);

    child.kill("SIGTERM");
    expect(await exited(child)).toBe(0);
  });
});
