import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeToolCall } from "../../src/runtime/models/fake-provider/index.js";
import { agentProject, yamlConfig, type AgentProject } from "../support/agents.js";
import { createConfig, events, finalOutputs, launch, modelCalls, untilEvents } from "../support/agent-loop.js";
import { useFakeProvider } from "../support/fake-provider.js";
import { useTestServer } from "../support/server.js";
import { skillMd, skillZip, uploadSkill } from "../api/skills-fixtures.js";
import { startFakeMcpServer, type FakeMcpServer } from "../support/fake-mcp.js";

/**
 * The file tools over svc's stored files (list_files, read_file, search_files, write_file), driven the way
 * a model drives them: the fake provider asks for tool calls, the worker runs them, and the tests read the
 * results from the agent's timeline over HTTP. Artifacts come from inputs with media and from an
 * oversized tool result (the overflow rule).
 */

const server = useTestServer({}, { worker: true });
const provider = useFakeProvider();
let mcp: FakeMcpServer;
beforeAll(async () => {
  mcp = await startFakeMcpServer();
});
afterAll(() => mcp?.close());

const NO_MEMORY = "No memory store is attached to this agent (its config has no memory section)";
/** A 1×1 PNG: binary, with NUL bytes in its header. */
const PIXEL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

type Media = { media_type: string; data: string | Buffer; filename?: string };

const b64 = (data: string | Buffer) => Buffer.from(data).toString("base64");

/** An agent of a fresh project on `config` (the `tools:` etc. after the model), launched idle. */
async function idleAgent(project: AgentProject, rest = "tools:\n  list_files: {}\n  write_file: {}\n"): Promise<string> {
  return launch(server.api, project, await createConfig(server.api, project, yamlConfig(project, rest)));
}

