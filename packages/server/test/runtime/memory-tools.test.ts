import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { FakeToolCall } from "../../src/runtime/models/fake-provider/index.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, events, finalOutputs, launch, modelCalls, requestText, untilEvents } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";

/**
 * Memory in agents (issue 31, item 2): the config's `memory` section, and the file tools on
 * /memory/<store>/<path> driven the way a model drives them. The fake provider asks for tool calls, the
 * worker runs them, and the tests read results from the timelines and the stores' versions over HTTP.
 */

const server = useTestServer({}, { worker: true });
const provider = useFakeProvider();

const digestOf = (content: string) => `sha256:${createHash("sha256").update(content, "utf8").digest("hex")}`;

async function createStore(project: AgentProject, body: Record<string, unknown>): Promise<{ id: string; name: string }> {
  const reply = await server.api.post(`${project.base}/memory-stores`, body, { token: project.token });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

async function putMemory(project: AgentProject, storeId: string, body: Record<string, unknown>) {
  const reply = await server.api.put(`${project.base}/memory-stores/${storeId}/memories`, body, { token: project.token });
  expect([200, 201], reply.text).toContain(reply.status);
  return reply.body;
}

async function memoryAt(project: AgentProject, storeId: string, path: string) {
  const list = await server.api.get(`${project.base}/memory-stores/${storeId}/memories?path_prefix=${encodeURIComponent(path)}`, { token: project.token });
  expect(list.status, list.text).toBe(200);
  const found = list.body.data.find((m: any) => m.path === path);
  if (!found) return undefined;
  return (await server.api.get(`${project.base}/memory-stores/${storeId}/memories/${found.id}`, { token: project.token })).body;
}

async function versionsOf(project: AgentProject, storeId: string, memoryId: string): Promise<any[]> {
  const reply = await server.api.get(`${project.base}/memory-stores/${storeId}/memories/${memoryId}/versions`, { token: project.token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.data;
}

async function idleAgent(project: AgentProject, memory: string, tools = ""): Promise<string> {
  return launch(server.api, project, await createConfig(server.api, project, yamlConfig(project, `${tools}memory:\n${memory}`)));
}

/** Has the model call `calls` in one output, then returns each call's tool_result event, in the calls' order. */
async function callTools(project: AgentProject, agentId: string, calls: FakeToolCall[]): Promise<any[]> {
  const before = finalOutputs(await events(server.api, project, agentId)).length;
  provider.script({ toolCalls: calls }, { text: "done" });
  const reply = await server.api.post(`${project.base}/agents/${agentId}/inputs`, { content_blocks: [{ type: "text", text: "go" }] }, { token: project.token });
  expect(reply.status, reply.text).toBe(201);
  const list = await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === before + 1);
  const output = list.filter((e) => e.event_kind === "model_output" && e.stop_reason === "tool_use").pop();
  const ids = output.content_blocks.filter((b: any) => b.type === "tool_call").map((b: any) => b.tool_call_id);
  return ids.map((id: string) => list.find((e) => e.event_kind === "tool_result" && e.tool_call_id === id));
}

function value(result: any): any {
  expect(result.outcome, JSON.stringify(result.content_blocks)).toBe("succeeded");
  return result.content_blocks[0].value;
}

function failure(result: any): string {
  expect(result.outcome, JSON.stringify(result.content_blocks)).toBe("failed");
  return result.content_blocks[0].text as string;
}

const toolNames = (requestIndex: number): string[] => {
  const body = modelCalls(provider)[requestIndex]!.body as { tools?: Array<{ function: { name: string } }> };
  return (body.tools ?? []).map((t) => t.function.name).sort();
};

describe("the memory section of a config", () => {
  it("reports an unknown store, a duplicate and a bad access at their line and column", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    await createStore(project, { name: "notes" });
    const source = yamlConfig(project, "memory:\n  - store: notes\n  - store: missing\n  - {store: notes, access: read_only}\n  - {store: other, access: write}\n  - {store: notes2, mode: x}\n");
    const reply = await server.api.post(`${project.base}/agent-configs`, { source, source_format: "yaml" }, { token: project.token });
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body.code).toBe("validation_failed");
    const issues = reply.body.issues as Array<{ path: string; message: string; line?: number; column?: number }>;
    const at = (path: string) => issues.find((issue) => issue.path === path);
    expect(at("/memory/2/store")).toMatchObject({ message: expect.stringContaining("listed twice"), line: 9 });
    expect(at("/memory/3/access")).toMatchObject({ message: expect.stringContaining("read_write, read_only"), line: 10 });
    expect(at("/memory/4/mode")).toMatchObject({ message: expect.stringContaining("unknown key"), line: 11 });
    expect(at("/memory/1/store")).toMatchObject({ message: 'no memory store named "missing" exists in this project', line: 8 });
    // An unknown store alone, with its column.
    const second = await server.api.post(
      `${project.base}/agent-configs`,
      { source: yamlConfig(project, "memory:\n  - store: notes\n  - store: missing\n"), source_format: "yaml" },
      { token: project.token },
    );
    expect(second.status).toBe(400);
    expect(second.body.issues).toEqual([
      expect.objectContaining({ path: "/memory/1/store", message: 'no memory store named "missing" exists in this project', line: 8, column: 12 }),
    ]);
    const notAList = await server.api.post(`${project.base}/agent-configs`, { source: yamlConfig(project, "memory: notes\n"), source_format: "yaml" }, { token: project.token });
    expect(notAList.body.issues[0]).toMatchObject({ path: "/memory" });
  });

  it("gives the agent the file tools and one note per attached store in its instruction", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    await createStore(project, { name: "team", description: "Decisions the team made, one file per topic." });
    await createStore(project, { name: "facts", description: "Reference facts." });
    provider.script({ text: "hello" });
    const configId = await createConfig(server.api, project, yamlConfig(project, "memory:\n  - store: team\n  - {store: facts, access: read_only}\n"));
    const agentId = await launch(server.api, project, configId, "hi");
    await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === 1);
    expect(toolNames(0)).toEqual(["list_files", "read_file", "search_files", "write_file"]);
    const sent = requestText(provider, 0);
    expect(sent).toContain("/memory/team/ (read-write): Decisions the team made, one file per topic.");
    expect(sent).toContain("/memory/facts/ (read-only): Reference facts.");

    // Only read_only stores: no write_file.
    provider.script({ text: "hello" });
    const reader = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project, "memory:\n  - {store: facts, access: read_only}\n")), "hi");
    await untilEvents(server.api, project, reader, (e) => finalOutputs(e).length === 1);
    expect(toolNames(1)).toEqual(["list_files", "read_file", "search_files"]);
  });
});

