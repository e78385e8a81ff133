import { and, asc, eq, gt, inArray, sql } from "drizzle-orm";
import { agentConfigs, agentMachineBindings, machinePools, machines, projectMachineGrants } from "../../db/schema/index.js";
import type { Tx } from "../../platform/db/index.js";
import { decodeId, encodeId } from "../../platform/ids.js";
import type { AgentDefinition, PoolMachineSourceDefinition } from "../../runtime/definition.js";
import type { AgentMachines, CommandTarget, MachineToolAnswer } from "../../runtime/tools/machine-tools.js";
import { releaseBindings } from "./bindings.js";
import { createPoolMachine, merged } from "./pool-machines.js";
import { machineColumns, type MachineRow } from "./store.js";
import type { BindingRow } from "./binding-rows.js";

/*
 * The machine tools' rules (reference tools/built-in.mdx, "Machines"), behind the engine's `AgentMachines`
 * port. A machine is `executable` when its binding is attached, the project still holds its grant, its
 * lifecycle is `active` and its daemon is online or it is asleep (a command wakes it; machines/overview.mdx,
 * "Machine state"). run_command's choice and checks live here too (`commandTarget`).
 */

const DEFAULT_PAGE = 20;

interface Held {
  binding: BindingRow;
  machine: MachineRow;
  granted: boolean;
  poolName: string | null;
}

/** Why a machine cannot run commands now, or null when it can. */
function notExecutable({ machine, granted }: Held): string | null {
  if (machine.deletedAt) return "it was deleted";
  if (!granted) return "its grant to this project was revoked";
  if (machine.lifecycleState === "provisioning") return "it is still being provisioned; a run_command now waits for it, or inspect it again shortly";
  if (machine.lifecycleState !== "active") return `its lifecycle state is ${machine.lifecycleState}${machine.lifecycleReasonMessage ? ` (${machine.lifecycleReasonMessage})` : ""}`;
  // Asleep is executable (reference machines/overview.mdx): a command wakes it.
  if (machine.connectionState === "offline" && machine.sourceKind === "pool") return "its daemon is not connected; svc is starting it again, and a run_command waits for it";
  if (machine.connectionState === "offline") return "it is offline: its daemon is not connected";
  return null;
}

function view(held: Held): Record<string, unknown> {
  const reason = notExecutable(held);
  return {
    machine_id: encodeId("machine", held.machine.id),
    machine_ref: held.binding.machineRef,
    display_name: held.machine.displayName,
    source_kind: held.machine.sourceKind,
    binding_kind: held.binding.bindingKind,
    machine_pool_name: held.poolName,
    lifecycle_state: held.machine.lifecycleState,
    connection_state: held.machine.connectionState,
    executable: reason === null,
    ...(reason === null ? {} : { not_executable_reason: reason }),
    cwd: held.binding.cwd || held.machine.cwd,
  };
}

/** The agent's attached bindings in creation order (UUIDv7), from `after` on. */
async function held(tx: Tx, agentId: string, projectId: string, options: { after?: string; limit?: number; machineId?: string } = {}): Promise<Held[]> {
  const query = tx
    .select({ binding: agentMachineBindings, machine: machineColumns, grantId: projectMachineGrants.id, poolName: machinePools.name })
    .from(agentMachineBindings)
    .innerJoin(machines, eq(machines.id, agentMachineBindings.machineId))
    .leftJoin(projectMachineGrants, and(eq(projectMachineGrants.machineId, machines.id), eq(projectMachineGrants.projectId, projectId)))
    .leftJoin(machinePools, eq(machinePools.id, machines.machinePoolId))
    .where(
      and(
        eq(agentMachineBindings.agentId, agentId),
        eq(agentMachineBindings.state, "attached"),
        options.after ? gt(agentMachineBindings.id, options.after) : undefined,
        options.machineId ? eq(agentMachineBindings.machineId, options.machineId) : undefined,
      ),
    )
    .orderBy(asc(agentMachineBindings.id));
  const rows = await (options.limit ? query.limit(options.limit) : query);
  return rows.map((row) => ({ binding: row.binding, machine: row.machine, granted: row.grantId !== null, poolName: row.poolName }));
}