/** Sends files as an input (the model answers it with text) and returns their artifact ids, in order. */
async function sendFiles(project: AgentProject, agentId: string, files: Media[]): Promise<string[]> {
  const before = finalOutputs(await events(server.api, project, agentId)).length;
  provider.script({ text: "Got the files." });
  const blocks = [{ type: "text", text: "files" }, ...files.map((f) => ({ type: "media", media_type: f.media_type, data: b64(f.data), ...(f.filename ? { filename: f.filename } : {}) }))];
  const reply = await server.api.post(`${project.base}/agents/${agentId}/inputs`, { content_blocks: blocks }, { token: project.token });
  expect(reply.status, reply.text).toBe(201);
  await untilEvents(server.api, project, agentId, (e) => finalOutputs(e).length === before + 1);
  return (reply.body.agent_input.content_blocks as Array<{ type: string; artifact_id?: string }>).filter((b) => b.type === "media_ref").map((b) => b.artifact_id!);
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

/** The value of a succeeded file tool result. */
function value(result: any): any {
  expect(result.outcome, JSON.stringify(result.content_blocks)).toBe("succeeded");
  expect(result.content_blocks).toHaveLength(1);
  return result.content_blocks[0].value;
}

/** The message of a failed file tool result. */
function failure(result: any): string {
  expect(result.outcome, JSON.stringify(result.content_blocks)).toBe("failed");
  return result.content_blocks[0].text as string;
}

const toolNames = (requestIndex: number): string[] => {
  const body = modelCalls(provider)[requestIndex]!.body as { tools?: Array<{ function: { name: string } }> };
  return (body.tools ?? []).map((t) => t.function.name).sort();
};

async function artifactDigest(project: AgentProject, agentId: string, artifactId: string): Promise<string> {
  const reply = await server.api.get(`${project.base}/agents/${agentId}/artifacts/${artifactId}`, { token: project.token });
  expect(reply.status).toBe(200);
  return reply.body.digest as string;
}

describe("the compile rule for read_file and search_files", () => {
  it("adds them to a config with enabled tools, leaves the source unchanged, and yields to explicit settings", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const withTools = yamlConfig(project, "tools:\n  ask_question: {}\n");
    const created = await server.api.post(`${project.base}/agent-configs`, { source: withTools, source_format: "yaml" }, { token: project.token });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ source: withTools, compiler_version: "svc-2" });
    provider.script({ text: "hi" });
    const first = await launch(server.api, project, created.body.id, "hello");
    await untilEvents(server.api, project, first, (e) => finalOutputs(e).length === 1);
    expect(toolNames(0)).toEqual(["ask_question", "read_file", "search_files"]);

    // enabled: false keeps read_file out; search_files keeps the permission the config gave it.
    const explicit = "tools:\n  ask_question: {}\n  read_file: {enabled: false}\n  search_files: {permission: {mode: always_deny}}\n";
    const agentId = await idleAgent(project, explicit);
    const [denied] = await callTools(project, agentId, [{ name: "search_files", input: { path: "/artifacts/x", args: ["-e", "x"] } }]);
    expect(denied.outcome).toBe("denied");
    expect(toolNames(1)).toEqual(["ask_question", "search_files"]);

    // No tools and no MCP servers: nothing is added.
    provider.script({ text: "plain" });
    const plain = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project)), "hello");
    await untilEvents(server.api, project, plain, (e) => finalOutputs(e).length === 1);
    expect(toolNames(3)).toEqual([]);

    // An MCP server alone is enough.
    provider.script({ text: "with mcp" });
    const withMcp = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project, `mcp:\n  docs:\n    url: ${mcp.url}\n`)), "hello");
    await untilEvents(server.api, project, withMcp, (e) => finalOutputs(e).length === 1);
    expect(toolNames(4)).toEqual(expect.arrayContaining(["mcp__docs__greet", "read_file", "search_files"]));
    expect(toolNames(4)).not.toContain("list_files");

    // Never past the 128 tools a model call may carry: 127 custom tools leave room for read_file only.
    const custom = Array.from({ length: 127 }, (_, i) => `  t${i}: {type: custom, description: tool ${i}, input_schema: {type: object}}`).join("\n");
    provider.script({ text: "full" });
    const full = await launch(server.api, project, await createConfig(server.api, project, yamlConfig(project, `tools:\n${custom}\n`)), "hello");
    await untilEvents(server.api, project, full, (e) => finalOutputs(e).length === 1);
    expect(toolNames(5)).toHaveLength(128);
    expect(toolNames(5)).toContain("read_file");
    expect(toolNames(5)).not.toContain("search_files");
  });

  it("lets an agent read and search the artifact an oversized skill result was saved as", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const auth = { token: project.token };
    const body = `${"A long instruction line.\n".repeat(2500)}The secret step: rotate the keys.\n${"Closing line.\n".repeat(500)}`;
    const skill = await uploadSkill(server.url, auth, project.orgId, { kind: "project", project_id: project.projectId }, skillZip("big", skillMd("big", "Use when big.", body)));
    // Attaching a skill enables the skill tool, which counts as an enabled tool for the rule.
    const agentId = await idleAgent(project, `skills:\n  - ${skill.id}\n`);
    const [loaded] = await callTools(project, agentId, [{ name: "skill", input: { name: "big" } }]);
    const [marker] = loaded.content_blocks;
    expect(marker.value).toMatchObject({ truncated: true, content_type: "text/markdown" });
    expect(toolNames(0)).toEqual(["read_file", "search_files", "skill"]);
    const path = marker.value.path as string;

    const [found] = await callTools(project, agentId, [{ name: "search_files", input: { path, args: ["-F", "-e", "secret step"] } }]);
    const search = value(found);
    expect(search.records).toHaveLength(1);
    const line = search.records[0].line_number as number;
    expect(search.records[0]).toEqual({ type: "match", path, line_number: line, text: "The secret step: rotate the keys.", column: 5 });
    const [read] = await callTools(project, agentId, [{ name: "read_file", input: { path, offset_line: line - 1, limit_lines: 3 } }]);
    expect(value(read)).toMatchObject({
      path,
      content: "A long instruction line.\nThe secret step: rotate the keys.\nClosing line.\n",
      content_type: "text/markdown",
      has_more: true,
      next_offset_line: line + 2,
      size_bytes: marker.value.size_bytes,
    });
  });
});

/** An idle agent with five artifacts; the ids come back in the order given. */
async function withArtifacts(project: AgentProject) {
  const agentId = await idleAgent(project);
  const ids = await sendFiles(project, agentId, [
    { media_type: "text/plain", data: "first notes\n", filename: "notes.txt" },
    { media_type: "text/markdown", data: "# Q1\n", filename: "reports/q1.md" },
    { media_type: "text/plain", data: "second notes\n", filename: "notes.txt" },
    { media_type: "image/png", data: Buffer.from(PIXEL_PNG, "base64") },
    { media_type: "text/csv", data: "a,b\n1,2\n", filename: "data_%.csv" },
  ]);
  return { agentId, ids, paths: ids.map((id) => `/artifacts/${id}`) };
}

