import { and, eq, isNull, sql } from "drizzle-orm";
import { agentConfigs, agentMachineBindings, agents, machines, projectMachineGrants } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { Database, Tx } from "../../platform/db/index.js";
import type { MaintenanceTask } from "../../maintenance.js";
import type { ByoMachineSourceDefinition } from "../../runtime/definition.js";
import { lockAgent } from "../../runtime/store/journal.js";
import { configMachineSources, insertBinding, machineRef } from "./binding-rows.js";
import { releaseBindings } from "./bindings.js";

const BATCH = 100;

/**
 * Maintenance task: an active agent's BYO machine bindings follow its current config's `machine_sources`
 * once a config change has taken effect, as they were made from it at launch (reference
 * agents/configuration.mdx "Machines"). A machine the config no longer lists is released, and the
 * processes that ran through it are abandoned, as when its grant is revoked; a machine it now lists is
 * bound, if it is still live and granted to the agent's project (a config is checked when it is compiled;
 * a grant revoked since leaves the machine unbound until it is granted again); a machine it still lists
 * takes the source's working directory and environment for the processes started from then on. Pool
 * machines follow the config through the pool-machines tasks (lifecycle.ts).
 */
export function byoBindingsFollowConfig(db: Database): MaintenanceTask {
  return {
    name: "machine-bindings-follow-config",
    run: async () => (await releaseUnlisted(db)) + (await bindListed(db)) + (await updateChanged(db)),
  };
}

/** The active agent's current config's BYO source for `machineId` (an SQL `jsonb` or no row). */
const sourceFor = (machineId: unknown) => sql`(SELECT sources.item FROM ${agentConfigs}
  CROSS JOIN LATERAL ${configMachineSources}
  WHERE ${agentConfigs.id} = ${agents.currentConfigId} AND sources.item ->> 'kind' = 'machine' AND sources.item ->> 'machineId' = ${machineId}::text
  LIMIT 1)`;

async function releaseUnlisted(db: Database): Promise<number> {
  const rows = await db.read
    .select({ bindingId: agentMachineBindings.id })
    .from(agentMachineBindings)
    .innerJoin(agents, eq(agents.id, agentMachineBindings.agentId))
    .where(
      and(
        eq(agentMachineBindings.state, "attached"),
        eq(agentMachineBindings.bindingKind, "explicit"),
        eq(agents.state, "active"),
        sql`${sourceFor(agentMachineBindings.machineId)} IS NULL`,
      ),
    )
    .limit(BATCH);
  for (const row of rows) {
    await db.tx((tx) => releaseBindings(tx, { bindingId: row.bindingId }, "released: the agent's config no longer lists the machine."));
  }
  return rows.length;
}

async function bindListed(db: Database): Promise<number> {
  const rows = await db.read
    .select({ agentId: agents.id, orgId: agents.orgId, projectId: agents.projectId, machineId: machines.id, source: sql<ByoMachineSourceDefinition>`sources.item` })
    .from(agents)
    .innerJoin(agentConfigs, eq(agentConfigs.id, agents.currentConfigId))
    .innerJoin(configMachineSources, sql`sources.item ->> 'kind' = 'machine'`)
    .innerJoin(machines, and(sql`${machines.id}::text = sources.item ->> 'machineId'`, eq(machines.orgId, agents.orgId), eq(machines.sourceKind, "byo"), isNull(machines.deletedAt)))
    .innerJoin(projectMachineGrants, and(eq(projectMachineGrants.projectId, agents.projectId), eq(projectMachineGrants.machineId, machines.id)))
    .where(
      and(
        eq(agents.state, "active"),
        sql`NOT EXISTS (SELECT 1 FROM ${agentMachineBindings} WHERE ${agentMachineBindings.agentId} = ${agents.id}
          AND ${agentMachineBindings.machineId} = ${machines.id} AND ${agentMachineBindings.state} = 'attached')`,
      ),
    )
    .limit(BATCH);
  for (const row of rows) {
    await db.tx((tx) => bindOnce(tx, row));
  }
  return rows.length;
}

type BindRow = { agentId: string; orgId: string; projectId: string; machineId: string; source: ByoMachineSourceDefinition };

/** Binds under the agent's row lock, again only if the agent is active and the machine still unbound. */
async function bindOnce(tx: Tx, row: BindRow): Promise<void> {
  const agent = await lockAgent(tx, row.agentId);
  if (agent?.state !== "active") return;
  const [held] = await tx
    .select({ id: agentMachineBindings.id })
    .from(agentMachineBindings)
    .where(and(eq(agentMachineBindings.agentId, row.agentId), eq(agentMachineBindings.machineId, row.machineId), eq(agentMachineBindings.state, "attached")));
  if (held) return;
  await insertBinding(tx, { id: row.agentId, orgId: row.orgId, projectId: row.projectId }, { id: row.machineId, ref: machineRef(), kind: "explicit" }, row.source);
}

/** One statement: attached BYO bindings whose listed source now gives another working directory or environment. */
async function updateChanged(db: Database): Promise<number> {
  const source = sourceFor(agentMachineBindings.machineId);
  return db.tx(async (tx) => {
    const updated = await tx
      .update(agentMachineBindings)
      .set({
        cwd: sql`${source} ->> 'cwd'`,
        envOverlay: sql`${source} -> 'envOverlay'`,
        secretEnvOverlay: sql`coalesce(${source} -> 'secretEnvOverlay', '{}'::jsonb)`,
        updatedAt: dbNow,
      })
      .from(agents)
      .where(
        and(
          eq(agents.id, agentMachineBindings.agentId),
          eq(agents.state, "active"),
          eq(agentMachineBindings.state, "attached"),
          eq(agentMachineBindings.bindingKind, "explicit"),
          sql`${source} IS NOT NULL`,
          sql`(${agentMachineBindings.cwd} IS DISTINCT FROM ${source} ->> 'cwd'
            OR ${agentMachineBindings.envOverlay} IS DISTINCT FROM ${source} -> 'envOverlay'
            OR ${agentMachineBindings.secretEnvOverlay} IS DISTINCT FROM coalesce(${source} -> 'secretEnvOverlay', '{}'::jsonb))`,
        ),
      )
      .returning({ id: agentMachineBindings.id });
    return updated.length;
  });
}
