import { and, asc, eq, inArray, isNull, ne } from "drizzle-orm";
import { agentMachineBindings, machines, processes, projectMachineGrants } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import { abandonProcess } from "../../runtime/store/processes.js";
import type { Tx } from "../../platform/db/index.js";
import { encodeId } from "../../platform/ids.js";
import { iso } from "../../platform/http/schemas.js";
import type { AgentDefinition } from "../../runtime/definition.js";
import { findLiveByoMachineByName, type MachineRow } from "./store.js";
import { insertBinding, machineRef, type BindingRow } from "./binding-rows.js";
import { failCreateCall } from "./create-calls.js";
import { publicSecretRefs } from "./environment.js";
import { createPoolMachine, grantedPool } from "./pool-machines.js";

export type { BindingRow } from "./binding-rows.js";

/*
 * Agent machine bindings: the machines an agent holds, made when it launches from its config's
 * `machine_sources`. Tools name a binding's machine; `machine_ref` (`mchr-…`) is the short name the
 * reference gives each binding.
 */

/** A live BYO machine of the org with this name that the project holds a grant for, or undefined. */
export async function machineGrantedTo(tx: Tx, orgId: string, projectId: string, displayName: string): Promise<MachineRow | undefined> {
  const machine = await findLiveByoMachineByName(tx, orgId, displayName);
  if (!machine) return undefined;
  const [grant] = await tx
    .select({ id: projectMachineGrants.id })
    .from(projectMachineGrants)
    .where(and(eq(projectMachineGrants.projectId, projectId), eq(projectMachineGrants.machineId, machine.id)));
  return grant ? machine : undefined;
}

/** A launch problem at a path of the config source; the caller places it in the source (line and column). */
export interface LaunchProblem {
  path: Array<string | number>;
  message: string;
}

/**
 * Binds a launching agent to the machines of its config: each BYO machine, and `initial_num_machines`
 * new machines of each pool source (provisioned afterwards by maintenance). Access is checked again: a
 * machine or pool deleted or ungranted since the config was compiled, or a pool at its limits, fails the
 * launch through `fail` (400 with the source's path), so an agent never starts without what its config promised.
 */
export async function bindMachines(
  tx: Tx,
  agent: { id: string; orgId: string; projectId: string },
  definition: AgentDefinition,
  fail: (problems: LaunchProblem[]) => never,
): Promise<BindingRow[]> {
  const sources = definition.machineSources ?? [];
  const bindings: BindingRow[] = [];
  const problems: LaunchProblem[] = [];
  for (const [index, source] of sources.entries()) {
    if (source.kind === "pool") {
      const granted = await grantedPool(tx, agent.orgId, agent.projectId, source.poolName);
      if (!granted || granted.pool.id !== source.poolId) {
        problems.push({ path: ["machine_sources", index, "machine_pool_name"], message: `machine pool "${source.poolName}" was deleted or is no longer granted to this project` });
        continue;
      }
      for (let n = 0; n < source.initialNumMachines; n++) {
        const made = await createPoolMachine(tx, agent, source, null);
        if ("refused" in made) {
          problems.push({ path: ["machine_sources", index, "machine_pool_name"], message: `no machine could be made from pool "${source.poolName}": ${made.refused}` });
          break;
        }
        bindings.push(made.binding);
      }
      continue;
    }
    const machine = await machineGrantedTo(tx, agent.orgId, agent.projectId, source.machineName);
    if (!machine || machine.id !== source.machineId) {
      problems.push({ path: ["machine_sources", index, "machine_name"], message: `machine "${source.machineName}" was deleted or is no longer granted to this project` });
      continue;
    }
    bindings.push(await insertBinding(tx, agent, { id: machine.id, ref: machineRef(), kind: "explicit" }, source));
  }
  if (problems.length > 0) fail(problems);
  return bindings;
}

