import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, eventually, events, finalOutputs, send } from "../support/agent-loop.js";
import { connectMachine, untilConnection, useDaemons, type Daemon } from "../support/daemon.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";

// Every test here starts svc or svcd processes from their TypeScript sources: 3–6 s apiece on a busy CI machine.
vi.setConfig({ testTimeout: 120_000 });

/*
 * upload_file and download_file end to end with a real `svcd`: a file a command made goes up as an artifact
 * that read_file then reads; an artifact sent through the API comes down to a file that `cat` prints; and
 * what is refused, on the machine (missing, empty, oversized and directory sources, a destination without
 * its directory) and in svc (memory paths, expected_digest, another agent's artifact).
 */

const server = useTestServer({}, { worker: true });
const provider = useFakeProvider();

const { dir, daemon: svcd } = useDaemons(server);

interface Session {
  project: AgentProject;
  agentId: string;
  work: string;
  daemon: Daemon;
}

type Call = { name: string; input: Record<string, unknown> };

const toolResults = (list: any[]) => list.filter((e) => e.event_kind === "tool_result");
const value = (result: any) => result.content_blocks[0].value;
const text = (result: any) => JSON.stringify(result.content_blocks);
const sha256 = (bytes: Buffer | string) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

/** A machine with its daemon, and an agent on it whose first turn makes `first`; its result. */
async function start(name: string, first: Call): Promise<{ session: Session; result: any }> {
  const project = await agentProject(server.api, provider.baseUrl);
  const machine = await connectMachine(server.api, project.token, project.orgId, project.projectId, name);
  const work = dir("svcd-work-");
  const daemon = svcd(machine.daemonToken, dir("svcd-home-"));
  await untilConnection(server.api, project.token, project.orgId, machine.machineId, "online");
  const configId = await createConfig(server.api, project, yamlConfig(project, `machine_sources:\n  - machine_name: ${name}\n    cwd: ${work}\n`));
  provider.script({ toolCalls: [first] }, { text: "ok" });
  const launched = await server.api.post(`${project.base}/agents`, { config: configId, message: "go" }, { token: project.token });
  expect(launched.status, launched.text).toBe(201);
  const session = { project, agentId: launched.body.agent.id as string, work, daemon };
  const list = await eventually(() => events(server.api, project, session.agentId), (e) => finalOutputs(e).length === 1);
  return { session, result: toolResults(list)[0] };
}

/** One more turn whose model makes `call`; its tool result. */
async function turn(session: Session, call: Call): Promise<any> {
  const before = await events(server.api, session.project, session.agentId);
  const finals = finalOutputs(before).length;
  provider.script({ toolCalls: [call] }, { text: "ok" });
  await send(server.api, session.project, session.agentId, "next");
  const list = await eventually(() => events(server.api, session.project, session.agentId), (e) => finalOutputs(e).length === finals + 1);
  return toolResults(list)[toolResults(before).length];
}

/** Sends the agent a text file as inline media (a turn that ends in text); the artifact's id. */
async function sendFile(session: Session, filename: string, content: string): Promise<string> {
  const finals = finalOutputs(await events(server.api, session.project, session.agentId)).length;
  provider.script({ text: "received" });
  const media = { type: "media", media_type: "text/plain", filename, data: Buffer.from(content).toString("base64") };
  const sent = await server.api.post(`${session.project.base}/agents/${session.agentId}/inputs`, { content_blocks: [{ type: "text", text: "here" }, media] }, { token: session.project.token });
  expect(sent.status, sent.text).toBe(201);
  const list = await eventually(() => events(server.api, session.project, session.agentId), (e) => finalOutputs(e).length === finals + 1);
  const refs = list.flatMap((e) => (e.content_blocks ?? []) as any[]).filter((b) => b.type === "media_ref");
  return refs[refs.length - 1].artifact_id as string;
}

