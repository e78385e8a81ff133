import { and, asc, eq, inArray } from "drizzle-orm";
import { processes } from "../../db/schema/index.js";
import type { Tx } from "../../platform/db/index.js";
import { decodeId, encodeId, newUuid } from "../../platform/ids.js";
import type { AgentRow } from "../store/journal.js";
import { TERMINAL_PROCESS_STATES, insertAction, lockAgentProcess, settleProcess, type ActionKind, type ProcessRow } from "../store/processes.js";
import { completeToolCall, setToolCallState, textBlock, type ToolCallRow } from "../store/tool-calls.js";

/*
 * The process tools, transactional phase (reference design-brief.md §3.5, §4): `list_processes` is a database read and
 * completes at once; `read_process`, `write_process` and `stop_process` queue a process action for the
 * machine's daemon and leave the call `waiting`, and the daemon's report completes it
 * (modules/daemon). What needs no daemon is answered here: a process that is not the agent's, a write to
 * or a stop of a process that has ended.
 */

interface ProcessInput {
  process_id: string;
  cursor?: number;
  stderr_cursor?: number;
  max_bytes?: number;
  wait_ms?: number;
  data?: string;
  close_stdin?: boolean;
  mode?: "interrupt" | "terminate";
}

/** list_processes returns at most this many (the oldest first) and says when there are more. */
const LIST_LIMIT = 100;
const LABEL_CHARS = 200;

export async function dispatchProcessTool(tx: Tx, agent: AgentRow, call: ToolCallRow): Promise<void> {
  const done = (outcome: "succeeded" | "failed", value: unknown) =>
    completeToolCall(tx, agent, call, outcome, outcome === "failed" && typeof value === "string" ? [textBlock(value)] : [{ type: "structured_data", value }]);
  if (call.name === "list_processes") return void (await done("succeeded", await listProcesses(tx, agent)));

  const input = call.input as unknown as ProcessInput;
  const processId = decodeId("process", input.process_id);
  // Another agent's process reads exactly like one that does not exist.
  const process = processId ? await lockAgentProcess(tx, agent.id, processId) : undefined;
  if (!process) return void (await done("failed", `No process ${input.process_id} of yours exists. list_processes shows your running processes.`));
  const ended = TERMINAL_PROCESS_STATES.has(process.state);

  let kind: ActionKind;
  let payload: Record<string, unknown>;
  if (call.name === "read_process") {
    if (process.state === "unknown") return void (await done("failed", `${input.process_id}'s outcome is unknown (${process.reason || "svc lost track of it"}); its output cannot be read.`));
    kind = "read";
    payload = pick(input, ["cursor", "stderr_cursor", "max_bytes", "wait_ms"]);
  } else if (call.name === "write_process") {
    if (input.close_stdin && process.ioMode === "pty") return void (await done("failed", "close_stdin is for pipe mode only; in pty mode, type the terminal's end-of-input (data: \"\\u0004\") instead."));
    if (!input.data && !input.close_stdin) return void (await done("failed", "Nothing to do: pass data, close_stdin, or both."));
    if (ended) return void (await done("failed", `${input.process_id} has ended (state ${process.state}); it takes no more input.`));
    kind = "write";
    payload = pick(input, ["data", "close_stdin"]);
  } else {
    // Stopping what has ended is a no-op that succeeds, so a repeated stop is safe.
    if (ended) return void (await done("succeeded", { process_id: input.process_id, mode: input.mode, state: process.state, done: true, exit_code: process.exitCode, stopped: false }));
    if (process.state === "queued") return void (await stopQueued(tx, agent, call, process, input));
    kind = input.mode === "interrupt" ? "interrupt" : "terminate";
    payload = {};
  }
  await insertAction(tx, process, call.id, newUuid(), kind, payload);
  await setToolCallState(tx, call, "waiting");
}

/** A process no daemon took yet never runs: it ends `killed` here. */
async function stopQueued(tx: Tx, agent: AgentRow, call: ToolCallRow, process: ProcessRow, input: ProcessInput): Promise<void> {
  const reason = "stop_process stopped it before any daemon started it";
  const result = { process_id: input.process_id, state: "killed", command: process.command, done: true, exit_code: null, reason };
  await settleProcess(tx, process, { state: "killed", exitCode: null, exitSignal: null, reason, startedAt: null, endedAt: null, outputBytes: 0 }, { outcome: "failed", blocks: [{ type: "structured_data", value: result }] });
  await completeToolCall(tx, agent, call, "succeeded", [{ type: "structured_data", value: { process_id: input.process_id, mode: input.mode, state: "killed", done: true, exit_code: null, stopped: true } }]);
}

async function listProcesses(tx: Tx, agent: AgentRow) {
  const rows = await tx
    .select()
    .from(processes)
    .where(and(eq(processes.agentId, agent.id), inArray(processes.state, ["queued", "starting", "running"])))
    .orderBy(asc(processes.createdAt))
    .limit(LIST_LIMIT + 1);
  return {
    processes: rows.slice(0, LIST_LIMIT).map((p) => ({
      process_id: encodeId("process", p.id),
      state: p.state,
      command: p.command.length > LABEL_CHARS ? `${p.command.slice(0, LABEL_CHARS)}…` : p.command,
      cwd: p.cwd,
      io_mode: p.ioMode,
      machine_id: encodeId("machine", p.machineId),
      created_at: p.createdAt.toISOString(),
    })),
    has_more: rows.length > LIST_LIMIT,
  };
}

function pick(input: ProcessInput, keys: Array<keyof ProcessInput>): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => input[k] !== undefined).map((k) => [k, input[k]]));
}
