import { and, eq, inArray } from "drizzle-orm";
import type { PgInsertValue } from "drizzle-orm/pg-core";
import { agentConfigs } from "../../db/schema/index.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset, type PageRequest } from "../../platform/http/lists.js";

type Db = AppDb | Tx;
export type AgentConfigRow = typeof agentConfigs.$inferSelect;

/** What makes two configs the same one (the table's unique key). */
export interface ConfigIdentity {
  projectId: string;
  effectiveDefinitionHash: string;
  sourceFormat: string;
  sourceHash: string;
}

const t = agentConfigs;

export async function findConfig(tx: Db, orgId: string, projectId: string, configId: string): Promise<AgentConfigRow | undefined> {
  const [row] = await tx
    .select()
    .from(t)
    .where(and(eq(t.orgId, orgId), eq(t.projectId, projectId), eq(t.id, configId)));
  return row;
}

export async function findConfigs(tx: Db, orgId: string, projectId: string, configIds: readonly string[]): Promise<AgentConfigRow[]> {
  if (configIds.length === 0) return [];
  return tx
    .select()
    .from(t)
    .where(and(eq(t.orgId, orgId), eq(t.projectId, projectId), inArray(t.id, [...configIds])));
}

export async function findConfigByIdentity(tx: Db, identity: ConfigIdentity): Promise<AgentConfigRow | undefined> {
  const [row] = await tx
    .select()
    .from(t)
    .where(
      and(
        eq(t.projectId, identity.projectId),
        eq(t.effectiveDefinitionHash, identity.effectiveDefinitionHash),
        eq(t.sourceFormat, identity.sourceFormat),
        eq(t.sourceHash, identity.sourceHash),
      ),
    );
  return row;
}

/** Inserts the config unless its identity exists already (a concurrent twin); then returns undefined. */
export async function insertConfig(tx: Db, row: PgInsertValue<typeof agentConfigs>): Promise<AgentConfigRow | undefined> {
  const [inserted] = await tx
    .insert(t)
    .values(row)
    .onConflictDoNothing({ target: [t.projectId, t.effectiveDefinitionHash, t.sourceFormat, t.sourceHash] })
    .returning();
  return inserted;
}

/** One page of the project's configs in keyset order by creation (`limit + 1` rows). */
export async function listConfigs(tx: Db, orgId: string, projectId: string, page: PageRequest): Promise<AgentConfigRow[]> {
  const ks = keyset(page.sort, { created_at: t.createdAt, id: t.id }, page.cursor);
  return tx
    .select()
    .from(t)
    .where(allOf(eq(t.orgId, orgId), eq(t.projectId, projectId), ks.where))
    .orderBy(...ks.orderBy)
    .limit(page.limit + 1);
}