export async function listBindings(tx: Tx, agentId: string): Promise<BindingRow[]> {
  return tx.select().from(agentMachineBindings).where(eq(agentMachineBindings.agentId, agentId)).orderBy(asc(agentMachineBindings.createdAt));
}

/**
 * Releases attached bindings (an agent's, a machine's, optionally only in one project, or one) and abandons the
 * processes that ran through them: a call still waiting for one fails with `reason`.
 */
export async function releaseBindings(
  tx: Tx,
  of: { agentId: string } | { machineId: string; projectId?: string } | { bindingId: string },
  reason: string,
): Promise<void> {
  const released = await tx
    .update(agentMachineBindings)
    .set({ state: "released", updatedAt: dbNow })
    .where(
      and(
        eq(agentMachineBindings.state, "attached"),
        "agentId" in of ? eq(agentMachineBindings.agentId, of.agentId) : "bindingId" in of ? eq(agentMachineBindings.id, of.bindingId) : eq(agentMachineBindings.machineId, of.machineId),
        "projectId" in of && of.projectId ? eq(agentMachineBindings.projectId, of.projectId) : undefined,
      ),
    )
    .returning({ id: agentMachineBindings.id, machineId: agentMachineBindings.machineId, kind: agentMachineBindings.bindingKind });
  if (released.length === 0) return;
  const live = await tx
    .select()
    .from(processes)
    .where(and(inArray(processes.bindingId, released.map((b) => b.id)), inArray(processes.state, ["queued", "starting", "running"])));
  for (const process of live) await abandonProcess(tx, process, reason);
  // A pool machine belongs to the binding that made it: releasing the binding deletes the machine.
  await scheduleDeletion(tx, released.filter((b) => b.kind === "pool").map((b) => b.machineId), reason);
}

/** Abandons the machine's live processes (queued, starting, running): a call still waiting for one fails with `reason`. */
export async function abandonMachineProcesses(tx: Tx, machineId: string, reason: string): Promise<void> {
  const live = await tx.select().from(processes).where(and(eq(processes.machineId, machineId), inArray(processes.state, ["queued", "starting", "running"])));
  for (const process of live) await abandonProcess(tx, process, reason);
}

/**
 * Schedules pool machines for deletion: `deleting` now, deleted by the provider on the next maintenance
 * tick (lifecycle.ts). Their bindings are released, and a create_machine call still waiting on one fails.
 */
export async function scheduleDeletion(tx: Tx, machineIds: string[], reason: string): Promise<void> {
  if (machineIds.length === 0) return;
  const scheduled = await tx
    .update(machines)
    .set({ lifecycleState: "deleting", lifecycleReasonCode: "released", lifecycleReasonMessage: reason, nextReconcileAfter: null, updatedAt: dbNow })
    .where(and(inArray(machines.id, machineIds), eq(machines.sourceKind, "pool"), isNull(machines.deletedAt), ne(machines.lifecycleState, "deleting")))
    .returning({ id: machines.id, createToolCallId: machines.createToolCallId });
  for (const machine of scheduled) {
    await failCreateCall(tx, machine.createToolCallId, `The machine was deleted before it was ready: ${reason}`);
    await releaseBindings(tx, { machineId: machine.id }, reason);
  }
}

export function bindingView(binding: BindingRow) {
  return {
    id: encodeId("machineBinding", binding.id),
    project_id: encodeId("project", binding.projectId),
    agent_id: encodeId("agent", binding.agentId),
    machine_id: encodeId("machine", binding.machineId),
    machine_ref: binding.machineRef,
    binding_kind: binding.bindingKind as "explicit" | "pool",
    state: binding.state as "attached" | "released",
    description: binding.description,
    cwd: binding.cwd,
    env_overlay: binding.envOverlay,
    secret_env_overlay: publicSecretRefs(binding.secretEnvOverlay),
    created_at: iso(binding.createdAt),
    updated_at: iso(binding.updatedAt),
  };
}
