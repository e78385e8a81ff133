import { expect } from "vitest";
import type { FakeProvider } from "../../src/runtime/models/fake-provider/index.js";
import type { AgentProject } from "./agents.js";
import type { ApiClient } from "./client.js";

/** Helpers for tests that drive agents through the running worker. */

export async function createConfig(api: ApiClient, project: AgentProject, source: string): Promise<string> {
  const reply = await api.post(`${project.base}/agent-configs`, { source, source_format: "yaml" }, { token: project.token });
  expect([200, 201], reply.text).toContain(reply.status);
  return reply.body.id as string;
}

export async function launch(api: ApiClient, project: AgentProject, configId: string, message?: string): Promise<string> {
  const reply = await api.post(`${project.base}/agents`, { config: configId, ...(message ? { message } : {}) }, { token: project.token });
  expect(reply.status, reply.text).toBe(201);
  return reply.body.agent.id as string;
}

export async function send(api: ApiClient, project: AgentProject, agentId: string, text: string, mode: "queued" | "steering" = "queued") {
  const reply = await api.post(`${project.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "text", text }], delivery_mode: mode }, { token: project.token });
  expect(reply.status, reply.text).toBe(201);
  return reply.body.agent_input.id as string;
}

export async function events(api: ApiClient, project: AgentProject, agentId: string): Promise<any[]> {
  const reply = await api.get(`${project.base}/agents/${agentId}/events?after_sequence=0&limit=500`, { token: project.token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.data;
}

/**
 * Polls every 100 ms until `check` holds, for at most `waitMs`: generous by default, since what it waits for
 * (a daemon, a worker, maintenance) is slow on a loaded machine, and it fails with the last value read.
 */
export async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, waitMs = 120_000): Promise<T> {
  const deadline = Date.now() + waitMs;
  let value = await read();
  while (!check(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  expect(check(value), `condition not reached; last value: ${JSON.stringify(value).slice(0, 2000)}`).toBe(true);
  return value;
}

export const untilEvents = (api: ApiClient, project: AgentProject, agentId: string, check: (events: any[]) => boolean) =>
  eventually(() => events(api, project, agentId), check);

export const finalOutputs = (list: any[]) => list.filter((e) => e.event_kind === "model_output" && e.stop_reason !== "tool_use");

/** The model calls the provider received (creating a provider config also lists its models with a GET). */
export const modelCalls = (provider: FakeProvider) => provider.requests.filter((r) => r.method === "POST");

/** 1, 2, …, count: the sequences of a dense timeline of `count` events. */
export const sequences = (count: number) => Array.from({ length: count }, (_, i) => i + 1);

/** Waits until the provider has received `count` model calls. */
export async function providerRequests(provider: FakeProvider, count: number) {
  return eventually(async () => modelCalls(provider).length, (n) => n >= count);
}

/** Model call `index` as JSON text, for checks on what the model was shown. */
export function requestText(provider: FakeProvider, index: number): string {
  return JSON.stringify(modelCalls(provider)[index]?.body ?? "");
}