describe("list_files", () => {
  it("lists the top level, the agent's artifacts by filename, exact ids, and says when it cut the list", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const { agentId, ids, paths } = await withArtifacts(project);
    const results = await callTools(project, agentId, [
      { name: "list_files", input: { pattern: "/*" } },
      { name: "list_files", input: { pattern: "/artifacts/*" } },
      { name: "list_files", input: { pattern: "/artifacts/*.txt" } },
      { name: "list_files", input: { pattern: "/artifacts/q?.md" } },
      { name: "list_files", input: { pattern: "/**/*.md" } },
      { name: "list_files", input: { pattern: paths[3]! } },
      { name: "list_files", input: { pattern: "/artifacts/*", limit: 2 } },
      { name: "list_files", input: { pattern: "/artifacts/data_%.csv" } },
      { name: "list_files", input: { pattern: "/artifacts/data_?.csv" } },
      { name: "list_files", input: { pattern: "/artifacts/Notes.txt" } },
      { name: "list_files", input: { pattern: "/artifacts" } },
    ]);
    const [top, all, txt, q, deep, exact, limited, literal, oneChar, caseSensitive, dir] = results.map(value);
    expect(top).toEqual({ pattern: "/*", entries: [{ path: "/artifacts", type: "directory" }], truncated: false });

    expect(all.truncated).toBe(false);
    const byPath = new Map(all.entries.map((e: any) => [e.path, e]));
    expect([...byPath.keys()].sort()).toEqual([...paths].sort());
    expect(byPath.get(paths[0]!)).toEqual({
      path: paths[0],
      type: "file",
      filename: "notes.txt",
      content_type: "text/plain",
      size_bytes: 12,
      digest: await artifactDigest(project, agentId, ids[0]!),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    // The unnamed picture is listed too, without a filename.
    expect(byPath.get(paths[3]!)).not.toHaveProperty("filename");

    // Duplicate filenames stay separate entries; a name with a slash matches by its last component.
    expect(txt.entries.map((e: any) => e.path).sort()).toEqual([paths[0], paths[2]].sort());
    expect(q.entries.map((e: any) => [e.path, e.filename])).toEqual([[paths[1], "reports/q1.md"]]);
    expect(deep.entries.map((e: any) => e.path)).toEqual([paths[1]]);
    expect(exact.entries).toEqual([expect.objectContaining({ path: paths[3], content_type: "image/png" })]);
    expect(limited.entries).toHaveLength(2);
    expect(limited).toMatchObject({ truncated: true, note: expect.stringContaining("narrow the pattern") });
    // % and _ are no wildcards of a pattern; ? is one character; names compare case-sensitively.
    expect(literal.entries.map((e: any) => e.path)).toEqual([paths[4]]);
    expect(oneChar.entries.map((e: any) => e.path)).toEqual([paths[4]]);
    expect(caseSensitive.entries).toEqual([]);
    expect(dir.entries).toEqual([{ path: "/artifacts", type: "directory" }]);
  });

  it("answers memory paths, bad patterns and bad limits with a failed result that says why", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const agentId = await idleAgent(project);
    const [memory, memoryDir, relative, root, dots, zero, tooMany, missing] = await callTools(project, agentId, [
      { name: "list_files", input: { pattern: "/memory/*" } },
      { name: "list_files", input: { pattern: "/memory" } },
      { name: "list_files", input: { pattern: "artifacts/*" } },
      { name: "list_files", input: { pattern: "/" } },
      { name: "list_files", input: { pattern: "/artifacts/../*" } },
      { name: "list_files", input: { pattern: "/*", limit: 0 } },
      { name: "list_files", input: { pattern: "/*", limit: 101 } },
      { name: "list_files", input: {} },
    ]);
    expect(failure(memory)).toContain(NO_MEMORY);
    expect(failure(memoryDir)).toContain(NO_MEMORY);
    expect(failure(relative)).toContain("absolute pattern");
    expect(failure(root)).toContain("use /* to list");
    expect(failure(dots)).toContain("no . or .. segments");
    expect(failure(zero)).toBe("Malformed input for list_files: /limit must be >= 1");
    expect(failure(tooMany)).toBe("Malformed input for list_files: /limit must be <= 100");
    expect(failure(missing)).toContain("must have required property 'pattern'");
  });
});

