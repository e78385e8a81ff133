import type { ArtifactsService } from "../../modules/artifacts/service.js";
import type { KindCatalog } from "../../modules/integrations/capability-schemas.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import type { AgentRow } from "../store/journal.js";
import type { AgentDelegates } from "./delegation-tools.js";
import { completeToolCall, setToolCallState, textBlock, type ToolCallRow } from "../store/tool-calls.js";

/*
 * The machine tools' transactional phase (reference design-brief.md §3.5): list_machines, inspect_machine and
 * delete_machine complete at once; create_machine makes the machine and leaves the call `waiting` until
 * maintenance sees it online or failed (modules/machines/lifecycle.ts). What they read and write belongs
 * to the machines module, reached through `AgentMachines`, so the engine does not read machine tables.
 */

/** What a machine tool answers: a result for the model, a message for a failed call, or "wait". */
export type MachineToolAnswer = { ok: true; value: Record<string, unknown> } | { ok: false; message: string } | { waiting: true };

/**
 * Where a run_command call runs, as the machines module chose it: the machine and the binding, with the
 * binding's working directory and environment merged over the machine's.
 */
export interface CommandTarget {
  machineId: string;
  orgId: string;
  bindingId: string;
  /** `name (mch_…)`, for messages and the approver. */
  label: string;
  /** The binding's working directory, else the machine's; empty when neither set one. */
  cwd: string;
  env: Record<string, string>;
  /** Variable → secret UUID, read when the process is offered to the daemon. */
  secretEnv: Record<string, string>;
}

/**
 * The machine a run_command call may queue a process on now (online, or one svc brings up by itself: a pool
 * machine provisioning, asleep or restarting), or a message for the model. `target` is set whenever a
 * machine was chosen, so an approver sees it even when it cannot run the command now.
 */
export type CommandTargetAnswer = { ok: true; target: CommandTarget } | { ok: false; message: string; target?: CommandTarget };

/** An attached machine as a `skill` install sees it: `online` by the database clock, `usable` while svc may still run work there. */
export interface AttachedMachine {
  id: string;
  orgId: string;
  name: string;
  lifecycleState: string;
  usable: boolean;
  online: boolean;
}

/** The machines module as the engine sees it; every call runs in the claim's transaction, the agent locked. */
export interface AgentMachines {
  /** The machines of the agent's attached bindings, oldest binding first. */
  attached(tx: Tx, agent: AgentRow): Promise<AttachedMachine[]>;
  /** Machines' display names by id, deleted machines included (outside the claim's transaction too). */
  names(db: AppDb | Tx, machineIds: readonly string[]): Promise<Map<string, string>>;
  /** The attached machine a run_command names (`machine_id`), or the only one, checked for use now. */
  commandTarget(tx: Tx, agent: AgentRow, input: { machine_id?: string }): Promise<CommandTargetAnswer>;
  list(tx: Tx, agent: AgentRow, input: { cursor?: string; limit?: number }): Promise<MachineToolAnswer>;
  inspect(tx: Tx, agent: AgentRow, input: { machine_id?: string }): Promise<MachineToolAnswer>;
  create(tx: Tx, agent: AgentRow, call: ToolCallRow, input: { machine_pool_name?: string }): Promise<MachineToolAnswer>;
  remove(tx: Tx, agent: AgentRow, input: { machine_id: string }): Promise<MachineToolAnswer>;
}

/** What the transactional tool phase may call beyond the engine's own tables. */
export interface ToolPorts {
  machines?: AgentMachines;
  /** download_file checks, in the claim's transaction, that the artifact is the agent's. */
  artifacts?: Pick<ArtifactsService, "findAgentArtifact">;
  /** The integration kinds' catalogs: which kinds post questions and approvals, and the handler tools' argument schemas. */
  kinds?: Pick<KindCatalog, "catalog" | "capabilityIssues" | "postsInteractions">;
  /** Launching and messaging a coordinator's children (delegation-tools.ts), implemented by the agents module. */
  delegates?: AgentDelegates;
  /** download_file reads the memory file it sends, in the claim's transaction. */
  memory?: Pick<MemoryPort, "readFile">;
}

import type { MemoryPort } from "./files/memory.js";

export const MACHINE_TOOL_NAMES: ReadonlySet<string> = new Set(["list_machines", "inspect_machine", "create_machine", "delete_machine"]);

export async function dispatchMachineTool(tx: Tx, agent: AgentRow, call: ToolCallRow, machines: AgentMachines | undefined): Promise<void> {
  if (!machines) {
    await completeToolCall(tx, agent, call, "failed", [textBlock(`The built-in tool ${call.name} cannot run in this deployment.`)]);
    return;
  }
  const input = call.input as Record<string, unknown>;
  const answer =
    call.name === "list_machines"
      ? await machines.list(tx, agent, input)
      : call.name === "inspect_machine"
        ? await machines.inspect(tx, agent, input)
        : call.name === "create_machine"
          ? await machines.create(tx, agent, call, input)
          : await machines.remove(tx, agent, input as { machine_id: string });
  if ("waiting" in answer) await setToolCallState(tx, call, "waiting");
  else if (answer.ok) await completeToolCall(tx, agent, call, "succeeded", [{ type: "structured_data", value: answer.value }]);
  else await completeToolCall(tx, agent, call, "failed", [textBlock(answer.message)]);
}
