import { randomInt } from "node:crypto";
import { sql } from "drizzle-orm";
import { agentConfigs, agentMachineBindings } from "../../db/schema/index.js";
import type { EnvOverlay } from "../../db/schema/machines.js";
import type { Tx } from "../../platform/db/index.js";
import { newUuid } from "../../platform/ids.js";

export type BindingRow = typeof agentMachineBindings.$inferSelect;

const REF_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";

/** `mchr-` and six base32 characters, unique per agent (the table's key catches the rare repeat). */
export function machineRef(): string {
  let ref = "mchr-";
  for (let i = 0; i < 6; i++) ref += REF_ALPHABET[randomInt(REF_ALPHABET.length)];
  return ref;
}

/** A config's `machine_sources`, one row per source as `sources(item)` (jsonb), for a FROM or JOIN beside `agent_configs`. */
export const configMachineSources = sql`jsonb_array_elements(coalesce(${agentConfigs.compiledDefinition} -> 'machineSources', '[]'::jsonb)) AS sources(item)`;

/** Binds a machine to an agent (attached) with the working directory and environment its source gives. */
export async function insertBinding(
  tx: Tx,
  agent: { id: string; orgId: string; projectId: string },
  machine: { id: string; ref: string; kind: "explicit" | "pool" },
  source: { cwd: string; envOverlay: EnvOverlay; secretEnvOverlay?: EnvOverlay },
): Promise<BindingRow> {
  const [binding] = await tx
    .insert(agentMachineBindings)
    .values({
      id: newUuid(),
      orgId: agent.orgId,
      projectId: agent.projectId,
      agentId: agent.id,
      machineId: machine.id,
      machineRef: machine.ref,
      bindingKind: machine.kind,
      cwd: source.cwd,
      envOverlay: source.envOverlay,
      secretEnvOverlay: source.secretEnvOverlay ?? {},
    })
    .returning();
  return binding!;
}
