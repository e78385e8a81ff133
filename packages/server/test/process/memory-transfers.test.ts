import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
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
 * upload_file and download_file between a machine and /memory (issue 31) with a real `svcd`: a file a
 * command made goes up as a memory file's next version attributed to the agent's call, a stale
 * expected_digest is refused, an empty file is a valid memory file, and a memory file comes down to the
 * machine as the version current when the call was made.
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
async function start(name: string, first: Call, store = "team"): Promise<{ session: Session; result: any; storeId: string }> {
  const project = await agentProject(server.api, provider.baseUrl);
  const created = await server.api.post(`${project.base}/memory-stores`, { name: store }, { token: project.token });
  expect(created.status, created.text).toBe(201);
  const machine = await connectMachine(server.api, project.token, project.orgId, project.projectId, name);
  const work = dir("svcd-work-");
  const daemon = svcd(machine.daemonToken, dir("svcd-home-"));
  await untilConnection(server.api, project.token, project.orgId, machine.machineId, "online");
  const configId = await createConfig(server.api, project, yamlConfig(project, `machine_sources:\n  - machine_name: ${name}\n    cwd: ${work}\nmemory:\n  - store: ${store}\n`));
  provider.script({ toolCalls: [first] }, { text: "ok" });
  const launched = await server.api.post(`${project.base}/agents`, { config: configId, message: "go" }, { token: project.token });
  expect(launched.status, launched.text).toBe(201);
  const session = { project, agentId: launched.body.agent.id as string, work, daemon };
  const list = await eventually(() => events(server.api, project, session.agentId), (e) => finalOutputs(e).length === 1);
  return { session, result: toolResults(list)[0], storeId: created.body.id as string };
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

describe("upload_file and download_file with /memory", () => {
  it("uploads a machine file as a memory version, refuses a stale digest, allows an empty file, and downloads a version", async () => {
    const { session, result, storeId } = await start("memo", { name: "run_command", input: { command: "printf 'first\\n' > notes.md && : > empty.md" } });
    expect(result.outcome, text(result)).toBe("succeeded");
    const auth = { token: session.project.token };

    const uploaded = await turn(session, { name: "upload_file", input: { path: "/memory/team/notes.md", source: "notes.md" } });
    expect(uploaded.outcome, text(uploaded)).toBe("succeeded");
    expect(value(uploaded)).toMatchObject({ path: "/memory/team/notes.md", digest: sha256("first\n"), version: 1, size_bytes: 6, source: join(session.work, "notes.md") });
    const list = await server.api.get(`${session.project.base}/memory-stores/${storeId}/memories`, auth);
    const memory = list.body.data.find((m: any) => m.path === "notes.md");
    const versions = await server.api.get(`${session.project.base}/memory-stores/${storeId}/memories/${memory.id}/versions`, auth);
    expect(versions.body.data).toEqual([expect.objectContaining({ version: 1, written_by: { kind: "agent", id: session.agentId }, tool_call_id: uploaded.tool_call_id })]);

    const stale = await turn(session, { name: "upload_file", input: { path: "/memory/team/notes.md", source: "notes.md", expected_digest: sha256("other") } });
    expect(stale.outcome).toBe("failed");
    expect(text(stale)).toContain("digest");
    const empty = await turn(session, { name: "upload_file", input: { path: "/memory/team/empty.md", source: "empty.md" } });
    expect(empty.outcome, text(empty)).toBe("succeeded");
    expect(value(empty)).toMatchObject({ path: "/memory/team/empty.md", size_bytes: 0, version: 1 });

    const put = await server.api.put(`${session.project.base}/memory-stores/${storeId}/memories`, { path: "notes.md", content: "second\n" }, auth);
    expect(put.status, put.text).toBe(200);
    const downloaded = await turn(session, { name: "download_file", input: { path: "/memory/team/notes.md", destination: "copy.md" } });
    expect(downloaded.outcome, text(downloaded)).toBe("succeeded");
    expect(value(downloaded)).toMatchObject({ path: "/memory/team/notes.md", digest: sha256("second\n"), destination: join(session.work, "copy.md") });
    expect(readFileSync(join(session.work, "copy.md"), "utf8")).toBe("second\n");

    const unknown = await turn(session, { name: "download_file", input: { path: "/memory/elsewhere/x.md", destination: "x.md" } });
    expect(unknown.outcome).toBe("failed");
    expect(text(unknown)).toContain("is attached");
  }, 240_000);
});
