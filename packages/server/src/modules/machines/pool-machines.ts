import { and, eq, isNull, sql } from "drizzle-orm";
import { agentMachineBindings, machinePools, machines, projectMachineGrants, projectMachinePoolGrants } from "../../db/schema/index.js";
import type { EnvOverlay } from "../../db/schema/machines.js";
import type { Tx } from "../../platform/db/index.js";
import { newUuid } from "../../platform/ids.js";
import type { PoolMachineSourceDefinition } from "../../runtime/definition.js";
import { effectiveCapacity, capacityOf, type Capacity } from "./pools-rules.js";
import type { PoolRow } from "./pools-store.js";
import type { PoolGrantRow } from "./pool-grants-store.js";
import { insertMachine, type MachineRow } from "./store.js";
import { insertBinding, machineRef, type BindingRow } from "./binding-rows.js";

/*
 * Pool machines as agents get them (reference machines/pools.mdx): a machine row in `provisioning`, the
 * project grant that lets the project use it, and the agent's binding, made in one transaction. The
 * provider turns the row into a running machine later (lifecycle.ts); nothing here waits on it.
 */

export interface GrantedPool {
  pool: PoolRow;
  grant: PoolGrantRow;
}

/** The org's pool with this name, with the project's grant on it; undefined when either is missing. */
export async function grantedPool(tx: Tx, orgId: string, projectId: string, poolName: string): Promise<GrantedPool | undefined> {
  const [row] = await tx
    .select({ pool: machinePools, grant: projectMachinePoolGrants })
    .from(machinePools)
    .innerJoin(projectMachinePoolGrants, and(eq(projectMachinePoolGrants.machinePoolId, machinePools.id), eq(projectMachinePoolGrants.projectId, projectId)))
    .where(and(eq(machinePools.orgId, orgId), eq(machinePools.name, poolName)));
  return row;
}

/** Size and limits a source asks for, checked against what the pool and grant allow (reference: hard constraints). */
export function sourceLimitProblems(granted: GrantedPool, source: Pick<PoolMachineSourceDefinition, "machineCpu" | "machineMemoryMb" | "initialNumMachines" | "maxMachines">): Array<{ field: string; message: string }> {
  const capacity = effectiveCapacity(capacityOf(granted.pool), capacityOf(granted.grant));
  const problems: Array<{ field: string; message: string }> = [];
  if (source.initialNumMachines > source.maxMachines) problems.push({ field: "initial_num_machines", message: `must not exceed max_machines (${source.maxMachines})` });
  if (capacity.maxTotalMachines !== null && source.maxMachines > capacity.maxTotalMachines) {
    problems.push({ field: "max_machines", message: `must not exceed the ${capacity.maxTotalMachines} machines this project may have from the pool` });
  }
  const size = machineSize(capacity, source);
  for (const [field, value, min, max] of [
    ["machine_cpu", size.cpu, capacity.minMachineCpu, capacity.maxMachineCpu],
    ["machine_memory_mb", size.memoryMb, capacity.minMachineMemoryMb, capacity.maxMachineMemoryMb],
  ] as const) {
    if (value === null) continue;
    if (min !== null && value < min) problems.push({ field, message: `must be at least the pool's minimum (${min})` });
    if (max !== null && value > max) problems.push({ field, message: `must not exceed the pool's maximum (${max})` });
  }
  return problems;
}

function machineSize(capacity: Capacity, source: Pick<PoolMachineSourceDefinition, "machineCpu" | "machineMemoryMb">) {
  return { cpu: source.machineCpu ?? capacity.defaultMachineCpu, memoryMb: source.machineMemoryMb ?? capacity.defaultMachineMemoryMb };
}

/** `base` with each overlay over it in order; a null value removes the name (pool → grant → config). */
export function merged(base: Record<string, string>, ...overlays: EnvOverlay[]): Record<string, string> {
  const out = { ...base };
  for (const overlay of overlays) {
    for (const [name, value] of Object.entries(overlay)) {
      if (value === null) delete out[name];
      else out[name] = value;
    }
  }
  return out;
}

/** Pool → grant → config: unset inherits, 0 turns idle deletion off at that level; null means never. */
export function idlePeriod(pool: PoolRow, grant: PoolGrantRow, source: Pick<PoolMachineSourceDefinition, "deleteAfterIdleMinutes">): number | null {
  let minutes = pool.deleteAfterIdleMinutes;
  if (grant.deleteAfterIdleMinutes !== null) minutes = grant.deleteAfterIdleMinutes;
  if (source.deleteAfterIdleMinutes !== undefined) minutes = source.deleteAfterIdleMinutes;
  return minutes ? minutes : null;
}

/**
 * Makes one pool machine for the agent, within every limit: the pool's and the grant's machine counts and
 * totals, and the source's `max_machines` for this agent. The pool row is locked, so concurrent creations
 * count each other. Returns the binding, or why none could be made (for the model or a launch issue).
 */
