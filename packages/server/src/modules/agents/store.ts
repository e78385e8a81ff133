import { and, desc, eq, sql, type SQL } from "drizzle-orm";
import { agentConfigs, agents } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { builtOnce } from "../../platform/db/prepared.js";
import { allOf, keyset, nameMatches, type PageRequest } from "../../platform/http/lists.js";
import { TtlCache } from "../../platform/ttl-cache.js";
import type { AgentRow } from "../../runtime/store/journal.js";

type Db = AppDb | Tx;

/** An agent with what its list item shows of its current config. */
export interface AgentWithModel {
  agent: AgentRow;
  providerConfig: string;
  modelName: string;
}

const modelColumns = {
  providerConfig: sql<string>`${agentConfigs.compiledDefinition} -> 'model' ->> 'providerConfigName'`,
  modelName: sql<string>`${agentConfigs.compiledDefinition} -> 'model' ->> 'name'`,
};

export async function insertAgent(tx: Db, row: typeof agents.$inferInsert): Promise<AgentRow> {
  const [agent] = await tx.insert(agents).values(row).returning();
  return agent!;
}

export async function findByIdempotencyKey(tx: Db, projectId: string, key: string): Promise<AgentRow | undefined> {
  const [agent] = await tx.select().from(agents).where(and(eq(agents.projectId, projectId), eq(agents.idempotencyKey, key)));
  return agent;
}

// Every agent the API shows reads it: built once (platform/db/prepared.ts).
const configModel = builtOnce((db) => db.select(modelColumns).from(agentConfigs).where(eq(agentConfigs.id, sql.placeholder("configId"))).prepare("svc_agent_config_model"));

/** Config rows never change once written, so what one names as its model is kept by config id. */
const modelOfConfig = new TtlCache<string, { providerConfig: string; modelName: string }>(Number.POSITIVE_INFINITY, 4096);

export async function withModel(tx: Db, agent: AgentRow): Promise<AgentWithModel> {
  const model = await modelOfConfig.readThrough(agent.currentConfigId, async () => {
    const [row] = await configModel(tx).execute({ configId: agent.currentConfigId });
    return row && { providerConfig: row.providerConfig ?? "", modelName: row.modelName ?? "" };
  });
  return { agent, providerConfig: model?.providerConfig ?? "", modelName: model?.modelName ?? "" };
}

export async function listActive(
  tx: Db,
  input: { orgId: string; projectId: string; name?: string; profileId?: string; page: PageRequest },
): Promise<AgentWithModel[]> {
  const ks = keyset(input.page.sort, { name: agents.name, created_at: agents.createdAt, updated_at: agents.updatedAt, id: agents.id }, input.page.cursor);
  const rows = await tx
    .select({ agent: agents, ...modelColumns })
    .from(agents)
    .innerJoin(agentConfigs, eq(agentConfigs.id, agents.currentConfigId))
    .where(
      allOf(
        eq(agents.orgId, input.orgId),
        eq(agents.projectId, input.projectId),
        eq(agents.state, "active"),
        nameMatches(agents.name, input.name),
        input.profileId ? eq(agents.agentProfileId, input.profileId) : undefined,
        ks.where,
      ),
    )
    .orderBy(...ks.orderBy)
    .limit(input.page.limit + 1);
  return rows;
}

/** The most recently updated active agents of the org among `projectIds` (a subquery), newest first. */
export async function listRecentActive(tx: Db, orgId: string, projectIds: SQL, limit: number): Promise<AgentWithModel[]> {
  return tx
    .select({ agent: agents, ...modelColumns })
    .from(agents)
    .innerJoin(agentConfigs, eq(agentConfigs.id, agents.currentConfigId))
    .where(and(eq(agents.orgId, orgId), eq(agents.state, "active"), sql`${agents.projectId} IN (${projectIds})`))
    .orderBy(desc(agents.updatedAt), desc(agents.id))
    .limit(limit);
}

export async function archive(tx: Db, agentId: string): Promise<AgentRow> {
  const [agent] = await tx.update(agents).set({ state: "archived", archivedAt: dbNow, updatedAt: dbNow }).where(eq(agents.id, agentId)).returning();
  return agent!;
}

/**
 * Whether an active agent's current config attaches the skill. Deleting a skill is rare, so this reads the
 * org's active agents' configs rather than keeping an index of config-to-skill references.
 */
export async function activeAgentAttachesSkill(tx: Db, orgId: string, skillId: string): Promise<boolean> {
  const [row] = await tx
    .select({ id: agents.id })
    .from(agents)
    .innerJoin(agentConfigs, and(eq(agentConfigs.orgId, agents.orgId), eq(agentConfigs.id, agents.currentConfigId)))
    .where(
      and(
        eq(agents.orgId, orgId),
        eq(agents.state, "active"),
        sql`${agentConfigs.compiledDefinition} -> 'skills' @> ${JSON.stringify([{ skillId }])}::jsonb`,
      ),
    )
    .limit(1);
  return row !== undefined;
}