const failed = (message: string): MachineToolAnswer => ({ ok: false, message });

const labelOf = (machine: MachineRow) => `${machine.displayName} (${encodeId("machine", machine.id)})`;

/** The process environment a binding gives: its overlay over the machine's (null removes a name). */
function commandTarget({ binding, machine }: Held): CommandTarget {
  return {
    machineId: machine.id,
    orgId: machine.orgId,
    bindingId: binding.id,
    label: labelOf(machine),
    cwd: binding.cwd || machine.cwd,
    env: merged(machine.env, binding.envOverlay),
    secretEnv: merged(machine.secretEnv, binding.secretEnvOverlay),
  };
}

/**
 * Why a command cannot be queued on the machine now, or null. A pool machine svc is bringing up
 * (provisioning, asleep, or its daemon restarting) takes the process queued: maintenance starts or wakes
 * it, and the call waits, bounded by the grace period. A connected machine that is offline fails at once,
 * retryably, as the reference does: svc cannot bring it back.
 */
function commandProblem({ machine, granted }: Held): string | null {
  const label = labelOf(machine);
  if (machine.deletedAt || ["deleting", "deleted", "delete_failed"].includes(machine.lifecycleState)) return `machine_unavailable: ${label} was deleted.`;
  if (!granted) return `machine_unavailable: ${label} is no longer granted to this project.`;
  if (machine.lifecycleState === "provision_failed") {
    return `machine_unavailable: ${label} could not be provisioned (${machine.lifecycleReasonMessage || "its daemon never came online"}). Delete it with delete_machine and create another.`;
  }
  if (machine.sourceKind === "pool") return null;
  if (machine.connectionState !== "online") return `machine_unreachable: ${label} is offline (its daemon is not connected). Retry when it is online.`;
  return null;
}

/** The pool sources of the agent's current config: create_machine makes machines from them. */
async function poolSources(tx: Tx, configId: string): Promise<PoolMachineSourceDefinition[]> {
  const [config] = await tx.select({ definition: agentConfigs.compiledDefinition }).from(agentConfigs).where(eq(agentConfigs.id, configId));
  const definition = config?.definition as AgentDefinition | undefined;
  return (definition?.machineSources ?? []).filter((s): s is PoolMachineSourceDefinition => s.kind === "pool");
}

