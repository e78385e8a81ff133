import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { startAgentWorker } from "../../src/runtime/index.js";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, eventually, launch } from "../support/agent-loop.js";
import { freePort } from "../support/process.js";
import { useTestServer } from "../support/server.js";
import { SseStream, type SseFrame } from "../support/sse.js";

/*
 * A model provider svc cannot reach: the failed attempt shows at once in the agent's live timeline (an
 * `error` preview, spec "Stream frames") and in the log, each saying which attempt failed and when svc
 * tries again; a provider that never answers is given up on after SVC_MODEL_RESPONSE_TIMEOUT_MS.
 */
const server = useTestServer({ SVC_MODEL_RESPONSE_TIMEOUT_MS: "1000" });

interface LogLine {
  level: "info" | "warn" | "error";
  fields: Record<string, unknown>;
  message: string;
}

/** A TCP server that takes connections and requests and never answers them. */
let silent: { server: Server; sockets: Set<Socket>; url: string; connections: number };
beforeAll(async () => {
  const sockets = new Set<Socket>();
  const tcp = createServer((socket) => {
    silent.connections += 1;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => tcp.listen(0, "127.0.0.1", resolve));
  silent = { server: tcp, sockets, url: `http://127.0.0.1:${(tcp.address() as { port: number }).port}/v1`, connections: 0 };
});
afterAll(async () => {
  for (const socket of silent.sockets) socket.destroy();
  await new Promise((resolve) => silent.server.close(resolve));
});

/**
 * Launches an agent on a provider at `providerUrl`, follows its stream with previews, and only then starts a
 * worker (previews are not replayed), logging into the returned lines.
 */
async function launchOn(providerUrl: string) {
  const project = await agentProject(server.api, providerUrl);
  const agentId = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)), "hello");
  const stream = await SseStream.open(`${server.url}${project.base}/agents/${agentId}/events/stream?stream_deltas=true`, { token: project.token });
  onTestFinished(() => stream.close());
  const log: LogLine[] = [];
  const line = (level: LogLine["level"]) => (fields: unknown, message: string) => void log.push({ level, fields: fields as Record<string, unknown>, message });
  const worker = startAgentWorker({ db: server.db, services: server.app.services, config: server.config, log: { info: line("info"), warn: line("warn"), error: line("error") } });
  onTestFinished(() => worker.stop());
  return { agentId, stream, log };
}

/** The next `error` preview of the stream, skipping the saved events and other previews before it. */
async function nextErrorPreview(stream: SseStream): Promise<SseFrame> {
  for (;;) {
    const [frame] = await stream.frames(1, 60_000);
    if (frame!.event === "model_output_delta" && frame!.json.event.kind === "error") return frame!;
  }
}

describe("a model provider svc cannot reach", () => {
  it("that refuses connections: each failed attempt is an error in the live timeline and the log, with the retry plan", async () => {
    const closedPort = await freePort();
    const { agentId, stream, log } = await launchOn(`http://127.0.0.1:${closedPort}/v1`);

    const first = await nextErrorPreview(stream);
    expect(first.json.event.error.message).toMatch(/ECONNREFUSED|refused/);
    expect(first.json.event.error.message).toMatch(/\(attempt 1 of 8; svc tries again in \d+\.\d s\)$/);
    expect(first.json.model_call_context_id).toMatch(/^mcc_/);
    // The plan holds: the next attempt is made, and says so the same way.
    const second = await nextErrorPreview(stream);
    expect(second.json.event.error.message).toMatch(/\(attempt 2 of 8; svc tries again in \d+\.\d s\)$/);
    expect(second.json.model_call_context_id).not.toBe(first.json.model_call_context_id);

    const retried = log.filter((l) => l.message.startsWith("model step failed; retrying") && l.fields["agent_id"] === agentId);
    expect(retried.length).toBeGreaterThanOrEqual(1);
    expect(retried[0]).toMatchObject({ level: "warn", fields: { agent_id: agentId, turn_id: first.json.turn_id, attempt: 1, failure: "network" } });
    expect(retried[0]!.message).toContain("attempt 1 of 8; svc tries again in");
    expect(log.filter((l) => l.message === "model step started" && l.fields["agent_id"] === agentId).length).toBeGreaterThanOrEqual(2);
  });

  it("that never answers: the attempt ends at SVC_MODEL_RESPONSE_TIMEOUT_MS as a retryable timeout, shown the same way", async () => {
    const { agentId, stream, log } = await launchOn(silent.url);

    const first = await nextErrorPreview(stream);
    const retried = await eventually(async () => log.find((l) => l.message.startsWith("model step failed; retrying") && l.fields["agent_id"] === agentId), (line) => line !== undefined);
    expect(retried).toMatchObject({ level: "warn", fields: { agent_id: agentId, failure: "timeout", attempt: 1 } });
    const retryInSeconds = ((retried!.fields["retry_in_ms"] as number) / 1000).toFixed(1);
    expect(first.json.event.error.message).toBe(
      `the provider did not start answering within 1000 ms (SVC_MODEL_RESPONSE_TIMEOUT_MS) (attempt 1 of 8; svc tries again in ${retryInSeconds} s)`,
    );
    expect(silent.connections, "svc reached the provider that never answers").toBeGreaterThan(0);
  });
});