describe("read_file", () => {
  const lines = Array.from({ length: 300 }, (_, i) => `line ${String(i + 1).padStart(3, "0")}`);
  const wide = Array.from({ length: 100 }, (_, i) => `${String(i + 1).padStart(3, "0")} ${"w".repeat(45)}`);
  const long = `start${"é".repeat(3000)}end\nnext line\n`;
  const emoji = "a😀b€c\n";

  it("reads pages of lines within 4 KiB, a long line by characters, and says where to continue", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const agentId = await idleAgent(project);
    const [plainId, wideId, longId, emojiId] = await sendFiles(project, agentId, [
      { media_type: "text/plain", data: `${lines.join("\n")}\n`, filename: "lines.txt" },
      { media_type: "text/plain", data: `${wide.join("\n")}\n` },
      { media_type: "text/markdown", data: long },
      { media_type: "text/plain", data: emoji },
    ]);
    const [plain, wideP, longP, emojiP] = [plainId, wideId, longId, emojiId].map((id) => `/artifacts/${id}`);
    const results = await callTools(project, agentId, [
      { name: "read_file", input: { path: plain } },
      { name: "read_file", input: { path: plain, offset_line: 299, limit_lines: 5 } },
      { name: "read_file", input: { path: plain, offset_line: 301 } },
      { name: "read_file", input: { path: wideP, limit_lines: 200 } },
      { name: "read_file", input: { path: longP } },
      { name: "read_file", input: { path: emojiP, offset_char: 1, limit_chars: 3 } },
      { name: "read_file", input: { path: emojiP, limit_chars: 4096 } },
      { name: "read_file", input: { path: emojiP, offset_char: 7 } },
      { name: "read_file", input: { path: longP, limit_chars: 4096 } },
    ]);
    const [first, tail, past, cut, longFirst, middle, whole, beyond, wideChars] = results.map(value);
    expect(first).toEqual({
      path: plain,
      size_bytes: 300 * 9,
      content_type: "text/plain",
      digest: await artifactDigest(project, agentId, plainId!),
      offset_line: 1,
      content: `${lines.slice(0, 100).join("\n")}\n`,
      has_more: true,
      next_offset_line: 101,
    });
    expect(tail).toMatchObject({ offset_line: 299, content: "line 299\nline 300\n", has_more: false });
    expect(tail).not.toHaveProperty("next_offset_line");
    expect(past).toMatchObject({ offset_line: 301, content: "", has_more: false });
    // 50-byte lines: 81 fit in 4096 bytes.
    expect(cut).toMatchObject({ content: `${wide.slice(0, 81).join("\n")}\n`, has_more: true, next_offset_line: 82 });

    // A line longer than a page: its first chunk (whole characters within 4096 bytes) and a character offset.
    expect(Buffer.byteLength(longFirst.content)).toBeLessThanOrEqual(4096);
    expect(longFirst.content).toBe(`start${"é".repeat(2045)}`);
    expect(longFirst).toMatchObject({ content_type: "text/markdown", has_more: true, next_offset_char: 2050 });
    const [rest] = await callTools(project, agentId, [{ name: "read_file", input: { path: longP, offset_char: longFirst.next_offset_char } }]);
    expect(value(rest)).toMatchObject({ offset_char: 2050, content: "é".repeat(512), has_more: true, next_offset_char: 2562 });

    // Character mode counts code points: the emoji is one character.
    expect(middle).toEqual(expect.objectContaining({ offset_char: 1, content: "😀b€", has_more: true, next_offset_char: 4 }));
    expect(whole).toMatchObject({ offset_char: 0, content: emoji, has_more: false });
    expect(beyond).toMatchObject({ offset_char: 7, content: "", has_more: false });
    expect(Buffer.byteLength(wideChars.content)).toBeLessThanOrEqual(4096);
    expect(wideChars).toMatchObject({ content: `start${"é".repeat(2045)}`, next_offset_char: 2050 });
  });

  it("refuses mixed modes, binary and non-UTF-8 files, memory paths, bad paths and other agents' artifacts", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const { agentId, paths } = await withArtifacts(project);
    const other = await idleAgent(project);
    const [otherFile] = await sendFiles(project, other, [{ media_type: "text/plain", data: "not yours\n", filename: "notes.txt" }]);
    const [latin1] = await sendFiles(project, agentId, [{ media_type: "text/plain", data: Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]) }]);
    const results = await callTools(project, agentId, [
      { name: "read_file", input: { path: paths[0]!, offset_line: 1, limit_chars: 10 } },
      { name: "read_file", input: { path: paths[3]! } },
      { name: "read_file", input: { path: `/artifacts/${latin1}` } },
      { name: "read_file", input: { path: "/memory/notes/todo.md" } },
      { name: "read_file", input: { path: "/artifacts" } },
      { name: "read_file", input: { path: "/artifacts/notes.txt" } },
      { name: "read_file", input: { path: "/artifacts/*" } },
      { name: "read_file", input: { path: "/tmp/x" } },
      { name: "read_file", input: { path: `/artifacts/${otherFile}` } },
      { name: "read_file", input: { path: paths[0]!, limit_lines: 201 } },
      { name: "read_file", input: { path: paths[0]!, offset_char: -1 } },
      { name: "list_files", input: { pattern: `/artifacts/${otherFile}` } },
    ]);
    const messages = results.slice(0, 11).map(failure);
    expect(messages[0]).toContain("not both");
    expect(messages[1]).toBe(`${paths[3]} (image/png) is not a text file: it contains NUL bytes. read_file reads UTF-8 text only.`);
    expect(messages[2]).toContain("is not valid UTF-8");
    expect(messages[3]).toContain(NO_MEMORY);
    expect(messages[4]).toContain("/artifacts is a directory");
    expect(messages[5]).toContain("list_files with a pattern such as /artifacts/notes.txt");
    expect(messages[6]).toContain("not a pattern");
    expect(messages[7]).toContain("is not a stored file");
    // Another agent's artifact is not found, exactly like an id that names nothing.
    expect(messages[8]).toBe(`No artifact /artifacts/${otherFile} exists among this agent's artifacts; list_files /artifacts/* lists them.`);
    expect(messages[9]).toBe("Malformed input for read_file: /limit_lines must be <= 200");
    expect(messages[10]).toBe("Malformed input for read_file: /offset_char must be >= 0");
    expect(value(results[11]).entries).toEqual([]);
  });
});

