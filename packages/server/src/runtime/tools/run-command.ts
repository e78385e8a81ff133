import { and, asc, eq, isNull, sql } from "drizzle-orm";
import { agentMachineBindings, machines, projectMachineGrants } from "../../db/schema/index.js";
import type { EnvMap, EnvOverlay } from "../../db/schema/machines.js";
import type { Tx } from "../../platform/db/index.js";
import { decodeId, encodeId, newUuid } from "../../platform/ids.js";
import type { AgentSignals } from "../signals.js";
import type { AgentRow } from "../store/journal.js";
import { insertProcess, notifyDaemonWork } from "../store/processes.js";
import { completeToolCall, setToolCallState, textBlock, type ToolCallRow } from "../store/tool-calls.js";

/*
 * The built-in `run_command` tool, transactional phase (design brief §3.5, §4): pick the agent's attached
 * machine, queue a `processes` row for its daemon and leave the call `waiting`. The daemon's report
 * completes the call (modules/daemon): `process_finished` when the process ends within `wait_ms`, else
 * `process_started` with the output so far. Nothing here waits on the network.
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

interface Target {
  binding: typeof agentMachineBindings.$inferSelect;
  machine: typeof machines.$inferSelect;
  granted: boolean;
}

/** The agent's attached bindings with their machines and whether the project still holds a grant. */
async function attachedMachines(tx: Tx, agent: AgentRow): Promise<Target[]> {
  const rows = await tx
    .select({ binding: agentMachineBindings, machine: machines, grantId: projectMachineGrants.id })
    .from(agentMachineBindings)
    .innerJoin(machines, eq(machines.id, agentMachineBindings.machineId))
    .leftJoin(projectMachineGrants, and(eq(projectMachineGrants.machineId, machines.id), eq(projectMachineGrants.projectId, agent.projectId)))
    .where(and(eq(agentMachineBindings.agentId, agent.id), eq(agentMachineBindings.state, "attached")))
    .orderBy(asc(agentMachineBindings.createdAt));
  return rows.map((row) => ({ binding: row.binding, machine: row.machine, granted: row.grantId !== null }));
}

/** The machine a call names, or the only one; a message for the model when there is no single answer. */
export async function chooseTarget(tx: Tx, agent: AgentRow, input: RunCommandInput): Promise<Target | string> {
  const targets = await attachedMachines(tx, agent);
  const listed = targets.map((t) => `${encodeId("machine", t.machine.id)} (${t.machine.displayName})`).join(", ");
  if (targets.length === 0) return "No machine is attached to this agent: add one to machine_sources in its config.";
  if (input.machine_id === undefined) {
    if (targets.length === 1) return targets[0]!;
    return `Several machines are attached; pass machine_id with one of: ${listed}.`;
  }
  const machineId = decodeId("machine", input.machine_id);
  const target = targets.find((t) => t.machine.id === machineId);
  return target ?? `No attached machine has id ${input.machine_id}; attached: ${listed}.`;
}

/** The rows an approver sees for an `always_ask` run_command call: command, machine, shell and cwd. */
export async function runCommandContext(tx: Tx, agent: AgentRow, input: RunCommandInput): Promise<Array<{ label: string; value: string }>> {
  const target = await chooseTarget(tx, agent, input);
  const machine = typeof target === "string" ? (input.machine_id ?? "none attached") : `${target.machine.displayName} (${encodeId("machine", target.machine.id)})`;
  const cwd = input.cwd ?? (typeof target === "string" ? "" : target.binding.cwd || target.machine.cwd);
  return [
    { label: "Command", value: input.command.length > 4000 ? `${input.command.slice(0, 4000)}…` : input.command },
    { label: "Machine", value: machine },
    { label: "Shell", value: input.shell ?? "default" },
    { label: "Working directory", value: cwd || "the daemon's home" },
  ];
}

export async function dispatchRunCommand(tx: Tx, signals: AgentSignals, agent: AgentRow, call: ToolCallRow): Promise<void> {
  const input = call.input as unknown as RunCommandInput;
  const fail = (message: string) => completeToolCall(tx, signals, agent, call, "failed", [textBlock(message)]);
  const target = await chooseTarget(tx, agent, input);
  if (typeof target === "string") return void (await fail(target));
  const { machine, binding } = target;
  const name = `${machine.displayName} (${encodeId("machine", machine.id)})`;
  if (machine.deletedAt || machine.lifecycleState !== "active" || !target.granted) {
    return void (await fail(`machine_unavailable: ${name} is no longer available to this project (deleted, or its grant was revoked).`));
  }
  // Online by the database clock: a daemon's lease is running. An offline machine fails the call at once,
  // retryable, as the reference does; the process would otherwise wait for a daemon that may never come.
  const [live] = await tx
    .select({ id: machines.id })
    .from(machines)
    .where(and(eq(machines.id, machine.id), isNull(machines.deletedAt), sql`${machines.leaseExpiresAt} > statement_timestamp()`));
  if (!live) return void (await fail(`machine_unreachable: ${name} is offline (its daemon is not connected). Retry when it is online.`));
  await insertProcess(tx, {
    id: newUuid(),
    orgId: machine.orgId,
    agentId: agent.id,
    toolCallId: call.id,
    machineId: machine.id,
    bindingId: binding.id,
    ioMode: input.io_mode ?? "pipe",
    command: input.command,
    shellSelector: input.shell ?? "default",
    cwd: input.cwd ?? (binding.cwd || machine.cwd),
    env: overlay(machine.env, binding.envOverlay),
    secretEnv: overlay(machine.secretEnv, binding.secretEnvOverlay),
    waitMs: input.wait_ms ?? DEFAULT_WAIT_MS,
  });
  await setToolCallState(tx, signals, call, "waiting");
  await notifyDaemonWork(tx, machine.id);
}

/** `base` with `changes` over it; a null change removes the name. */
export function overlay(base: EnvMap, changes: EnvOverlay): EnvMap {
  const merged: EnvMap = { ...base };
  for (const [name, value] of Object.entries(changes)) {
    if (value === null) delete merged[name];
    else merged[name] = value;
  }
  return merged;
}
