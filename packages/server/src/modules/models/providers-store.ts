import { and, eq } from "drizzle-orm";
import type { PgInsertValue } from "drizzle-orm/pg-core";
import { modelProviderConfigs } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset, nameMatches, type PageRequest } from "../../platform/http/lists.js";

type Db = AppDb | Tx;
export type ProviderRow = typeof modelProviderConfigs.$inferSelect;

export type Page = PageRequest;

export type ProviderChanges = Partial<
  Pick<ProviderRow, "baseUrl" | "endpointPath" | "requestTimeoutMs" | "authKind" | "authHeaderName" | "credentialSecretId">
>;

const t = modelProviderConfigs;
const sortColumns = { name: t.name, created_at: t.createdAt, updated_at: t.updatedAt, id: t.id };

export async function insertProvider(tx: Db, row: PgInsertValue<typeof modelProviderConfigs>): Promise<ProviderRow> {
  const [inserted] = await tx.insert(t).values(row).returning();
  return inserted!;
}

export async function findProvider(tx: Db, orgId: string, providerId: string): Promise<ProviderRow | undefined> {
  const [row] = await tx.select().from(t).where(and(eq(t.orgId, orgId), eq(t.id, providerId)));
  return row;
}

/**
 * Locks the provider config: `update` for changes to it and its deletion, `share` while a configured
 * model is added under it, so a model never lands under a provider being deleted.
 */
export async function lockProvider(tx: Tx, orgId: string, providerId: string, mode: "update" | "share"): Promise<ProviderRow | undefined> {
  const [row] = await tx
    .select()
    .from(t)
    .where(and(eq(t.orgId, orgId), eq(t.id, providerId)))
    .for(mode);
  return row;
}

export async function findProviderByName(tx: Db, orgId: string, name: string): Promise<ProviderRow | undefined> {
  const [row] = await tx.select().from(t).where(and(eq(t.orgId, orgId), eq(t.name, name)));
  return row;
}

export async function updateProvider(tx: Db, orgId: string, providerId: string, changes: ProviderChanges): Promise<ProviderRow> {
  const [row] = await tx
    .update(t)
    .set({ ...changes, updatedAt: dbNow })
    .where(and(eq(t.orgId, orgId), eq(t.id, providerId)))
    .returning();
  return row!;
}

export async function deleteProvider(tx: Db, orgId: string, providerId: string): Promise<void> {
  await tx.delete(t).where(and(eq(t.orgId, orgId), eq(t.id, providerId)));
}

/** One page of the org's provider configs, filtered by name, in keyset order (`limit + 1` rows). */
export async function listProviders(tx: Db, input: { orgId: string; name?: string; page: Page }): Promise<ProviderRow[]> {
  const ks = keyset(input.page.sort, sortColumns, input.page.cursor);
  return tx
    .select()
    .from(t)
    .where(allOf(eq(t.orgId, input.orgId), nameMatches(t.name, input.name), ks.where))
    .orderBy(...ks.orderBy)
    .limit(input.page.limit + 1);
}