describe("search_files", () => {
  const log = [
    "boot ok", // 1
    "Deploy started", // 2
    "step one", // 3
    "step two", // 4
    "redeploy skipped", // 5
    "deploy finished", // 6
    "DEPLOY", // 7
    "tail a", // 8
    "tail b", // 9
    "a.b literal", // 10
    "axb not literal", // 11
  ].join("\n") + "\n";

  it("returns match and context records for every option, within limit, with where to go on", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const agentId = await idleAgent(project);
    const [id] = await sendFiles(project, agentId, [{ media_type: "text/plain", data: log, filename: "deploy.log" }]);
    const path = `/artifacts/${id}`;
    const search = (args: string[], extra: Record<string, unknown> = {}): FakeToolCall => ({ name: "search_files", input: { path, args, ...extra } });
    const results = await callTools(project, agentId, [
      search(["-i", "-C", "1", "-e", "deploy"]),
      search(["deploy"]),
      search(["-iw", "deploy"]),
      search(["-x", "-e", "DEPLOY"]),
      search(["-v", "-i", "-e", "deploy", "-e", "step|tail|\\."]),
      search(["-F", "-e", "a.b"]),
      search(["-c", "-i", "deploy"]),
      search(["-l", "-e", "nothing here"]),
      search(["-l", "-e", "boot"]),
      search(["-U", "-e", "one\\nstep"]),
      search(["-i", "-e", "deploy"], { limit: 2 }),
      search(["-i", "-e", "deploy"], { limit: 2, offset_line: 6 }),
      search(["-A", "2", "-B0", "-C", "1", "-e", "finished"]),
      search(["-e", "tail", "-e", "boot"]),
    ]);
    const [ctx, plain, word, whole, inverted, literal, counted, none, some, multi, limited, further, after, several] = results.map(value);
    const m = (line: number, text: string, column: number) => ({ type: "match", path, line_number: line, text, column });
    const c = (line: number, text: string) => ({ type: "context", path, line_number: line, text });
    expect(ctx).toEqual({
      path,
      matches: 4,
      truncated: false,
      records: [c(1, "boot ok"), m(2, "Deploy started", 1), c(3, "step one"), c(4, "step two"), m(5, "redeploy skipped", 3), m(6, "deploy finished", 1), m(7, "DEPLOY", 1), c(8, "tail a")],
    });
    expect(plain.records).toEqual([m(5, "redeploy skipped", 3), m(6, "deploy finished", 1)]);
    expect(word.records).toEqual([m(2, "Deploy started", 1), m(6, "deploy finished", 1), m(7, "DEPLOY", 1)]);
    expect(whole.records).toEqual([m(7, "DEPLOY", 1)]);
    expect(inverted.records).toEqual([
      { type: "match", path, line_number: 1, text: "boot ok" },
      { type: "match", path, line_number: 11, text: "axb not literal" },
    ]);
    expect(literal.records).toEqual([m(10, "a.b literal", 1)]);
    expect(counted).toEqual({ counts: [{ path, count: 4 }], truncated: false });
    expect(none).toEqual({ paths: [], truncated: false });
    expect(some).toEqual({ paths: [path], truncated: false });
    expect(multi.records).toEqual([{ type: "match", path, line_number: 3, end_line_number: 4, text: "step one\nstep two", column: 6 }]);
    expect(limited).toMatchObject({ matches: 2, truncated: true, next_offset_line: 6 });
    expect(limited.records.map((r: any) => r.line_number)).toEqual([2, 5]);
    expect(further).toMatchObject({ matches: 2, truncated: false });
    expect(further.records.map((r: any) => r.line_number)).toEqual([6, 7]);
    // -A and -B win over -C, whatever the order.
    expect(after.records).toEqual([m(6, "deploy finished", 8), c(7, "DEPLOY"), c(8, "tail a")]);
    expect(several.records.map((r: any) => r.line_number)).toEqual([1, 8, 9]);
  });

  it("cuts long lines around the match and keeps a response within its byte budget", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const agentId = await idleAgent(project);
    const longLine = `${"x".repeat(1000)}NEEDLE${"y".repeat(1000)}`;
    const many = Array.from({ length: 100 }, () => `${"z".repeat(400)} hit ${"z".repeat(400)}`).join("\n");
    const [id, manyId] = await sendFiles(project, agentId, [
      { media_type: "text/plain", data: `short\n${longLine}\n` },
      { media_type: "text/plain", data: `${many}\n` },
    ]);
    const [long, budget] = await callTools(project, agentId, [
      { name: "search_files", input: { path: `/artifacts/${id}`, args: ["-e", "NEEDLE"] } },
      { name: "search_files", input: { path: `/artifacts/${manyId}`, args: ["-e", "hit"], limit: 100 } },
    ]);
    const [record] = value(long).records;
    expect(record).toEqual({ type: "match", path: `/artifacts/${id}`, line_number: 2, text: `${"x".repeat(60)}NEEDLE${"y".repeat(234)}`, column: 1001, cut: true });
    const cut = value(budget);
    expect(cut.truncated).toBe(true);
    expect(cut.matches).toBeLessThan(100);
    expect(cut.next_offset_line).toBe(cut.matches + 1);
    expect(Buffer.byteLength(JSON.stringify(cut.records))).toBeLessThanOrEqual(32 * 1024);
  });

  it("refuses unsupported options, file operands, oversized patterns, bad regexes, runaway patterns and other paths", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const agentId = await idleAgent(project);
    const [id, picture] = await sendFiles(project, agentId, [
      { media_type: "text/plain", data: `${"a".repeat(40)}!\n` },
      { media_type: "image/png", data: Buffer.from(PIXEL_PNG, "base64") },
    ]);
    const path = `/artifacts/${id}`;
    const search = (args: string[], at = path): FakeToolCall => ({ name: "search_files", input: { path: at, args } });
    const results = await callTools(project, agentId, [
      search(["--json", "-e", "a"]),
      search(["-q", "a"]),
      search(["-e", "a", "notes.txt"]),
      search(["a", "b"]),
      search(["-C", "6", "-e", "a"]),
      search(["-A"]),
      search(["-i"]),
      search(["-e", "x".repeat(600), "-e", "y".repeat(600)]),
      search(["-e", "(unclosed"]),
      search(["-l", "-c", "a"]),
      search(["-U", "-v", "a"]),
      search(["-e", "(a+)+$"]),
      search(["-e", "a"], "/memory/notes/**/*.md"),
      search(["-e", "a"], "/artifacts/*"),
      search(["-e", "a"], `/artifacts/${picture}`),
      { name: "search_files", input: { path, args: [] } },
      { name: "search_files", input: { path, args: ["a"], limit: 101 } },
    ]);
    const messages = results.map(failure);
    expect(messages[0]).toBe("Unsupported option --json: search_files takes -e PATTERN, -F, -i, -w, -x, -v, -U, -l, -c, -A N, -B N, -C N.");
    expect(messages[1]).toContain("Unsupported option -q");
    expect(messages[2]).toContain('File operands are not accepted ("notes.txt")');
    expect(messages[3]).toContain('File operands are not accepted ("b")');
    expect(messages[4]).toBe('-C takes a number of context lines from 0 to 5; got "6".');
    expect(messages[5]).toBe("-A needs a value (0 to 5).");
    expect(messages[6]).toContain("No pattern");
    expect(messages[7]).toBe("The patterns take 1200 UTF-8 bytes together; at most 1024 are allowed.");
    expect(messages[8]).toContain('Invalid regular expression "(unclosed"');
    expect(messages[9]).toContain("not both");
    expect(messages[10]).toContain("-v cannot be combined with -U");
    // Exponential backtracking is stopped by the time limit, and the model is told what to change.
    expect(messages[11]).toContain("The search was stopped after 2 s. Nested repetition such as (a+)+");
    expect(messages[12]).toContain(NO_MEMORY);
    expect(messages[13]).toContain("not a pattern");
    expect(messages[14]).toContain("it contains NUL bytes. search_files reads UTF-8 text only.");
    expect(messages[15]).toBe("Malformed input for search_files: /args must NOT have fewer than 1 items");
    expect(messages[16]).toBe("Malformed input for search_files: /limit must be <= 100");
  });

  it("runs a runaway pattern off the thread that answers HTTP: the API answers while the search is still running", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const agentId = await idleAgent(project);
    const [id] = await sendFiles(project, agentId, [{ media_type: "text/plain", data: `${"a".repeat(40)}!\n` }]);
    const done = callTools(project, agentId, [{ name: "search_files", input: { path: `/artifacts/${id}`, args: ["-e", "(a+)+$"] } }]);
    const searchState = async () => {
      const calls = await server.api.get(`${project.base}/agents/${agentId}/tool-calls`, { token: project.token });
      return (calls.body.data as Array<{ name: string; state: string }>).find((call) => call.name === "search_files")?.state;
    };
    // The call is marked running before its scan starts; each request after that is answered during
    // the scan only if the scan does not hold the thread that answers (it runs for 2 s before it is stopped).
    for (let polls = 0; (await searchState()) !== "running"; polls++) expect(polls).toBeLessThan(500);
    const during = [];
    for (let i = 0; i < 5; i++) during.push(await searchState());
    expect(during).toEqual(Array(5).fill("running"));
    const [result] = await done;
    expect(failure(result)).toContain("The search was stopped after 2 s.");
    // The stopped thread is replaced: the next search runs.
    const [after] = await callTools(project, agentId, [{ name: "search_files", input: { path: `/artifacts/${id}`, args: ["-c", "-e", "a!"] } }]);
    expect(value(after)).toMatchObject({ counts: [{ path: `/artifacts/${id}`, count: 1 }] });
  });
});

