import { and, desc, eq, getTableColumns, inArray, sql, type SQL } from "drizzle-orm";
import { agentConfigs, agents } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { builtOnce } from "../../platform/db/prepared.js";
import { allOf, keyset, nameMatches, type PageRequest } from "../../platform/http/lists.js";
import { TtlCache } from "../../platform/ttl-cache.js";
import type { AgentRow } from "../../runtime/store/journal.js";
import { notifyIn } from "../../runtime/signals.js";
import { activityFacts, activityStatusOf, type ActivityFacts, type ActivityStatus } from "./activity.js";

type Db = AppDb | Tx;

/** An agent with what its list item shows of its current config, and what it is doing now (activity.ts). */
export interface AgentWithModel {
  agent: AgentRow;
  providerConfig: string;
  modelName: string;
  activity: ActivityFacts;
}

/** The activity of the `agents` row a statement selects. */
const activityColumn = activityFacts({ id: sql`${agents.id}`, state: sql`${agents.state}`, archivedAt: sql`${agents.archivedAt}`, updatedAt: sql`${agents.updatedAt}` });

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
  // The activity of one agent read by id (GET, launch, archive): one statement beside the agent's own read.
  const [row] = await tx.select({ activity: activityColumn }).from(agents).where(eq(agents.id, agent.id));
  return { agent, providerConfig: model?.providerConfig ?? "", modelName: model?.modelName ?? "", activity: row!.activity };
}

/**
 * The project's agents of one state (active unless asked), optionally only those whose activity is one
 * of `activity`; each with its activity, computed in the same statement.
 */
export async function listAgents(
  tx: Db,
  input: { orgId: string; projectId: string; name?: string; profileId?: string; parentAgentId?: string; state?: "active" | "archived"; activity?: ActivityStatus[]; page: PageRequest },
): Promise<AgentWithModel[]> {
  const ks = keyset(input.page.sort, { name: agents.name, created_at: agents.createdAt, updated_at: agents.updatedAt, id: agents.id }, input.page.cursor);
  const rows = await tx
    .select({ agent: agents, ...modelColumns, activity: activityColumn })
    .from(agents)
    .innerJoin(agentConfigs, eq(agentConfigs.id, agents.currentConfigId))
    .where(
      allOf(
        eq(agents.orgId, input.orgId),
        eq(agents.projectId, input.projectId),
        eq(agents.state, input.state ?? "active"),
        nameMatches(agents.name, input.name),
        input.profileId ? eq(agents.agentProfileId, input.profileId) : undefined,
        input.parentAgentId ? eq(agents.parentAgentId, input.parentAgentId) : undefined,
        input.activity && input.activity.length > 0 ? inArray(activityStatusOf(activityColumn), input.activity) : undefined,
        ks.where,
      ),
    )
    .orderBy(...ks.orderBy)
    .limit(input.page.limit + 1);
  return rows;
}

/** The agents among `ids` that belong to one of `projectIds`, with their activity (the project activity stream). */
export async function agentsInProjects(tx: Db, projectIds: string[], ids: string[]): Promise<AgentWithModel[]> {
  return tx
    .select({ agent: agents, ...modelColumns, activity: activityColumn })
    .from(agents)
    .innerJoin(agentConfigs, eq(agentConfigs.id, agents.currentConfigId))
    .where(and(inArray(agents.id, ids), inArray(agents.projectId, projectIds)));
}

/** The most recently updated active agents of the org among `projectIds` (a subquery), newest first. */
export async function listRecentActive(tx: Db, orgId: string, projectIds: SQL, limit: number): Promise<AgentWithModel[]> {
  return tx
    .select({ agent: agents, ...modelColumns, activity: activityColumn })
    .from(agents)
    .innerJoin(agentConfigs, eq(agentConfigs.id, agents.currentConfigId))
    .where(and(eq(agents.orgId, orgId), eq(agents.state, "active"), sql`${agents.projectId} IN (${projectIds})`))
    .orderBy(desc(agents.updatedAt), desc(agents.id))
    .limit(limit);
}

/** Archives the agent, with a hint on its events channel so that its project's activity streams show it at once. */
export async function archive(tx: Db, agentId: string): Promise<AgentRow> {
  const [row] = await tx
    .update(agents)
    .set({ state: "archived", archivedAt: dbNow, updatedAt: dbNow })
    .where(eq(agents.id, agentId))
    .returning({ ...getTableColumns(agents), hinted: notifyIn.events(agentId) });
  const { hinted: _, ...agent } = row!;
  return agent;
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

/** A coordinator's active children (docs/delegation.md), oldest first: cancel and archive cascade to them. */
export async function activeChildIds(tx: Db, parentAgentId: string): Promise<string[]> {
  const rows = await tx
    .select({ id: agents.id })
    .from(agents)
    .where(and(eq(agents.parentAgentId, parentAgentId), eq(agents.state, "active")))
    .orderBy(agents.createdAt, agents.id);
  return rows.map((row) => row.id);
}

/**
 * Up to `limit` active agents whose current config attaches the memory store (the `memory` section): a
 * store they use cannot be deleted. Read like activeAgentAttachesSkill, with no index of references.
 */
export async function activeAgentsAttachingMemoryStore(tx: Db, orgId: string, projectId: string, storeId: string, limit: number): Promise<string[]> {
  const rows = await tx
    .select({ id: agents.id })
    .from(agents)
    .innerJoin(agentConfigs, and(eq(agentConfigs.orgId, agents.orgId), eq(agentConfigs.id, agents.currentConfigId)))
    .where(
      and(
        eq(agents.orgId, orgId),
        eq(agents.projectId, projectId),
        eq(agents.state, "active"),
        sql`${agentConfigs.compiledDefinition} -> 'memory' @> ${JSON.stringify([{ storeId }])}::jsonb`,
      ),
    )
    .limit(limit);
  return rows.map((row) => row.id);
}
