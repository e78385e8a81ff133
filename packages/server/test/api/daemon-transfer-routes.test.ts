import { createHash, randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { agentProject, yamlConfig } from "../support/agents.js";
import { createConfig, eventually, events, send } from "../support/agent-loop.js";
import { connectMachine } from "../support/daemon.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";

/*
 * The daemon transfer routes (uploadDaemonArtifact, downloadDaemonArtifact) with the daemon protocol driven
 * by hand, so a transfer stays running for as long as the test needs: who may call them (the machine of the
 * call's process, while it runs), their limits (empty, 10 MiB, once per call), and what a report of the
 * transfer's end makes of the call.
 */

const server = useTestServer({}, { worker: true });
const provider = useFakeProvider();
const sockets: WebSocket[] = [];
afterAll(() => sockets.forEach((socket) => socket.terminate()));

/** A hand-driven daemon: a registered runtime and its socket, with the frames svc sent. */
async function fakeDaemon(token: string) {
  const instance = randomUUID();
  const registered = await server.api.post("/api/v1/daemon/runtimes", { daemon_instance_id: instance, daemon_version: "test", processes: [] }, { token });
  expect(registered.status, registered.text).toBe(201);
  const socket = new WebSocket(`${server.url.replace(/^http/, "ws")}/api/v1/daemon/runtimes/${registered.body.runtime.id}/socket`, { headers: { authorization: `Bearer ${token}` } });
  sockets.push(socket);
  const frames: any[] = [];
  socket.on("message", (data) => frames.push(JSON.parse(String(data))));
  await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
  return {
    send: (type: string, payload: object) => socket.send(JSON.stringify({ type, payload })),
    /** A heartbeat makes svc look for work (and for processes to stop). */
    heartbeat: () => socket.send(JSON.stringify({ type: "heartbeat", payload: { daemon_instance_id: instance } })),
    /** The next frame of `type` matching `where`, waited for (bounded). */
    next: async (type: string, where: (payload: any) => boolean = () => true) => {
      const found = await eventually(async () => frames.find((f) => f.type === type && where(f.payload)), (f) => f !== undefined);
      frames.splice(frames.indexOf(found), 1);
      return found.payload;
    },
  };
}

const upload = (callId: string, token: string, body: Buffer | string, filename = "report.txt", type = "application/octet-stream") =>
  fetch(`${server.url}/api/v1/daemon/tool-calls/${callId}/artifact?filename=${encodeURIComponent(filename)}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": type },
    body,
  });
const download = (callId: string, artifactId: string, token: string) =>
  fetch(`${server.url}/api/v1/daemon/tool-calls/${callId}/artifacts/${artifactId}/content`, { headers: { authorization: `Bearer ${token}` } });

async function status(response: Promise<Response>): Promise<[number, string]> {
  const answer = await response;
  const body = (await answer.json()) as { code: string };
  return [answer.status, body.code];
}

function finished(processId: string, stdout: string) {
  const now = new Date().toISOString();
  return {
    report_id: randomUUID(),
    event: {
      type: "process_finished",
      process_id: processId,
      state: "exited",
      exit_code: 0,
      exit_signal: null,
      reason: "",
      started_at: now,
      ended_at: now,
      result: { stdout, stderr: "", stdout_bytes: Buffer.byteLength(stdout), stderr_bytes: 0, truncated: false },
    },
  };
}

const sha256 = (bytes: Buffer | string) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
const fakeId = (prefix: string) => `${prefix}_${"a".repeat(26)}`;

describe("the daemon transfer routes", () => {
  it("take one upload from the call's machine while it runs, and serve only the named artifact to a download", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const mine = await connectMachine(server.api, project.token, project.orgId, project.projectId, "mine");
    const other = await connectMachine(server.api, project.token, project.orgId, project.projectId, "other");
    const daemon = await fakeDaemon(mine.daemonToken);
    await fakeDaemon(other.daemonToken);
    const configId = await createConfig(server.api, project, yamlConfig(project, "machine_sources:\n  - machine_name: mine\n    cwd: /srv\n"));
    provider.script({ toolCalls: [{ name: "upload_file", input: { path: "/artifacts", source: "out/report.txt" } }] }, { text: "uploaded" });
    const launched = await server.api.post(`${project.base}/agents`, { config: configId, message: "go" }, { token: project.token });
    expect(launched.status, launched.text).toBe(201);
    const agentId = launched.body.agent.id as string;

    const offer = await daemon.next("process_offer");
    expect(offer).toMatchObject({ cwd: "/srv", transfer: { kind: "upload", source: "out/report.txt", timeout_seconds: 30, max_bytes: 10 * 1024 * 1024 } });
    const callId = offer.transfer.tool_call_id as string;
    // Not running yet: the daemon has not accepted it.
    expect(await status(upload(callId, mine.daemonToken, "early"))).toEqual([403, "forbidden"]);
    daemon.send("process_accept", { process_id: offer.process_id });
    expect(await daemon.next("process_accept_ack")).toMatchObject({ accepted: true });

    expect(await status(upload(callId, other.daemonToken, "x"))).toEqual([404, "not_found"]);
    expect(await status(upload(fakeId("tcl"), mine.daemonToken, "x"))).toEqual([404, "not_found"]);
    expect(await status(upload(callId, project.token, "x"))).toEqual([403, "forbidden"]);
    expect(await status(upload(callId, mine.daemonToken, ""))).toEqual([400, "invalid_request"]);
    expect(await status(upload(callId, mine.daemonToken, Buffer.alloc(10 * 1024 * 1024 + 1)))).toEqual([413, "request_too_large"]);
    expect(await status(upload(callId, mine.daemonToken, "{}", "a.json", "application/json"))).toEqual([415, "unsupported_media_type"]);
    // An upload call is not a download call.
    expect(await status(download(callId, fakeId("art"), mine.daemonToken))).toEqual([404, "not_found"]);

    const content = "quarterly numbers\n";
    const created = await upload(callId, mine.daemonToken, content);
    expect(created.status).toBe(201);
    const artifactId = ((await created.json()) as { artifact_id: string }).artifact_id;
    expect(artifactId).toMatch(/^art_[a-z2-7]{26}$/);
    expect(await status(upload(callId, mine.daemonToken, content))).toEqual([409, "conflict"]);

    const report = finished(offer.process_id, `${JSON.stringify({ source: "/srv/out/report.txt", artifact_id: artifactId, size_bytes: content.length })}\n`);
    daemon.send("report", report);
    expect(await daemon.next("report_ack")).toEqual({ report_id: report.report_id, ack_status: "committed" });
    const list = await eventually(() => events(server.api, project, agentId), (e) => e.some((x) => x.event_kind === "tool_result"));
    const result = list.find((e) => e.event_kind === "tool_result");
    expect(result.outcome).toBe("succeeded");
    expect(result.content_blocks[0].value).toMatchObject({ path: `/artifacts/${artifactId}`, digest: sha256(content), size_bytes: content.length, content_type: "text/plain", filename: "report.txt", source: "/srv/out/report.txt" });
    const stored = await server.api.get(`${project.base}/agents/${agentId}/artifacts/${artifactId}/content`, { token: project.token });
    expect(stored.text).toBe(content);
    // The call's process has ended: its route takes nothing more.
    expect(await status(upload(callId, mine.daemonToken, "late"))).toEqual([403, "forbidden"]);

    // A download of that artifact: the route serves exactly it, to this machine, while the process runs.
    await eventually(() => events(server.api, project, agentId), (e) => e.some((x) => x.event_kind === "model_output" && x.stop_reason !== "tool_use"));
    provider.script({ toolCalls: [{ name: "download_file", input: { path: `/artifacts/${artifactId}`, destination: "copy.txt" } }] }, { text: "done" });
    await send(server.api, project, agentId, "download it");
    const down = await daemon.next("process_offer");
    expect(down.transfer).toMatchObject({ kind: "download", artifact_id: artifactId, destination: "copy.txt", digest: sha256(content), size_bytes: content.length });
    const downCall = down.transfer.tool_call_id as string;
    daemon.send("process_accept", { process_id: down.process_id });
    await daemon.next("process_accept_ack");
    expect(await status(download(downCall, artifactId, other.daemonToken))).toEqual([404, "not_found"]);
    expect(await status(download(downCall, fakeId("art"), mine.daemonToken))).toEqual([404, "not_found"]);
    expect(await status(upload(downCall, mine.daemonToken, "x"))).toEqual([404, "not_found"]);
    const bytes = await download(downCall, artifactId, mine.daemonToken);
    expect(bytes.status).toBe(200);
    expect(bytes.headers.get("content-type")).toBe("text/plain");
    expect(await bytes.text()).toBe(content);

    // Still running after its initial wait: the call returns its process_id, and the transfer may go on fetching.
    const started = { report_id: randomUUID(), event: { type: "process_started", process_id: down.process_id, started_at: new Date().toISOString(), observed_at: new Date().toISOString(), result: { stdout: "", stderr: "", stdout_cursor: 0, stderr_cursor: 0, truncated: false } } };
    daemon.send("report", started);
    expect(await daemon.next("report_ack")).toMatchObject({ ack_status: "committed" });
    const early = await eventually(() => events(server.api, project, agentId), (e) => e.filter((x) => x.event_kind === "tool_result").length === 2);
    expect(early.filter((x) => x.event_kind === "tool_result")[1].content_blocks[0].value).toMatchObject({
      process_id: down.process_id,
      state: "running",
      done: false,
      path: `/artifacts/${artifactId}`,
      destination: "copy.txt",
    });
    expect((await download(downCall, artifactId, mine.daemonToken)).status).toBe(200);
    // Ended: the route refuses the finished call.
    const end = finished(down.process_id, "");
    daemon.send("report", end);
    expect(await daemon.next("report_ack")).toMatchObject({ report_id: end.report_id, ack_status: "committed" });
    expect(await status(download(downCall, artifactId, mine.daemonToken))).toEqual([403, "forbidden"]);
    // A revoked (stale) token is refused before anything is looked at.
    const revoked = await server.api.post(`/api/v1/orgs/${project.orgId}/machines/${mine.machineId}/daemon-tokens/${mine.tokenId}/revoke`, undefined, { token: project.token });
    expect(revoked.status).toBe(200);
    expect(await status(download(downCall, artifactId, mine.daemonToken))).toEqual([401, "unauthorized"]);
  }, 120_000);

  it("refuse the running transfer of a canceled call", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const machine = await connectMachine(server.api, project.token, project.orgId, project.projectId, "box");
    const daemon = await fakeDaemon(machine.daemonToken);
    const configId = await createConfig(server.api, project, yamlConfig(project, "machine_sources:\n  - machine_name: box\n"));
    provider.script({ toolCalls: [{ name: "upload_file", input: { path: "/artifacts", source: "/tmp/a.txt" } }] }, { text: "stopped" });
    const launched = await server.api.post(`${project.base}/agents`, { config: configId, message: "go" }, { token: project.token });
    const offer = await daemon.next("process_offer");
    daemon.send("process_accept", { process_id: offer.process_id });
    await daemon.next("process_accept_ack");
    expect((await server.api.post(`${project.base}/agents/${launched.body.agent.id}/cancel`, {}, { token: project.token })).status).toBe(200);
    expect(await status(upload(offer.transfer.tool_call_id, machine.daemonToken, "late"))).toEqual([403, "forbidden"]);
    // And the daemon is told to stop the process, at its next heartbeat.
    daemon.heartbeat();
    expect(await daemon.next("process_terminate")).toEqual({ process_id: offer.process_id });
  }, 60_000);
});
