import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { startFakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, finalOutputs, launch, untilEvents } from "../support/agent-loop.js";
import { ApiClient } from "../support/client.js";
import { startFakeCollector, type ReceivedSpan } from "../support/fake-otlp-collector.js";
import { useProcessDatabases } from "../support/process-database.js";
import { exited, freePort, ready, SVC_ENTRY } from "../support/process.js";

/*
 * OpenTelemetry traces over OTLP/HTTP (issue 9, item 4; docs/operations.md, "Traces"): `svc serve` with
 * OTEL_EXPORTER_OTLP_ENDPOINT set sends its spans to a fake collector that decodes the OTLP JSON it
 * receives. An agent step is one trace (claim, model call, record under one root), an API request is a
 * server span that continues a caller's `traceparent`, and nothing tenants entrust to svc is in any span.
 * The spans are read after SIGTERM, whose shutdown sends what is still queued.
 */
const databaseEnv = useProcessDatabases("otlp");
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

const PLANTED = { secret: "planted-secret-value-e41", message: "planted message text 0c9" };

describe("OTLP traces", () => {
  it("exports an HTTP request and an agent step as traces a collector decodes, without content or secrets", { timeout: 120_000 }, async () => {
    const collector = await startFakeCollector();
    const provider = await startFakeProvider();
    cleanups.push(() => collector.close(), () => provider.close());
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const env = {
      ...process.env,
      ...(await databaseEnv()),
      PORT: String(port),
      HOST: "127.0.0.1",
      SVC_PUBLIC_URL: url,
      SVC_LOG_LEVEL: "warn",
      SVC_ALLOW_PRIVATE_NETWORK: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_SERVICE_NAME: "svc-under-test",
    };
    const child = spawn(process.execPath, [...SVC_ENTRY, "serve"], { env, stdio: ["ignore", "pipe", "pipe"] });
    cleanups.push(async () => child.kill("SIGKILL"));
    const api = new ApiClient(url, url);
    const caller = { traceId: randomBytes(16).toString("hex"), spanId: randomBytes(8).toString("hex") };
    let agentId: string;
    let token: string;
    try {
      await ready(url, child);
      const project = await agentProject(api, provider.baseUrl);
      token = project.token;
      const secret = await api.post(`/api/v1/orgs/${project.orgId}/secrets`, { owner: { kind: "org" }, name: "planted", material: { kind: "generic", value: PLANTED.secret } }, { token });
      expect(secret.status, secret.text).toBe(201);
      agentId = await launch(api, project, await createConfig(api, project, yamlConfig(project)), PLANTED.message);
      await untilEvents(api, project, agentId, (list) => finalOutputs(list).length === 1);
      const me = await api.get("/api/v1/me", { token, headers: { traceparent: `00-${caller.traceId}-${caller.spanId}-01` } });
      expect(me.status).toBe(200);
    } finally {
      child.kill("SIGTERM");
      expect(await exited(child)).toBe(0);
    }
    const { spans } = collector;

    expect(spans[0]?.resource["service.name"]).toBe("svc-under-test");
    const created = spans.find((s) => s.name === "POST /api/v1/orgs/:orgID/secrets");
    expect(created).toMatchObject({
      kind: 2,
      parentSpanId: "",
      attributes: { "http.request.method": "POST", "http.route": "/api/v1/orgs/:orgID/secrets", "http.response.status_code": 201 },
    });
    expect(created!.statusCode).not.toBe(2);

    const continued = spans.find((s) => s.name === "GET /api/v1/me" && s.traceId === caller.traceId);
    expect(continued, "the caller's traceparent is continued").toMatchObject({ parentSpanId: caller.spanId, attributes: { "http.response.status_code": 200 } });

    const roots = spans.filter((s) => s.name === "agent.step" && s.attributes["svc.agent.id"] === agentId);
    expect(roots).toHaveLength(1);
    const root = roots[0]!;
    expect(root).toMatchObject({ parentSpanId: "", attributes: { "svc.step.kind": "model", "svc.step.outcome": "reply", "svc.model_call.attempt": 1 } });
    const children = (name: string): ReceivedSpan[] => spans.filter((s) => s.name === name && s.traceId === root.traceId && s.parentSpanId === root.spanId);
    expect(children("agent.claim")).toHaveLength(1);
    expect(children("agent.record")).toHaveLength(1);
    expect(children("model.call")).toEqual([
      expect.objectContaining({ kind: 3, attributes: expect.objectContaining({ "gen_ai.request.model": "fake-model", "gen_ai.response.finish_reasons": ["end_turn"] }) }),
    ]);

    const sent = collector.bodies.join("\n");
    for (const [what, value] of Object.entries({ ...PLANTED, token: token!, providerKey: "sk-test-key" })) expect(sent.includes(value), `${what} appears in a span`).toBe(false);
  });
});