describe("write_file", () => {
  it("fails for an agent without memory stores, and for artifacts, which cannot be written", async () => {
    const project = await agentProject(server.api, provider.baseUrl);
    const agentId = await idleAgent(project);
    const [memory, artifact, both, appendScript, elsewhere] = await callTools(project, agentId, [
      { name: "write_file", input: { path: "/memory/notes/todo.md", content: "- ship it\n" } },
      { name: "write_file", input: { path: "/artifacts", content: "x" } },
      { name: "write_file", input: { path: "/memory/notes/todo.md", content: "x", script: "s/a/b/" } },
      { name: "write_file", input: { path: "/memory/notes/todo.md", script: "s/a/b/", append: true } },
      { name: "write_file", input: { path: "todo.md", content: "x" } },
    ]);
    expect(failure(memory)).toBe(`No memory store is attached to this agent (its config has no memory section), so nothing exists under /memory. The files you can reach are your artifacts, under /artifacts (list_files /artifacts/* lists them).`);
    expect(failure(artifact)).toContain("Artifacts cannot be written or changed");
    expect(failure(both)).toBe("Give exactly one of content or script.");
    expect(failure(appendScript)).toBe("append applies to content only, not to a script.");
    expect(failure(elsewhere)).toContain("write_file takes an exact /memory/<store>/<file> destination");
  });
});
