import { and, eq } from "drizzle-orm";
import { configuredModels, modelProviderConfigs, projectModelGrants } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset, nameMatches } from "../../platform/http/lists.js";
import { grantsStore } from "../grants/store.js";
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

/** The statements every kind of grant shares (modules/grants); a model grant is seen from its project's side. */
const grants = grantsStore(g, { subject: g.configuredModelId, project: g.projectId });

export const insertGrant = grants.insertGrant;
/** The project's grant, row-locked for the rest of the transaction. */
export const lockGrant = (tx: Tx, orgId: string, projectId: string, grantId: string) => grants.lockGrant(tx, orgId, { projectId }, grantId);
export const findGrantOfModel = (tx: Db, projectId: string, modelId: string) => grants.findGrantBetween(tx, modelId, projectId);
export const hasGrants = grants.isGranted;
export const deleteGrant = grants.deleteGrant;

export async function updateGrant(tx: Db, orgId: string, grantId: string, changes: GrantChanges): Promise<GrantRow> {
  const [row] = await tx
    .update(g)
    .set({ ...changes, updatedAt: dbNow })
    .where(and(eq(g.orgId, orgId), eq(g.id, grantId)))
    .returning();
  return row!;
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