export async function createPoolMachine(
  tx: Tx,
  agent: { id: string; orgId: string; projectId: string },
  source: PoolMachineSourceDefinition,
  createToolCallId: string | null,
): Promise<{ binding: BindingRow; machine: MachineRow } | { refused: string }> {
  const [pool] = await tx.select().from(machinePools).where(and(eq(machinePools.orgId, agent.orgId), eq(machinePools.id, source.poolId))).for("update");
  if (!pool) return { refused: `the machine pool "${source.poolName}" was deleted` };
  const [grant] = await tx
    .select()
    .from(projectMachinePoolGrants)
    .where(and(eq(projectMachinePoolGrants.projectId, agent.projectId), eq(projectMachinePoolGrants.machinePoolId, pool.id)));
  if (!grant) return { refused: `the machine pool "${source.poolName}" is no longer granted to this project` };
  const granted = { pool, grant };
  const problem = sourceLimitProblems(granted, source)[0];
  if (problem) return { refused: `${problem.field} ${problem.message}` };
  const capacity = effectiveCapacity(capacityOf(pool), capacityOf(grant));
  const size = machineSize(capacity, source);
  const refusal = await limitRefusal(tx, agent, granted, size, source);
  if (refusal) return { refused: refusal };
  const ref = machineRef();
  const machine = await insertMachine(tx, {
    id: newUuid(),
    orgId: agent.orgId,
    machinePoolId: pool.id,
    sourceKind: "pool",
    displayName: `${pool.name}-${ref.slice(5)}`,
    provider: pool.provider,
    lifecycleState: "provisioning",
    cwd: source.cwd || grant.defaultCwd || pool.defaultCwd,
    env: merged(pool.defaultMachineEnv, grant.defaultMachineEnvOverlay, source.envOverlay),
    secretEnv: merged(pool.defaultMachineSecretEnv, grant.defaultMachineSecretEnvOverlay, source.secretEnvOverlay),
    cpu: size.cpu,
    memoryMb: size.memoryMb,
    deleteAfterIdleMinutes: idlePeriod(pool, grant, source),
    createToolCallId,
  });
  await tx.insert(projectMachineGrants).values({ id: newUuid(), orgId: agent.orgId, projectId: agent.projectId, machineId: machine.id, sourceKind: "pool", projectMachinePoolGrantId: grant.id });
  const binding = await insertBinding(tx, agent, { id: machine.id, ref, kind: "pool" }, source);
  return { binding, machine };
}

/** The first limit one more machine of `size` would break, as a sentence; undefined when none. */
async function limitRefusal(
  tx: Tx,
  agent: { id: string; projectId: string },
  { pool, grant }: GrantedPool,
  size: { cpu: number | null; memoryMb: number | null },
  source: PoolMachineSourceDefinition,
): Promise<string | undefined> {
  const live = and(eq(machines.machinePoolId, pool.id), isNull(machines.deletedAt));
  const usage = (where: ReturnType<typeof and>) =>
    tx
      .select({ count: sql<number>`count(*)::int`, cpu: sql<number>`coalesce(sum(${machines.cpu}), 0)::int`, memoryMb: sql<number>`coalesce(sum(${machines.memoryMb}), 0)::int` })
      .from(machines)
      .where(where)
      .then((rows) => rows[0]!);
  const inPool = await usage(live);
  const inGrant = await usage(
    and(live, sql`EXISTS (SELECT 1 FROM ${projectMachineGrants} WHERE ${projectMachineGrants.machineId} = ${machines.id} AND ${projectMachineGrants.projectMachinePoolGrantId} = ${grant.id})`),
  );
  const [held] = await tx
    .select({ count: sql<number>`count(*)::int` })
    .from(agentMachineBindings)
    .innerJoin(machines, eq(machines.id, agentMachineBindings.machineId))
    .where(and(eq(agentMachineBindings.agentId, agent.id), eq(agentMachineBindings.state, "attached"), eq(agentMachineBindings.bindingKind, "pool"), live));
  if (held!.count >= source.maxMachines) return `this agent already holds ${held!.count} machine(s) from the pool "${pool.name}", its max_machines`;
  if (inPool.count >= pool.maxTotalMachines) return `the pool "${pool.name}" is at its limit of ${pool.maxTotalMachines} machines`;
  if (grant.maxTotalMachines !== null && inGrant.count >= grant.maxTotalMachines) return `this project is at its limit of ${grant.maxTotalMachines} machines from the pool "${pool.name}"`;
  const totals: Array<[string, number | null, number, number | null]> = [
    ["CPUs", size.cpu, inPool.cpu, pool.maxTotalCpu],
    ["MB of memory", size.memoryMb, inPool.memoryMb, pool.maxTotalMemoryMb],
    ["CPUs", size.cpu, inGrant.cpu, grant.maxTotalCpu ?? null],
    ["MB of memory", size.memoryMb, inGrant.memoryMb, grant.maxTotalMemoryMb ?? null],
  ];
  for (const [what, value, used, limit] of totals) {
    if (value !== null && limit !== null && used + value > limit) return `one more machine would exceed the limit of ${limit} ${what} (${used} in use)`;
  }
  return undefined;
}