describe("the file tools on /memory", () => {
  it("lets agent B read, list and search what agent A wrote, attributed to A's tool call", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const team = await createStore(project, { name: "team", description: "Shared notes" });
    const writer = await idleAgent(project, "  - store: team\n");
    const [written, appended] = await callTools(project, writer, [
      { name: "write_file", input: { path: "/memory/team/notes/plan.md", content: "# Plan\nShip the memory tools.\n" } },
      { name: "write_file", input: { path: "/memory/team/log.txt", content: "one\n", append: true } },
    ]);
    const plan = value(written);
    expect(plan).toEqual({ path: "/memory/team/notes/plan.md", digest: digestOf("# Plan\nShip the memory tools.\n"), size_bytes: 30, version: 1, created: true, changed: true });
    expect(value(appended)).toMatchObject({ path: "/memory/team/log.txt", version: 1, created: true });

    const memory = await memoryAt(project, team.id, "notes/plan.md");
    expect(memory.content).toBe("# Plan\nShip the memory tools.\n");
    const [version] = await versionsOf(project, team.id, memory.id);
    expect(version).toMatchObject({ version: 1, written_by: { kind: "agent", id: writer }, agent_id: writer, tool_call_id: written.tool_call_id });

    // write_file named by the config itself (read_only stores alone do not bring it), to see the refusal.
    const reader = await idleAgent(project, "  - {store: team, access: read_only}\n", "tools:\n  write_file: {}\n");
    const [top, stores, files, read, chars, found, refused] = await callTools(project, reader, [
      { name: "list_files", input: { pattern: "/*" } },
      { name: "list_files", input: { pattern: "/memory/*" } },
      { name: "list_files", input: { pattern: "/memory/team/**" } },
      { name: "read_file", input: { path: "/memory/team/notes/plan.md", offset_line: 2, limit_lines: 1 } },
      { name: "read_file", input: { path: "/memory/team/notes/plan.md", offset_char: 2, limit_chars: 4 } },
      { name: "search_files", input: { path: "/memory/team/**/*.md", args: ["-i", "-e", "ship"] } },
      { name: "write_file", input: { path: "/memory/team/notes/plan.md", content: "mine now" } },
    ]);
    expect(value(top).entries.map((e: any) => e.path)).toEqual(["/artifacts", "/memory"]);
    expect(value(stores).entries).toEqual([expect.objectContaining({ path: "/memory/team", type: "directory", description: "Shared notes", access: "read_only", file_count: 2 })]);
    // ** also matches no segment at all, so the store's own directory is listed first.
    expect(value(files).entries.map((e: any) => [e.path, e.type])).toEqual([
      ["/memory/team", "directory"],
      ["/memory/team/log.txt", "file"],
      ["/memory/team/notes", "directory"],
      ["/memory/team/notes/plan.md", "file"],
    ]);
    expect(value(read)).toMatchObject({ path: "/memory/team/notes/plan.md", content: "Ship the memory tools.\n", has_more: false, digest: plan.digest, size_bytes: 30 });
    expect(value(chars)).toMatchObject({ content: "Plan", has_more: true, next_offset_char: 6 });
    expect(value(found).records).toEqual([expect.objectContaining({ type: "match", path: "/memory/team/notes/plan.md", line_number: 2, text: "Ship the memory tools." })]);
    expect(failure(refused)).toContain("attached to you read_only");

    // A store the config does not attach does not exist for the agent.
    const [other] = await callTools(project, reader, [{ name: "read_file", input: { path: "/memory/elsewhere/x.md" } }]);
    expect(failure(other)).toContain('No memory store "elsewhere" is attached');
  });

  it("appends, runs sed scripts, and refuses a stale expected_digest and a store that is not writable", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const store = await createStore(project, { name: "ops" });
    const agentId = await idleAgent(project, "  - store: ops\n");
    await putMemory(project, store.id, { path: "runbook.md", content: "restart foo\ncheck foo\n" });
    const [appended, scripted, stale, missingScript] = await callTools(project, agentId, [
      { name: "write_file", input: { path: "/memory/ops/runbook.md", content: "page bob\n", append: true, expected_digest: digestOf("restart foo\ncheck foo\n") } },
      { name: "write_file", input: { path: "/memory/ops/other.md", script: "s/foo/bar/g" } },
      { name: "write_file", input: { path: "/memory/ops/runbook.md", content: "x", expected_digest: digestOf("not it") } },
      { name: "write_file", input: { path: "/memory/ops/runbook.md", content: "x", script: "p" } },
    ]);
    expect(value(appended)).toMatchObject({ version: 2, digest: digestOf("restart foo\ncheck foo\npage bob\n") });
    expect(failure(scripted)).toContain("A script transforms an existing file");
    // One batch's calls are not ordered among themselves: the stale write may run before or after the append.
    expect([digestOf("restart foo\ncheck foo\n"), digestOf("restart foo\ncheck foo\npage bob\n")].map((d) => `its digest is now ${d}`)).toContainEqual(
      expect.stringMatching(new RegExp(`^${failure(stale).match(/its digest is now sha256:[0-9a-f]+/)?.[0] ?? "no digest named"}$`)),
    );
    expect(failure(missingScript)).toBe("Give exactly one of content or script.");

    const [sed] = await callTools(project, agentId, [{ name: "write_file", input: { path: "/memory/ops/runbook.md", script: "s/(restart|check) foo/\\1 bar/g\n/bob/d" } }]);
    const sedText = sed.content_blocks[0].text ?? "";
    if (sed.outcome === "failed" && sedText.includes("cannot run sed scripts safely")) {
      // A host without bubblewrap refuses scripts clearly; nothing is written.
      expect((await memoryAt(project, store.id, "runbook.md")).version).toBe(2);
    } else {
      expect(value(sed)).toMatchObject({ version: 3, digest: digestOf("restart bar\ncheck bar\n") });
      const [escape] = await callTools(project, agentId, [{ name: "write_file", input: { path: "/memory/ops/runbook.md", script: "w /tmp/escaped" } }]);
      expect(failure(escape)).toContain("The script was not applied");
      expect((await memoryAt(project, store.id, "runbook.md")).content).toBe("restart bar\ncheck bar\n");
    }

    expect((await server.api.patch(`${project.base}/memory-stores/${store.id}`, { writable: false }, { token: project.token })).status).toBe(200);
    const [locked] = await callTools(project, agentId, [{ name: "write_file", input: { path: "/memory/ops/new.md", content: "x" } }]);
    expect(failure(locked)).toContain('memory store "ops" is not writable');
  });

  it("keeps concurrent writers apart: a stale digest conflicts, writes without one become consecutive versions", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const store = await createStore(project, { name: "shared" });
    const first = await putMemory(project, store.id, { path: "counter.txt", content: "0" });
    const a = await idleAgent(project, "  - store: shared\n");
    const b = await idleAgent(project, "  - store: shared\n");

    // Calls of one output run at once: both pinned to the same digest, exactly one wins.
    const pinned = await callTools(project, a, [
      { name: "write_file", input: { path: "/memory/shared/counter.txt", content: "1", expected_digest: first.digest } },
      { name: "write_file", input: { path: "/memory/shared/counter.txt", content: "2", expected_digest: first.digest } },
    ]);
    expect(pinned.map((r) => r.outcome).sort()).toEqual(["failed", "succeeded"]);
    expect(failure(pinned.find((r) => r.outcome === "failed"))).toContain("Conflict");

    // Appends without a digest, at once from one agent and from two: nothing is lost.
    const appends = await callTools(project, a, ["a", "b", "c", "d"].map((piece) => ({ name: "write_file", input: { path: "/memory/shared/log.txt", content: piece, append: true } })));
    expect(appends.every((r) => r.outcome === "succeeded")).toBe(true);
    const [fromB] = await callTools(project, b, [{ name: "write_file", input: { path: "/memory/shared/log.txt", content: "e", append: true } }]);
    expect(value(fromB).version).toBe(5);
    const log = await memoryAt(project, store.id, "log.txt");
    expect([...log.content].sort().join("")).toBe("abcde");
    const versions = await versionsOf(project, store.id, log.id);
    expect(versions.map((v) => v.version)).toEqual([5, 4, 3, 2, 1]);
    expect(new Set(versions.map((v) => v.agent_id))).toEqual(new Set([a, b]));

    // Two agents replacing one file without a digest: two consecutive versions.
    await Promise.all([
      callTools(project, a, [{ name: "write_file", input: { path: "/memory/shared/counter.txt", content: "from a" } }]),
      callTools(project, b, [{ name: "write_file", input: { path: "/memory/shared/counter.txt", content: "from b" } }]),
    ]).catch(() => undefined);
    const counter = await memoryAt(project, store.id, "counter.txt");
    const counterVersions = await versionsOf(project, store.id, counter.id);
    expect(counterVersions.filter((v) => v.written_by.kind === "agent")).toHaveLength(3);
  });
});

