import { randomInt } from "node:crypto";
import { and, asc, eq, inArray } from "drizzle-orm";
import { agentMachineBindings, processes, projectMachineGrants } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { AgentSignals } from "../../runtime/signals.js";
import { abandonProcess } from "../../runtime/store/processes.js";
import type { Tx } from "../../platform/db/index.js";
import { AppError } from "../../platform/errors.js";
import { encodeId, newUuid } from "../../platform/ids.js";
import { iso } from "../../platform/http/schemas.js";
import type { AgentDefinition } from "../../runtime/definition.js";
import { findLiveByoMachineByName, type MachineRow } from "./store.js";

/*
 * Agent machine bindings: the machines an agent holds, made when it launches from its config's
 * `machine_sources`. Tools name a binding's machine; `machine_ref` (`mchr-…`) is the short name the
 * reference gives each binding.
 */

export type BindingRow = typeof agentMachineBindings.$inferSelect;

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

/**
 * Binds a launching agent to the machines of its config. Access is checked again: a machine deleted or
 * ungranted since the config was compiled fails the launch (400, with the source's path), so an agent never
 * starts without a machine its config promised.
 */
export async function bindMachines(tx: Tx, agent: { id: string; orgId: string; projectId: string }, definition: AgentDefinition): Promise<BindingRow[]> {
  const sources = definition.machineSources ?? [];
  const bindings: BindingRow[] = [];
  for (const [index, source] of sources.entries()) {
    const machine = await machineGrantedTo(tx, agent.orgId, agent.projectId, source.machineName);
    if (!machine || machine.id !== source.machineId) {
      throw new AppError("validation_failed", "a machine of the agent's config is no longer available to this project", {
        issues: [{ path: `/machine_sources/${index}/machine_name`, message: `machine "${source.machineName}" was deleted or is no longer granted to this project` }],
      });
    }
    const [binding] = await tx
      .insert(agentMachineBindings)
      .values({
        id: newUuid(),
        orgId: agent.orgId,
        projectId: agent.projectId,
        agentId: agent.id,
        machineId: machine.id,
        machineRef: machineRef(),
        bindingKind: "explicit",
        cwd: source.cwd,
        envOverlay: source.envOverlay,
      })
      .returning();
    bindings.push(binding!);
  }
  return bindings;
}

export async function listBindings(tx: Tx, agentId: string): Promise<BindingRow[]> {
  return tx.select().from(agentMachineBindings).where(eq(agentMachineBindings.agentId, agentId)).orderBy(asc(agentMachineBindings.createdAt));
}

/**
 * Releases attached bindings (an agent's, or a machine's, optionally only in one project) and abandons the
 * processes that ran through them: a call still waiting for one fails with `reason`.
 */
export async function releaseBindings(tx: Tx, signals: AgentSignals, of: { agentId: string } | { machineId: string; projectId?: string }, reason: string): Promise<void> {
  const released = await tx
    .update(agentMachineBindings)
    .set({ state: "released", updatedAt: dbNow })
    .where(
      and(
        eq(agentMachineBindings.state, "attached"),
        "agentId" in of ? eq(agentMachineBindings.agentId, of.agentId) : eq(agentMachineBindings.machineId, of.machineId),
        "projectId" in of && of.projectId ? eq(agentMachineBindings.projectId, of.projectId) : undefined,
      ),
    )
    .returning({ id: agentMachineBindings.id });
  if (released.length === 0) return;
  const live = await tx
    .select()
    .from(processes)
    .where(and(inArray(processes.bindingId, released.map((b) => b.id)), inArray(processes.state, ["queued", "starting", "running"])));
  for (const process of live) await abandonProcess(tx, signals, process, reason);
}

const REF_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";

/** `mchr-` and six base32 characters, unique per agent (the table's key catches the rare repeat). */
function machineRef(): string {
  let ref = "mchr-";
  for (let i = 0; i < 6; i++) ref += REF_ALPHABET[randomInt(REF_ALPHABET.length)];
  return ref;
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
    secret_env_overlay: binding.secretEnvOverlay,
    created_at: iso(binding.createdAt),
    updated_at: iso(binding.updatedAt),
  };
}
