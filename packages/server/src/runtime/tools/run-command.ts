import type { Tx } from "../../platform/db/index.js";
import { newUuid } from "../../platform/ids.js";
import type { AgentRow } from "../store/journal.js";
import { insertProcess, notifyDaemonWork } from "../store/processes.js";
import { completeToolCall, setToolCallState, textBlock, type ToolCallRow } from "../store/tool-calls.js";
import type { AgentMachines } from "./machine-tools.js";

/*
 * The built-in `run_command` tool, transactional phase (reference design-brief.md §3.5, §4): the machines module picks
 * and checks the agent's machine (`AgentMachines.commandTarget`), then a `processes` row is queued for its
 * daemon and the call left `waiting`. The daemon's report completes the call (modules/daemon):
 * `process_finished` when the process ends within `wait_ms`, else `process_started` with the output so far.
 * A pool machine still provisioning or asleep gets the process queued too; maintenance brings it up.
 * Nothing here waits on the network.
 */

export interface RunCommandInput {
  command: string;
  machine_id?: string;
  shell?: string;
  cwd?: string;
  wait_ms?: number;
  io_mode?: "pipe" | "pty";
}

/**
 * The default `wait_ms`: the reference's range ends at 10 s and its tool returns early output, so the
 * call returns with the output so far when a command outlives it; most commands end well before.
 */
const DEFAULT_WAIT_MS = 10_000;

const NO_MACHINES = "run_command cannot run in this deployment (no machines module).";

/** The rows an approver sees for an `always_ask` run_command call: command, machine, shell and cwd. */
export async function runCommandContext(tx: Tx, agent: AgentRow, input: RunCommandInput, machines: AgentMachines | undefined): Promise<Array<{ label: string; value: string }>> {
  const answer = machines ? await machines.commandTarget(tx, agent, input) : undefined;
  const target = answer?.target;
  const cwd = input.cwd ?? target?.cwd ?? "";
  return [
    { label: "Command", value: input.command.length > 4000 ? `${input.command.slice(0, 4000)}…` : input.command },
    { label: "Machine", value: target?.label ?? input.machine_id ?? "none attached" },
    { label: "Shell", value: input.shell ?? "default" },
    { label: "Working directory", value: cwd || "the daemon's home" },
  ];
}

export async function dispatchRunCommand(tx: Tx, agent: AgentRow, call: ToolCallRow, machines: AgentMachines | undefined): Promise<void> {
  const input = call.input as unknown as RunCommandInput;
  const answer = machines ? await machines.commandTarget(tx, agent, input) : { ok: false as const, message: NO_MACHINES };
  if (!answer.ok) return void (await completeToolCall(tx, agent, call, "failed", [textBlock(answer.message)]));
  const { target } = answer;
  await insertProcess(tx, {
    id: newUuid(),
    orgId: target.orgId,
    agentId: agent.id,
    toolCallId: call.id,
    machineId: target.machineId,
    bindingId: target.bindingId,
    ioMode: input.io_mode ?? "pipe",
    command: input.command,
    shellSelector: input.shell ?? "default",
    cwd: input.cwd ?? target.cwd,
    env: target.env,
    secretEnv: target.secretEnv,
    waitMs: input.wait_ms ?? DEFAULT_WAIT_MS,
  });
  await setToolCallState(tx, call, "waiting");
  await notifyDaemonWork(tx, target.machineId);
}
