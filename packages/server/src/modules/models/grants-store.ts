import { and, eq, sql } from "drizzle-orm";
import type { PgInsertValue } from "drizzle-orm/pg-core";
import { configuredModels, modelProviderConfigs, projectModelGrants } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset, nameMatches } from "../../platform/http/lists.js";
import type { ModelRow } from "./configured-store.js";
import type { Page } from "./providers-store.js";

type Db = AppDb | Tx;
export type GrantRow = typeof projectModelGrants.$inferSelect;
export type GrantChanges = Partial<Omit<GrantRow, "id" | "orgId" | "projectId" | "configuredModelId" | "createdAt" | "updatedAt">>;
/** A grant with the model it grants and the name of that model's provider config. */
export interface GrantListRow {
  grant: GrantRow;
  model: ModelRow;
  providerName: string;
}

const g = projectModelGrants;
const m = configuredModels;

export async function insertGrant(tx: Db, row: PgInsertValue<typeof projectModelGrants>): Promise<GrantRow> {
  const [inserted] = await tx.insert(g).values(row).returning();
  return inserted!;
}

/** The project's grant, row-locked for the rest of the transaction. */
export async function lockGrant(tx: Tx, orgId: string, projectId: string, grantId: string): Promise<GrantRow | undefined> {
  const [row] = await tx
    .select()
    .from(g)
    .where(and(eq(g.orgId, orgId), eq(g.projectId, projectId), eq(g.id, grantId)))
    .for("update");
  return row;
}

export async function findGrantOfModel(tx: Db, projectId: string, modelId: string): Promise<GrantRow | undefined> {
  const [row] = await tx.select().from(g).where(and(eq(g.projectId, projectId), eq(g.configuredModelId, modelId)));
  return row;
}

export async function hasGrants(tx: Db, orgId: string, modelId: string): Promise<boolean> {
  const [row] = await tx
    .select({ one: sql<number>`1` })
    .from(g)
    .where(and(eq(g.orgId, orgId), eq(g.configuredModelId, modelId)))
    .limit(1);
  return row !== undefined;
}

export async function updateGrant(tx: Db, orgId: string, grantId: string, changes: GrantChanges): Promise<GrantRow> {
  const [row] = await tx
    .update(g)
    .set({ ...changes, updatedAt: dbNow })
    .where(and(eq(g.orgId, orgId), eq(g.id, grantId)))
    .returning();
  return row!;
}

export async function deleteGrant(tx: Db, orgId: string, grantId: string): Promise<void> {
  await tx.delete(g).where(and(eq(g.orgId, orgId), eq(g.id, grantId)));
}

/**
 * One page of the project's grants with their models, in keyset order. `name` filters and sorts by the
 * model's name; the timestamps are the grant's.
 */
export async function listGrants(tx: Db, input: { orgId: string; projectId: string; name?: string; page: Page }): Promise<GrantListRow[]> {
  const ks = keyset(input.page.sort, { name: m.name, created_at: g.createdAt, updated_at: g.updatedAt, id: g.id }, input.page.cursor);
  return tx
    .select({ grant: g, model: m, providerName: modelProviderConfigs.name })
    .from(g)
    .innerJoin(m, and(eq(m.orgId, g.orgId), eq(m.id, g.configuredModelId)))
    .innerJoin(modelProviderConfigs, and(eq(modelProviderConfigs.orgId, m.orgId), eq(modelProviderConfigs.id, m.modelProviderConfigId)))
    .where(allOf(eq(g.orgId, input.orgId), eq(g.projectId, input.projectId), nameMatches(m.name, input.name), ks.where))
    .orderBy(...ks.orderBy)
    .limit(input.page.limit + 1);
}