describe("deleting a memory store", () => {
  it("is refused with 409 while an active agent's or a profile's current config attaches it", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const auth = { token: project.token };
    const store = await createStore(project, { name: "kept" });
    const path = `${project.base}/memory-stores/${store.id}`;
    const withMemory = await createConfig(server.api, project, yamlConfig(project, "memory:\n  - store: kept\n"));
    const without = await createConfig(server.api, project, yamlConfig(project));
    const agentId = await launch(server.api, project, withMemory);

    const refused = await server.api.delete(path, auth);
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ code: "conflict", error: expect.stringContaining(`the current config of agent ${agentId}`) });

    expect((await server.api.post(`${project.base}/agents/${agentId}/archive`, {}, auth)).status).toBe(200);
    const profile = await server.api.post(`${project.base}/agent-profiles`, { name: "Researcher", config: withMemory }, auth);
    expect(profile.status, profile.text).toBe(201);
    const byProfile = await server.api.delete(path, auth);
    expect(byProfile.status).toBe(409);
    expect(byProfile.body.error).toContain('agent profile "Researcher"');

    const moved = await server.api.post(`${project.base}/agent-profiles/${profile.body.id}/config`, { config: without, expected_current_config_id: withMemory }, auth);
    expect(moved.status, moved.text).toBe(200);
    expect((await server.api.delete(path, auth)).status).toBe(204);
    expect((await server.api.get(path, auth)).status).toBe(404);
  });
});
