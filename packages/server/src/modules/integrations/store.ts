import { and, eq, sql, type SQL } from "drizzle-orm";
import type { PgInsertValue } from "drizzle-orm/pg-core";
import { integrationOAuthFlows, integrations } from "../../db/schema/index.js";
import { dbNow, dbSecondsFromNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset, nameMatches, type PageRequest } from "../../platform/http/lists.js";

type Db = AppDb | Tx;
export type IntegrationRow = typeof integrations.$inferSelect;
export type OAuthFlowRow = typeof integrationOAuthFlows.$inferSelect;

const i = integrations;
const f = integrationOAuthFlows;
const sortColumns = { name: i.name, created_at: i.createdAt, updated_at: i.updatedAt, id: i.id };

/** Inserts the integration unless its name is taken in the project (or a racing insert takes it first): then undefined. */
export async function insertIntegration(tx: Db, row: PgInsertValue<typeof integrations>): Promise<IntegrationRow | undefined> {
  const [inserted] = await tx.insert(i).values(row).onConflictDoNothing().returning();
  return inserted;
}

export async function findIntegration(tx: Tx, orgId: string, projectId: string, integrationId: string, lock?: "update"): Promise<IntegrationRow | undefined> {
  const query = tx
    .select()
    .from(i)
    .where(and(eq(i.orgId, orgId), eq(i.projectId, projectId), eq(i.id, integrationId)));
  const [row] = lock ? await query.for(lock) : await query;
  return row;
}

/** One page of the org's integrations in `projects` (one project id, or a subquery of them), in keyset order (`limit + 1` rows). */
export async function listIntegrations(tx: Db, input: { orgId: string; projects: string | SQL; name?: string; page: PageRequest }): Promise<IntegrationRow[]> {
  const inProjects = typeof input.projects === "string" ? eq(i.projectId, input.projects) : sql`${i.projectId} IN (${input.projects})`;
  const ks = keyset(input.page.sort, sortColumns, input.page.cursor);
  return tx
    .select()
    .from(i)
    .where(allOf(eq(i.orgId, input.orgId), inProjects, nameMatches(i.name, input.name), ks.where))
    .orderBy(...ks.orderBy)
    .limit(input.page.limit + 1);
}

export type IntegrationChanges = Partial<
  Pick<
    IntegrationRow,
    | "settings"
    | "state"
    | "providerTenantId"
    | "providerAccountRef"
    | "providerAgentDisplayName"
    | "botMention"
    | "credentialSecretId"
    | "providerConfig"
    | "providerIdentity"
    | "lastOAuthFlowId"
  >
>;

/**
 * Writes `changes`; `newRevision` also bumps setup_revision and clears the recorded runtime failure (a
 * new setup is a new attempt). Settings-only edits never pass it (spec: Integration state).
 */
export async function updateIntegration(tx: Tx, orgId: string, integrationId: string, changes: IntegrationChanges, newRevision: boolean): Promise<IntegrationRow> {
  const revision = newRevision
    ? { setupRevision: sql`${i.setupRevision} + 1`, runtimeFailureMessage: null, runtimeFailureRetryAt: null }
    : {};
  const [row] = await tx
    .update(i)
    .set({ ...changes, ...revision, updatedAt: dbNow })
    .where(and(eq(i.orgId, orgId), eq(i.id, integrationId)))
    .returning();
  return row!;
}

/** Deletes the integration; subscriptions and OAuth flows go with it (cascade). False when absent. */
export async function deleteIntegration(tx: Tx, orgId: string, projectId: string, integrationId: string): Promise<boolean> {
  const deleted = await tx
    .delete(i)
    .where(and(eq(i.orgId, orgId), eq(i.projectId, projectId), eq(i.id, integrationId)))
    .returning({ id: i.id });
  return deleted.length > 0;
}

export async function insertOAuthFlow(tx: Tx, row: Omit<PgInsertValue<typeof integrationOAuthFlows>, "expiresAt">, ttlSeconds: number): Promise<OAuthFlowRow> {
  const [flow] = await tx
    .insert(f)
    .values({ ...row, expiresAt: dbSecondsFromNow(ttlSeconds) })
    .returning();
  return flow!;
}

/** The flow while it can still be redeemed: not used, not expired by the database clock. */
export async function findOpenOAuthFlow(tx: Db, flowId: string): Promise<OAuthFlowRow | undefined> {
  const [row] = await tx
    .select()
    .from(f)
    .where(and(eq(f.id, flowId), sql`${f.consumedAt} IS NULL`, sql`${f.expiresAt} > ${dbNow}`));
  return row;
}

/** Marks the flow used, once: false when it was used or expired meanwhile. */
export async function consumeOAuthFlow(tx: Tx, flowId: string): Promise<boolean> {
  const used = await tx
    .update(f)
    .set({ consumedAt: dbNow })
    .where(and(eq(f.id, flowId), sql`${f.consumedAt} IS NULL`, sql`${f.expiresAt} > ${dbNow}`))
    .returning({ id: f.id });
  return used.length > 0;
}

/** The integration an OAuth flow belongs to, found by id alone (the callback knows no path). */
export async function findIntegrationById(tx: Tx, orgId: string, integrationId: string): Promise<IntegrationRow | undefined> {
  const [row] = await tx
    .select()
    .from(i)
    .where(and(eq(i.orgId, orgId), eq(i.id, integrationId)));
  return row;
}
