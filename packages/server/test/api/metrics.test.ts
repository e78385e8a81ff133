import { describe, expect, it } from "vitest";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, finalOutputs, launch, untilEvents } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";

/* `GET /metrics` (issue 9, item 4; docs/operations.md) after a real model step and with a stream open. */
const server = useTestServer({}, { worker: true });
const provider = useFakeProvider({ reset: false });

/** The value of the sample `name{labels}` (labels in the order Prometheus writes them), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("GET /metrics", () => {
  it("counts requests by route, steps by outcome, open streams, the queue, the pool and the process", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)), "hello");
    await untilEvents(server.api, project, agentId, (list) => finalOutputs(list).length === 1);
    const stream = new AbortController();
    const opened = await fetch(`${server.url}${project.base}/agents/${agentId}/events/stream`, { headers: { authorization: `Bearer ${project.token}` }, signal: stream.signal });
    expect(opened.status).toBe(200);
    try {
      const reply = await fetch(`${server.url}/metrics`);
      expect(reply.status).toBe(200);
      expect(reply.headers.get("content-type")).toContain("text/plain");
      const text = await reply.text();
      expect(sample(text, 'svc_http_requests_total{method="POST",route="/api/v1/orgs/:orgID/projects/:projectID/agents",status="201"}')).toBe(1);
      expect(sample(text, 'svc_steps_total{kind="model",outcome="done"}')).toBeGreaterThanOrEqual(1);
      expect(sample(text, "svc_step_duration_seconds_count{kind=\"model\"}")).toBeGreaterThanOrEqual(1);
      expect(sample(text, "svc_claim_duration_seconds_count")).toBeGreaterThanOrEqual(1);
      expect(sample(text, "svc_stream_subscribers")).toBe(1);
      expect(sample(text, "svc_ready_wakeups")).toBe(0);
      expect(sample(text, 'svc_db_pool_connections{state="total"}')).toBeGreaterThanOrEqual(1);
      expect(sample(text, "svc_leases_reaped_total")).toBe(0);
      expect(sample(text, "svc_process_resident_memory_bytes")).toBeGreaterThan(0);
    } finally {
      stream.abort();
    }
  });
});
