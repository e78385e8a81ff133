import { and, eq, sql } from "drizzle-orm";
import type { PgInsertValue } from "drizzle-orm/pg-core";
import { configuredModelRevisions, configuredModels, modelProviderConfigs } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset } from "../../platform/http/lists.js";
import type { Page } from "./providers-store.js";

type Db = AppDb | Tx;
export type ModelRow = typeof configuredModels.$inferSelect;
export type RevisionRow = typeof configuredModelRevisions.$inferSelect;
/** A configured model as the API shows it: the model row and its current revision. */
export interface ModelWithRevision {
  model: ModelRow;
  revision: RevisionRow;
}

const m = configuredModels;
const r = configuredModelRevisions;
const sortColumns = { name: m.name, created_at: m.createdAt, updated_at: m.updatedAt, id: m.id };

export async function insertModel(tx: Db, row: PgInsertValue<typeof configuredModels>): Promise<ModelRow> {
  const [inserted] = await tx.insert(m).values(row).returning();
  return inserted!;
}

/** Points a new model at its first revision; part of creating it, so updated_at stays as created. */
export async function setFirstRevision(tx: Db, orgId: string, modelId: string, revisionId: string): Promise<ModelRow> {
  const [row] = await tx
    .update(m)
    .set({ currentRevisionId: revisionId })
    .where(and(eq(m.orgId, orgId), eq(m.id, modelId)))
    .returning();
  return row!;
}

export async function insertRevision(tx: Db, row: PgInsertValue<typeof configuredModelRevisions>): Promise<RevisionRow> {
  const [inserted] = await tx.insert(r).values(row).returning();
  return inserted!;
}

/** Points the model at a revision (and renames it when `name` is given); bumps updated_at. */
export async function updateModel(
  tx: Db,
  orgId: string,
  modelId: string,
  changes: { currentRevisionId?: string; name?: string },
): Promise<ModelRow> {
  const [row] = await tx
    .update(m)
    .set({ ...changes, updatedAt: dbNow })
    .where(and(eq(m.orgId, orgId), eq(m.id, modelId)))
    .returning();
  return row!;
}

/** The model under `providerId` with its current revision; `lock` takes a row lock on the model. */
export async function findModel(
  tx: Tx,
  orgId: string,
  providerId: string,
  modelId: string,
  lock?: "update" | "share",
): Promise<ModelWithRevision | undefined> {
  const query = tx
    .select({ model: m, revision: r })
    .from(m)
    .innerJoin(r, eq(r.id, m.currentRevisionId))
    .where(and(eq(m.orgId, orgId), eq(m.modelProviderConfigId, providerId), eq(m.id, modelId)));
  const [row] = lock ? await query.for(lock, { of: m }) : await query;
  return row;
}

/** A model of the org under any provider, with its revision and its provider's format, for grants. */
export async function findModelForGrant(
  tx: Tx,
  orgId: string,
  modelId: string,
): Promise<(ModelWithRevision & { apiFormat: string }) | undefined> {
  const [row] = await tx
    .select({ model: m, revision: r, apiFormat: modelProviderConfigs.apiFormat })
    .from(m)
    .innerJoin(r, eq(r.id, m.currentRevisionId))
    .innerJoin(modelProviderConfigs, eq(modelProviderConfigs.id, m.modelProviderConfigId))
    .where(and(eq(m.orgId, orgId), eq(m.id, modelId)))
    .for("share", { of: m });
  return row;
}

export async function findModelByName(tx: Db, providerId: string, name: string): Promise<ModelRow | undefined> {
  const [row] = await tx.select().from(m).where(and(eq(m.modelProviderConfigId, providerId), eq(m.name, name)));
  return row;
}

export async function hasModels(tx: Db, orgId: string, providerId: string): Promise<boolean> {
  const [row] = await tx
    .select({ one: sql<number>`1` })
    .from(m)
    .where(and(eq(m.orgId, orgId), eq(m.modelProviderConfigId, providerId)))
    .limit(1);
  return row !== undefined;
}

/** Deletes the model; its revisions go with it by cascade. */
export async function deleteModel(tx: Db, orgId: string, modelId: string): Promise<void> {
  await tx.delete(m).where(and(eq(m.orgId, orgId), eq(m.id, modelId)));
}

/** One page of a provider's models with their current revisions, newest first (`limit + 1` rows). */
export async function listModels(tx: Db, input: { orgId: string; providerId: string; page: Page }): Promise<ModelWithRevision[]> {
  const ks = keyset(input.page.sort, sortColumns, input.page.cursor);
  return tx
    .select({ model: m, revision: r })
    .from(m)
    .innerJoin(r, eq(r.id, m.currentRevisionId))
    .where(allOf(eq(m.orgId, input.orgId), eq(m.modelProviderConfigId, input.providerId), ks.where))
    .orderBy(...ks.orderBy)
    .limit(input.page.limit + 1);
}
