import { and, eq, sql } from "drizzle-orm";
import { agents } from "../../db/schema/index.js";
import { settledValue, type AppDb, type Tx } from "../../platform/db/index.js";
import { builtOnce } from "../../platform/db/prepared.js";
import { notFound } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import { requireProject, type ProjectAccess } from "../orgs/access.js";
import type { AgentRow } from "../../runtime/store/journal.js";

// Every request under /agents/{agentID} runs it: built once (platform/db/prepared.ts).
const agentInProject = builtOnce((db) =>
  db
    .select()
    .from(agents)
    .where(and(eq(agents.orgId, sql.placeholder("orgId")), eq(agents.projectId, sql.placeholder("projectId")), eq(agents.id, sql.placeholder("agentId"))))
    .prepare("svc_agent_in_project"),
);

export interface AgentAccess extends ProjectAccess {
  agent: AgentRow;
}

/**
 * Authorization for everything under `/agents/{agentID}`: the project's rules (404 when it cannot be
 * read, 403 when the action is not allowed), then the agent must belong to the project (404).
 * Archived agents stay readable by id.
 */
export async function requireAgent(
  tx: Tx | AppDb,
  principal: Principal,
  orgId: string,
  projectId: string,
  agentId: string,
  action: "agent.read" | "agent.operate" = "agent.read",
): Promise<AgentAccess> {
  const access = await requireProject(tx, principal, orgId, projectId, action);
  const [agent] = await agentInProject(tx).execute({ orgId, projectId, agentId });
  if (!agent) throw notFound("agent");
  return { ...access, agent };
}

/**
 * `requireAgent`, with a read of the agent's own rows (`alongside`, given the agent's id) sent together
 * with the agent's lookup once the project may be read: one wait on the database instead of two. The
 * rows are returned only if the agent passes; otherwise its 404 is thrown and they are dropped.
 */
export async function requireAgentAlongside<T>(
  tx: Tx | AppDb,
  principal: Principal,
  orgId: string,
  projectId: string,
  agentId: string,
  action: "agent.read" | "agent.operate",
  alongside: (agentId: string) => Promise<T>,
): Promise<AgentAccess & { alongside: T }> {
  const access = await requireProject(tx, principal, orgId, projectId, action);
  const [found, read] = await Promise.allSettled([agentInProject(tx).execute({ orgId, projectId, agentId }), alongside(agentId)]);
  const [agent] = settledValue(found);
  if (!agent) throw notFound("agent");
  return { ...access, agent, alongside: settledValue(read) };
}
