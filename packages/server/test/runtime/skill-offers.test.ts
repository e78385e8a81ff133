import { createHash, randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, eventually, finalOutputs, launch, untilEvents } from "../support/agent-loop.js";
import { connectMachine } from "../support/daemon.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";
import { readTarGz, skillZip, uploadSkill } from "../api/skills-fixtures.js";

/*
 * The skill tool's protocol with a daemon played by the test over the real runtime socket: the
 * `skill_offer`, the archive route's token rules (bound to the machine, the skill and the revision; 410
 * once expired; 404 once the skill is gone), the `skill_report`s that complete the call, and the deadline
 * for a daemon that never answers.
 */

const server = useTestServer(
  { SVC_SKILL_DOWNLOAD_TOKEN_SECONDS: "8", SVC_SKILL_INSTALL_TIMEOUT_SECONDS: "2", SVC_MAINTENANCE_INTERVAL_MS: "200" },
  { worker: true },
);
const provider = useFakeProvider();

const sockets: WebSocket[] = [];
afterAll(() => sockets.forEach((s) => s.terminate()));

interface Frame {
  type: string;
  payload: any;
}

/** A registered runtime for the machine's token and its socket, keeping every frame svc sends. */
async function fakeDaemon(token: string) {
  const registered = await server.api.post("/api/v1/daemon/runtimes", { daemon_instance_id: randomUUID(), daemon_version: "test", processes: [] }, { token });
  expect(registered.status, registered.text).toBe(201);
  const url = `${server.url.replace(/^http/, "ws")}/api/v1/daemon/runtimes/${registered.body.runtime.id}/socket`;
  const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
  sockets.push(socket);
  const frames: Frame[] = [];
  socket.on("message", (data) => frames.push(JSON.parse(String(data)) as Frame));
  await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
  return {
    frames,
    send: (type: string, payload: object) => socket.send(JSON.stringify({ type, payload })),
    sendText: (text: string) => socket.send(text),
    offer: () => eventually(async () => frames.find((f) => f.type === "skill_offer"), (f) => f !== undefined).then((f) => f!.payload),
  };
}

const archiveUrl = (offer: any, changes: Record<string, string> = {}) => {
  const query = new URLSearchParams({ revision_id: offer.revision_id, expires_at: String(offer.download_expires_at), download_token: offer.download_token, ...changes });
  return `${server.url}/api/v1/daemon/skills/${offer.skill_id}/archive?${query}`;
};

const download = (url: string, token: string) => fetch(url, { headers: { authorization: `Bearer ${token}` } });

async function scenario(name: string) {
  const project = await agentProject(server.api, provider.baseUrl);
  const skill = await uploadSkill(server.url, { token: project.token }, project.orgId, { kind: "project", project_id: project.projectId }, skillZip(name));
  const machine = await connectMachine(server.api, project.token, project.orgId, project.projectId, `${name}-box`);
  const daemon = await fakeDaemon(machine.daemonToken);
  const source = yamlConfig(project, `skills:\n  - ${skill.id}\nmachine_sources:\n  - machine_name: ${name}-box\n`);
  provider.script({ toolCalls: [{ name: "skill", input: { name } }] }, { text: "Done." });
  const agentId = await launch(server.api, project, await createConfig(server.api, project, source), "go");
  return { project, skill, machine, daemon, agentId, offer: await daemon.offer() };
}

async function result(project: AgentProject, agentId: string) {
  const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
  const found = list.find((e) => e.event_kind === "tool_result");
  return { result: found, installs: found.content_blocks.find((b: any) => b.type === "structured_data").value.installations };
}