describe("upload_file", () => {
  it("copies a file a command made into an artifact, which appears in the conversation and read_file reads", async () => {
    const { session, result } = await start("uploader", { name: "run_command", input: { command: "mkdir -p out && seq 1 5 > out/numbers.txt" } });
    expect(result.outcome, text(result)).toBe("succeeded");
    const uploaded = await turn(session, { name: "upload_file", input: { path: "/artifacts", source: "out/numbers.txt" } });
    expect(uploaded.outcome, text(uploaded)).toBe("succeeded");
    const content = "1\n2\n3\n4\n5\n";
    const artifactId = value(uploaded).media_ref.artifact_id as string;
    expect(value(uploaded)).toMatchObject({
      path: `/artifacts/${artifactId}`,
      digest: sha256(content),
      media_ref: { type: "media_ref", artifact_id: expect.stringMatching(/^art_[a-z2-7]{26}$/) },
      size_bytes: content.length,
      content_type: "text/plain",
      filename: "numbers.txt",
      source: join(session.work, "out/numbers.txt"),
      process_id: expect.stringMatching(/^prc_/),
    });
    expect(uploaded.content_blocks[1]).toEqual({ type: "media_ref", artifact_id: artifactId, exclude_from_model_context: true });

    const bytes = await server.api.get(`${session.project.base}/agents/${session.agentId}/artifacts/${artifactId}/content`, { token: session.project.token });
    expect(bytes.status).toBe(200);
    expect(bytes.text).toBe(content);
    const read = await turn(session, { name: "read_file", input: { path: value(uploaded).path } });
    expect(value(read)).toMatchObject({ content, digest: sha256(content), has_more: false });
  }, 120_000);

  it("refuses missing, empty, oversized and directory sources on the machine, and follows a symlink to a file", async () => {
    const { session } = await start("picky", { name: "run_command", input: { command: "true" } });
    writeFileSync(join(session.work, "empty.txt"), "");
    writeFileSync(join(session.work, "big.bin"), Buffer.alloc(10 * 1024 * 1024 + 1, 1));
    mkdirSync(join(session.work, "folder"));
    writeFileSync(join(session.work, "target.md"), "# linked\n");
    symlinkSync(join(session.work, "target.md"), join(session.work, "link.md"));
    const cases: Array<[string, string]> = [
      ["missing.txt", "does not exist"],
      ["empty.txt", "must be non-empty"],
      ["big.bin", "at most 10485760 bytes"],
      ["folder", "is a directory"],
      ["~user/x", "~user paths are not supported"],
    ];
    for (const [source, expected] of cases) {
      const answer = await turn(session, { name: "upload_file", input: { path: "/artifacts", source } });
      expect(answer.outcome, source).toBe("failed");
      expect(text(answer), source).toContain(expected);
    }
    const linked = await turn(session, { name: "upload_file", input: { path: "/artifacts", source: "link.md" } });
    expect(linked.outcome, text(linked)).toBe("succeeded");
    expect(value(linked)).toMatchObject({ content_type: "text/markdown", size_bytes: 9, filename: "link.md" });
  }, 180_000);

  it("answers memory paths, other paths and expected_digest in svc, without the machine", async () => {
    const { session, result } = await start("nomemory", { name: "upload_file", input: { path: "/memory/notes/a.md", source: "a.md" } });
    expect(result.outcome).toBe("failed");
    expect(text(result)).toContain("No memory store is attached");
    const elsewhere = await turn(session, { name: "upload_file", input: { path: "/artifacts/art_aaaaaaaaaaaaaaaaaaaaaaaaaa", source: "a.md" } });
    expect(text(elsewhere)).toContain('pass path \\"/artifacts\\"');
    const digest = await turn(session, { name: "upload_file", input: { path: "/artifacts", source: "a.md", expected_digest: "sha256:00" } });
    expect(digest.outcome).toBe("failed");
    expect(text(digest)).toContain("not supported for artifacts");
  }, 90_000);
});

describe("download_file", () => {
  it("writes an artifact sent through the API to a machine file, replacing one atomically; cat prints it", async () => {
    const { session } = await start("downloader", { name: "run_command", input: { command: "mkdir sub && echo old > sub/copy.txt && chmod 640 sub/copy.txt" } });
    const content = "line one\nline two é\n";
    const artifactId = await sendFile(session, "notes.txt", content);
    const downloaded = await turn(session, { name: "download_file", input: { path: `/artifacts/${artifactId}`, destination: "sub/copy.txt" } });
    expect(downloaded.outcome, text(downloaded)).toBe("succeeded");
    expect(value(downloaded)).toMatchObject({
      state: "exited",
      done: true,
      path: `/artifacts/${artifactId}`,
      destination: join(session.work, "sub/copy.txt"),
      digest: sha256(content),
      size_bytes: Buffer.byteLength(content),
    });
    // The replaced file kept its permission bits.
    expect(statSync(join(session.work, "sub/copy.txt")).mode & 0o777).toBe(0o640);
    const printed = await turn(session, { name: "run_command", input: { command: "cat sub/copy.txt; ls -a sub" } });
    expect(value(printed).output).toBe(`${content}.\n..\ncopy.txt\n`);
    expect(readFileSync(join(session.work, "sub/copy.txt"), "utf8")).toBe(content);
  }, 120_000);

  it("refuses a destination whose directory is missing, a directory, and another agent's artifact", async () => {
    const { session } = await start("careful", { name: "run_command", input: { command: "mkdir existing" } });
    const mine = await sendFile(session, "mine.txt", "mine\n");
    const noParent = await turn(session, { name: "download_file", input: { path: `/artifacts/${mine}`, destination: "nowhere/file.txt" } });
    expect(noParent.outcome).toBe("failed");
    expect(text(noParent)).toContain("does not exist; create it first");
    const onDir = await turn(session, { name: "download_file", input: { path: `/artifacts/${mine}`, destination: "existing" } });
    expect(onDir.outcome).toBe("failed");
    expect(text(onDir)).toContain("is a directory");

    const other = await start("stranger", { name: "run_command", input: { command: "true" } });
    const theirs = await sendFile(other.session, "theirs.txt", "theirs\n");
    const foreign = await turn(session, { name: "download_file", input: { path: `/artifacts/${theirs}`, destination: "stolen.txt" } });
    expect(foreign.outcome).toBe("failed");
    expect(text(foreign)).toContain("No artifact");
    expect(() => statSync(join(session.work, "stolen.txt"))).toThrow();
  }, 150_000);
});
