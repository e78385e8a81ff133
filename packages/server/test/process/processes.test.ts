import { readdirSync, readFileSync, writeFileSync } from "node:fs";
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
 * Processes that outlive their run_command call, end to end with a real `svcd`: the early return after
 * wait_ms, then read_process, write_process, stop_process and list_processes (each a process action the
 * daemon applies), pty mode, output cursors and retention, a daemon killed mid-action, and a machine that
 * stays away. Each step is one turn: the test scripts the model's next tool call from the last result.
 */

const server = useTestServer({ SVC_MACHINE_GRACE_SECONDS: "1", SVC_MAINTENANCE_INTERVAL_MS: "200" }, { worker: true });
const provider = useFakeProvider();

const { dir, daemon } = useDaemons(server);

interface Session {
  project: AgentProject;
  agentId: string;
  home: string;
  work: string;
  machine: { machineId: string; daemonToken: string };
  daemon: Daemon;
}

type Call = { name: string; input: Record<string, unknown> };

const toolResults = (list: any[]) => list.filter((e) => e.event_kind === "tool_result");

/** A machine with its daemon, and an agent on it whose first turn makes `first`; its result. */
async function start(name: string, first: Call): Promise<{ session: Session; result: any }> {
  const project = await agentProject(server.api, provider.baseUrl);
  const machine = await connectMachine(server.api, project.token, project.orgId, project.projectId, name);
  const home = dir("svcd-home-");
  const work = dir("svcd-work-");
  const running = daemon(machine.daemonToken, home);
  await untilConnection(server.api, project.token, project.orgId, machine.machineId, "online");
  const configId = await createConfig(server.api, project, yamlConfig(project, `machine_sources:\n  - machine_name: ${name}\n    cwd: ${work}\n`));
  provider.script({ toolCalls: [first] }, { text: "ok" });
  const launched = await server.api.post(`${project.base}/agents`, { config: configId, message: "go" }, { token: project.token });
  expect(launched.status, launched.text).toBe(201);
  const session = { project, agentId: launched.body.agent.id as string, home, work, machine, daemon: running };
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

const value = (result: any) => result.content_blocks[0].value;

/** Reads from `cursor` (each read waiting for more) until the process has ended; the output after the cursor. */
async function readToEnd(session: Session, processId: string, cursor: number): Promise<{ output: string; last: any }> {
  let output = "";
  for (let i = 0; i < 8; i++) {
    const last = value(await turn(session, { name: "read_process", input: { process_id: processId, cursor, wait_ms: 5000 } }));
    output += last.output;
    cursor = last.cursor;
    if (last.done) return { output, last };
  }
  throw new Error(`${processId} did not end; read so far: ${output}`);
}
const text = (result: any) => JSON.stringify(result.content_blocks);

describe("run_command's early return and read_process", () => {
  it("returns running with the output so far after wait_ms; reads continue from the cursor until the exit", async () => {
    // It waits for its input, so it is surely running when the wait ends; how much it printed by then may vary.
    const { session, result } = await start("early", { name: "run_command", input: { command: "echo one; read x; echo two $x", wait_ms: 1000 } });
    expect(result.outcome, text(result)).toBe("succeeded");
    const early = value(result);
    expect(early).toMatchObject({ state: "running", done: false, exit_code: null, truncated: false });
    expect("one\n".startsWith(early.output)).toBe(true);
    expect(early.cursor).toBe(Buffer.byteLength(early.output));
    const processId = early.process_id as string;
    expect(processId).toMatch(/^prc_[a-z2-7]{26}$/);

    const listed = await turn(session, { name: "list_processes", input: {} });
    expect(value(listed)).toEqual({
      processes: [expect.objectContaining({ process_id: processId, state: "running", command: "echo one; read x; echo two $x", cwd: session.work, io_mode: "pipe" })],
      has_more: false,
    });
    await turn(session, { name: "write_process", input: { process_id: processId, data: "2\n" } });
    const { output, last } = await readToEnd(session, processId, early.cursor);
    expect(early.output + output).toBe("one\ntwo 2\n");
    expect(last).toMatchObject({ state: "exited", done: true, exit_code: 0, cursor: 10 });

    // The process's end changed only the process: its run_command call kept its one result.
    await eventually(async () => value(await turn(session, { name: "list_processes", input: {} })).processes.length, (n) => n === 0);
    const calls = toolResults(await events(server.api, session.project, session.agentId)).filter((e) => e.tool_call_id === result.tool_call_id);
    expect(calls).toHaveLength(1);
  }, 120_000);

  it("a process that is not the agent's reads as one that does not exist", async () => {
    const { session, result } = await start("mine", { name: "run_command", input: { command: "sleep 20", wait_ms: 100 } });
    const other = await start("theirs", { name: "run_command", input: { command: "true" } });
    const foreign = await turn(other.session, { name: "read_process", input: { process_id: value(result).process_id } });
    const missing = await turn(other.session, { name: "stop_process", input: { process_id: `prc_${"a".repeat(26)}`, mode: "terminate" } });
    for (const answer of [foreign, missing]) {
      expect(answer.outcome).toBe("failed");
      expect(text(answer)).toContain("of yours exists");
    }
    await turn(session, { name: "stop_process", input: { process_id: value(result).process_id, mode: "terminate" } });
  }, 90_000);

  it("keeps the last 1 MiB per stream: an older cursor reads from the window with truncated; cursors never split a character", async () => {
    const { session, result } = await start("chatty", { name: "run_command", input: { command: "head -c 1200000 /dev/zero | tr '\\0' a; printf '\\303\\251'" } });
    expect(value(result)).toMatchObject({ state: "exited", cursor: 1_200_002 });
    const processId = value(result).process_id;
    // The process has ended: the daemon still has its output.
    const old = await turn(session, { name: "read_process", input: { process_id: processId, cursor: 0, max_bytes: 10 } });
    expect(value(old)).toMatchObject({ output: "a".repeat(10), cursor: 1_200_002 - 1024 * 1024 + 10, truncated: true, done: true });
    const split = await turn(session, { name: "read_process", input: { process_id: processId, cursor: 1_199_999, max_bytes: 2 } });
    expect(value(split)).toMatchObject({ output: "a", cursor: 1_200_000, truncated: false });
    const whole = await turn(session, { name: "read_process", input: { process_id: processId, cursor: 1_200_000, max_bytes: 2 } });
    expect(value(whole)).toMatchObject({ output: "é", cursor: 1_200_002 });
  }, 90_000);
});

describe("write_process and stop_process", () => {
  it("writes to cat's stdin, then closes it: cat echoes the input and exits", async () => {
    const { session, result } = await start("feeder", { name: "run_command", input: { command: "cat", wait_ms: 200 } });
    expect(value(result)).toMatchObject({ state: "running", output: "" });
    const processId = value(result).process_id;
    const written = await turn(session, { name: "write_process", input: { process_id: processId, data: "hello\n" } });
    expect(value(written), text(written)).toMatchObject({ bytes_written: 6, stdin_closed: false, state: "running" });
    const echoed = await turn(session, { name: "read_process", input: { process_id: processId, wait_ms: 5000 } });
    expect(value(echoed)).toMatchObject({ output: "hello\n", cursor: 6 });
    const closed = await turn(session, { name: "write_process", input: { process_id: processId, close_stdin: true } });
    expect(value(closed)).toMatchObject({ stdin_closed: true });
    const ended = await readToEnd(session, processId, 6);
    expect(ended.output).toBe("");
    expect(ended.last).toMatchObject({ done: true, exit_code: 0 });
    const late = await turn(session, { name: "write_process", input: { process_id: processId, data: "more\n" } });
    expect(late.outcome).toBe("failed");
    expect(text(late)).toContain("no more input");
  }, 90_000);

  it("interrupt sends SIGINT, terminate ends a process, and stopping it again after its end is a no-op", async () => {
    const { session, result } = await start("stopper", { name: "run_command", input: { command: "trap 'echo got-int; exit 5' INT; echo ready; while true; do sleep 0.1; done", wait_ms: 1000 } });
    const interruptible = value(result).process_id;
    const sleeper = value(await turn(session, { name: "run_command", input: { command: "sleep 30", wait_ms: 100 } })).process_id;
    const listed = await turn(session, { name: "list_processes", input: {} });
    expect(value(listed).processes.map((p: any) => p.process_id)).toEqual([interruptible, sleeper]);

    const interrupted = await turn(session, { name: "stop_process", input: { process_id: interruptible, mode: "interrupt" } });
    expect(value(interrupted), text(interrupted)).toMatchObject({ mode: "interrupt", stopped: true, signal: "SIGINT" });
    const afterInterrupt = await readToEnd(session, interruptible, 0);
    expect(afterInterrupt.output).toBe("ready\ngot-int\n");
    expect(afterInterrupt.last).toMatchObject({ done: true, exit_code: 5 });

    const terminated = await turn(session, { name: "stop_process", input: { process_id: sleeper, mode: "terminate" } });
    expect(value(terminated)).toMatchObject({ mode: "terminate", stopped: true });
    await eventually(async () => value(await turn(session, { name: "list_processes", input: {} })).processes.length, (n) => n === 0);
    const again = await turn(session, { name: "stop_process", input: { process_id: sleeper, mode: "terminate" } });
    expect(again.outcome).toBe("succeeded");
    expect(value(again)).toMatchObject({ state: "killed", done: true, stopped: false });
  }, 120_000);
});

describe("pty mode", () => {
  it("gives the command a terminal, and refuses close_stdin", async () => {
    const { session, result } = await start("terminal", { name: "run_command", input: { command: "tty; test -t 0 && echo interactive; read line; echo got $line", io_mode: "pty", wait_ms: 1000 } });
    expect(value(result)).toMatchObject({ state: "running" });
    const processId = value(result).process_id;
    const refused = await turn(session, { name: "write_process", input: { process_id: processId, close_stdin: true } });
    expect(refused.outcome).toBe("failed");
    expect(text(refused)).toContain("pipe mode only");
    await turn(session, { name: "write_process", input: { process_id: processId, data: "typed\n" } });
    const { output } = await readToEnd(session, processId, 0);
    expect(output).toMatch(/^\/dev\/pts\/\d+\r\ninteractive\r\n/);
    expect(output).toContain("got typed");
  }, 90_000);
});

describe("daemon failures", () => {
  it("a daemon killed while a write is being applied: after the restart the write is unknown and never applied again", async () => {
    const { session, result } = await start("restarts", { name: "run_command", input: { command: "while [ ! -e go ]; do sleep 0.1; done; wc -c", wait_ms: 200 } });
    const processId = value(result).process_id;
    // More than a pipe holds: the write blocks, since nothing reads until the test creates `go`.
    const data = "x".repeat(100 * 1024);
    const before = toolResults(await events(server.api, session.project, session.agentId)).length;
    provider.script({ toolCalls: [{ name: "write_process", input: { process_id: processId, data } }] }, { text: "ok" });
    await send(server.api, session.project, session.agentId, "write");
    const journal = join(session.home, "processes", readdirSync(join(session.home, "processes"))[0]!, "journal.json");
    await eventually(async () => JSON.parse(readFileSync(journal, "utf8")).actions ?? [], (actions: any[]) => actions.some((a) => a.position === "effect_committed"));
    session.daemon.child.kill("SIGKILL");
    await session.daemon.exited;
    session.daemon = daemon(session.machine.daemonToken, session.home);

    const list = await eventually(() => events(server.api, session.project, session.agentId), (e) => toolResults(e).length === before + 1 && finalOutputs(e).length === 2);
    const write = toolResults(list)[before];
    expect(write.outcome).toBe("failed");
    expect(text(write)).toContain("not applied again");
    // What reached the pipe before the kill is all `wc` ever gets: the write was not repeated.
    writeFileSync(join(session.work, "go"), "");
    const closed = await turn(session, { name: "write_process", input: { process_id: processId, close_stdin: true } });
    expect(closed.outcome, text(closed)).toBe("succeeded");
    const counted = Number((await readToEnd(session, processId, 0)).output.trim());
    expect(counted).toBeGreaterThan(0);
    expect(counted).toBeLessThanOrEqual(data.length);
  }, 120_000);

  it("a read waiting on a machine that stays offline past the grace period fails as machine_unreachable", async () => {
    const { session, result } = await start("vanishing", { name: "run_command", input: { command: "sleep 15", wait_ms: 100 } });
    session.daemon.child.kill("SIGTERM");
    expect(await session.daemon.exited).toBe(0);
    const read = await turn(session, { name: "read_process", input: { process_id: value(result).process_id } });
    expect(read.outcome).toBe("failed");
    expect(text(read)).toContain("machine_unreachable");
  }, 90_000);
});