describe("skill offers and the archive route", () => {
  it("offers a token that downloads the archive for its machine only, until it expires", async () => {
    const { project, skill, machine, offer } = await scenario("offered");
    expect(offer).toEqual({
      request_id: expect.stringMatching(/^ski_[a-z2-7]{26}$/),
      skill_id: skill.id,
      revision_id: skill.revision_id,
      skill_name: "offered",
      download_token: expect.stringMatching(/^[0-9a-f]{64}$/),
      download_expires_at: expect.any(Number),
      digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    const ok = await download(archiveUrl(offer), machine.daemonToken);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toBe("application/octet-stream");
    const bytes = Buffer.from(await ok.arrayBuffer());
    expect(`sha256:${createHash("sha256").update(bytes).digest("hex")}`).toBe(offer.digest);
    // Not the uploaded zip: the .tar.gz svc wrote from the files it listed.
    expect((await readTarGz(bytes)).map((entry) => entry.name)).toEqual(skill.files.map((file: { path: string }) => `offered/${file.path}`));

    // Another machine of the same org, another revision, another expiry, another token: all 403.
    const other = await connectMachine(server.api, project.token, project.orgId, project.projectId, "offered-other");
    const refused = [
      await download(archiveUrl(offer), other.daemonToken),
      await download(archiveUrl(offer, { revision_id: `skr_${"a".repeat(26)}` }), machine.daemonToken),
      await download(archiveUrl(offer, { expires_at: String(offer.download_expires_at + 60) }), machine.daemonToken),
      await download(archiveUrl(offer, { download_token: "0".repeat(64) }), machine.daemonToken),
    ];
    for (const reply of refused) {
      expect(reply.status).toBe(403);
      expect(await reply.json()).toEqual({ code: "forbidden", error: expect.stringContaining("not issued to this machine") });
    }
    // A person's token is not a daemon's; a malformed token is a bad request.
    expect((await download(archiveUrl(offer), project.token)).status).toBe(403);
    const malformed = await download(archiveUrl(offer, { download_token: "abc" }), machine.daemonToken);
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { code: string }).code).toBe("invalid_request");

    const expired = await eventually(() => download(archiveUrl(offer), machine.daemonToken), (reply) => reply.status !== 200);
    expect(expired.status).toBe(410);
    expect(await expired.json()).toEqual({ code: "gone", error: expect.stringContaining("expired") });
  }, 60_000);

  it("completes the call with each report; a report after the call ended changes nothing", async () => {
    const { project, machine, daemon, agentId, offer } = await scenario("reported");
    daemon.send("skill_report", { request_id: offer.request_id, skill_id: offer.skill_id, state: "failed", error: "disk full" });
    const { result: done, installs } = await result(project, agentId);
    expect(done.outcome).toBe("succeeded");
    expect(installs).toEqual([{ machine_id: machine.machineId, machine_name: "reported-box", state: "failed", error: "disk full" }]);
    expect(done.content_blocks[0].text).toContain("- reported-box");
    daemon.send("skill_report", { request_id: offer.request_id, skill_id: offer.skill_id, state: "ready", path: "/elsewhere" });
    // A frame svc does not know is answered with an error frame, and the socket goes on.
    daemon.send("skill_report", { request_id: offer.request_id, state: "installed" });
    await eventually(async () => daemon.frames.filter((f) => f.type === "error").length, (n) => n === 1);
    // So is a frame nested deeper than any request body may be (docs/api.md): refused before it is parsed.
    daemon.sendText(`{"type":"skill_report","payload":{"deep":${"[".repeat(100_000)}${"]".repeat(100_000)}}}`);
    await eventually(async () => daemon.frames.filter((f) => f.type === "error").length, (n) => n === 2);
    const again = await result(project, agentId);
    expect(again.installs).toEqual(installs);
  }, 60_000);

  it("ends an install the daemon never reports as timeout, and the archive of a deleted skill is gone", async () => {
    const { project, skill, machine, agentId, offer } = await scenario("silent");
    const { result: done, installs } = await result(project, agentId);
    expect(done.outcome).toBe("succeeded");
    expect(installs).toEqual([{ machine_id: machine.machineId, machine_name: "silent-box", state: "timeout", error: expect.stringContaining("did not report") }]);

    expect((await server.api.post(`${project.base}/agents/${agentId}/archive`, undefined, { token: project.token })).status).toBe(200);
    expect((await server.api.delete(`/api/v1/orgs/${project.orgId}/skills/${skill.id}`, { token: project.token })).status).toBe(204);
    const gone = await download(archiveUrl(offer), machine.daemonToken);
    // The token is still valid (8 s); the revision it names is not there any more.
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { code: string }).code).toBe("not_found");
  }, 60_000);
});