export function createAgentMachines(): AgentMachines {
  return {
    async attached(tx, agent) {
      return tx
        .select({
          id: machines.id,
          orgId: machines.orgId,
          name: machines.displayName,
          lifecycleState: machines.lifecycleState,
          usable: sql<boolean>`(${machines.deletedAt} IS NULL AND ${machines.lifecycleState} = 'active' AND ${projectMachineGrants.id} IS NOT NULL)`,
          online: sql<boolean>`coalesce(${machines.leaseExpiresAt} > statement_timestamp(), false)`,
        })
        .from(agentMachineBindings)
        .innerJoin(machines, eq(machines.id, agentMachineBindings.machineId))
        .leftJoin(projectMachineGrants, and(eq(projectMachineGrants.machineId, machines.id), eq(projectMachineGrants.projectId, agent.projectId)))
        .where(and(eq(agentMachineBindings.agentId, agent.id), eq(agentMachineBindings.state, "attached")))
        .orderBy(asc(agentMachineBindings.createdAt));
    },

    async names(db, machineIds) {
      if (machineIds.length === 0) return new Map();
      const rows = await db.select({ id: machines.id, name: machines.displayName }).from(machines).where(inArray(machines.id, [...machineIds]));
      return new Map(rows.map((row) => [row.id, row.name]));
    },

    async commandTarget(tx, agent, input) {
      const all = await held(tx, agent.id, agent.projectId);
      if (all.length === 0) return { ok: false, message: "No machine is attached to this agent: add one to machine_sources in its config." };
      const listed = all.map((h) => labelOf(h.machine)).join(", ");
      let one: Held | undefined;
      if (input.machine_id === undefined) {
        if (all.length > 1) return { ok: false, message: `Several machines are attached; pass machine_id with one of: ${listed}.` };
        one = all[0];
      } else {
        const machineId = decodeId("machine", input.machine_id);
        one = all.find((h) => h.machine.id === machineId);
      }
      if (!one) return { ok: false, message: `No attached machine has id ${input.machine_id}; attached: ${listed}.` };
      const target = commandTarget(one);
      const problem = commandProblem(one);
      return problem ? { ok: false, message: problem, target } : { ok: true, target };
    },

    async list(tx, agent, input) {
      const limit = input.limit ?? DEFAULT_PAGE;
      const after = input.cursor === undefined ? undefined : decodeId("machineBinding", input.cursor);
      if (after === null) return failed(`cursor ${JSON.stringify(input.cursor)} is not a next_cursor this tool returned; call list_machines without it to start again.`);
      const page = await held(tx, agent.id, agent.projectId, { after, limit: limit + 1 });
      const shown = page.slice(0, limit);
      const more = page.length > limit;
      return { ok: true, value: { machines: shown.map(view), next_cursor: more ? encodeId("machineBinding", shown.at(-1)!.binding.id) : null } };
    },

    async inspect(tx, agent, input) {
      if (input.machine_id === undefined) {
        const all = await held(tx, agent.id, agent.projectId, { limit: 2 });
        if (all.length === 0) return failed("No machine is attached to you: add one to machine_sources in your config, or call create_machine if it lists a pool.");
        if (all.length > 1) return failed("Several machines are attached to you; pass machine_id (list_machines shows them).");
        return { ok: true, value: view(all[0]!) };
      }
      const machineId = decodeId("machine", input.machine_id);
      const [one] = machineId ? await held(tx, agent.id, agent.projectId, { machineId }) : [];
      if (!one) return failed(`No machine ${input.machine_id} is attached to you; list_machines shows the ones that are.`);
      return { ok: true, value: view(one) };
    },

    async create(tx, agent, call, input) {
      const pools = await poolSources(tx, agent.currentConfigId);
      if (pools.length === 0) return failed("Your config lists no machine pool in machine_sources, so create_machine has nothing to make machines from.");
      const names = pools.map((p) => p.poolName).join(", ");
      const source = input.machine_pool_name === undefined ? (pools.length === 1 ? pools[0] : undefined) : pools.find((p) => p.poolName === input.machine_pool_name);
      if (!source) {
        return failed(
          input.machine_pool_name === undefined
            ? `Your config has several machine pools; pass machine_pool_name, one of: ${names}.`
            : `No machine pool named ${JSON.stringify(input.machine_pool_name)} is in your config; its pools: ${names}.`,
        );
      }
      const made = await createPoolMachine(tx, agent, source, call.id);
      if ("refused" in made) return failed(`No machine was made: ${made.refused}.`);
      return { waiting: true };
    },

    async remove(tx, agent, input) {
      const machineId = decodeId("machine", input.machine_id);
      const [one] = machineId ? await held(tx, agent.id, agent.projectId, { machineId }) : [];
      if (!one) return failed(`No machine ${input.machine_id} is attached to you; list_machines shows the ones that are.`);
      if (one.binding.bindingKind !== "pool") {
        return failed(`${input.machine_id} is a connected machine (binding_kind explicit); delete_machine deletes only machines made from a pool.`);
      }
      await releaseBindings(tx, { machineId: one.machine.id }, "machine_deleted: the agent deleted the machine with delete_machine.");
      return { ok: true, value: { machine_id: input.machine_id, machine_ref: one.binding.machineRef, lifecycle_state: "deleting", deleted: true } };
    },
  };
}
