import { and, desc, eq, sql, type SQL } from "drizzle-orm";
import type { PgInsertValue } from "drizzle-orm/pg-core";
import { agentConfigs, agentProfiles, agentProfileVersions } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset, nameMatches, type PageRequest } from "../../platform/http/lists.js";

type Db = AppDb | Tx;
export type ProfileRow = typeof agentProfiles.$inferSelect;

const p = agentProfiles;
const v = agentProfileVersions;
const sortColumns = { name: p.name, created_at: p.createdAt, updated_at: p.updatedAt, id: p.id };

/** Inserts the profile unless its Idempotency-Key was used in the project already; then returns undefined. */
/**
 * Inserts the profile unless another with its name or Idempotency-Key exists (or commits first). With no
 * conflict target, PostgreSQL waits for a racing insert of either and then skips: naming only the key
 * would let the name index raise while the racer with the same key was still in flight.
 */
export async function insertProfile(tx: Db, row: PgInsertValue<typeof agentProfiles>): Promise<ProfileRow | undefined> {
  const [inserted] = await tx.insert(p).values(row).onConflictDoNothing().returning();
  return inserted;
}

export async function insertVersion(tx: Db, row: PgInsertValue<typeof agentProfileVersions>): Promise<void> {
  await tx.insert(v).values(row);
}

/**
 * The project's profile. `update` serializes changes to it; `key share` only keeps it from being deleted
 * (or its id changed) until the transaction ends, without blocking config updates.
 */
export async function findProfile(
  tx: Tx,
  orgId: string,
  projectId: string,
  profileId: string,
  lock?: "update" | "key share",
): Promise<ProfileRow | undefined> {
  const query = tx
    .select()
    .from(p)
    .where(and(eq(p.orgId, orgId), eq(p.projectId, projectId), eq(p.id, profileId)));
  const [row] = lock ? await query.for(lock) : await query;
  return row;
}

export async function findProfileByIdempotencyKey(tx: Db, projectId: string, key: string): Promise<ProfileRow | undefined> {
  const [row] = await tx.select().from(p).where(and(eq(p.projectId, projectId), eq(p.idempotencyKey, key)));
  return row;
}

export async function findProfileByName(tx: Db, projectId: string, name: string): Promise<ProfileRow | undefined> {
  const [row] = await tx.select().from(p).where(and(eq(p.projectId, projectId), eq(p.name, name)));
  return row;
}

/** The config a profile started with: what its creation request named. */
export async function firstConfigId(tx: Db, profileId: string): Promise<string | undefined> {
  const [row] = await tx
    .select({ configId: v.agentConfigId })
    .from(v)
    .where(and(eq(v.agentProfileId, profileId), eq(v.generation, 1)));
  return row?.configId;
}

/** The members of a profile its PATCH changes. */
export interface ProfileFields {
  name?: string;
  description?: string;
  mcpTool?: boolean;
}

export async function updateProfile(
  tx: Db,
  orgId: string,
  profileId: string,
  changes: ProfileFields | { currentConfigId: string; currentGeneration: number },
): Promise<ProfileRow> {
  const [row] = await tx
    .update(p)
    .set({ ...changes, updatedAt: dbNow })
    .where(and(eq(p.orgId, orgId), eq(p.id, profileId)))
    .returning();
  return row!;
}

/** The project's profiles offered as MCP tools, by name (code point order), at most `limit`. */
export async function listMcpToolProfiles(db: Db, orgId: string, projectId: string, limit: number): Promise<ProfileRow[]> {
  return db
    .select()
    .from(p)
    .where(and(eq(p.orgId, orgId), eq(p.projectId, projectId), eq(p.mcpTool, true)))
    .orderBy(sql`${p.name} COLLATE "C"`, p.id)
    .limit(limit);
}

/** Deletes the profile and, by cascade, its versions; agents launched from it keep running. False when absent. */
export async function deleteProfile(tx: Db, orgId: string, projectId: string, profileId: string): Promise<boolean> {
  const deleted = await tx
    .delete(p)
    .where(and(eq(p.orgId, orgId), eq(p.projectId, projectId), eq(p.id, profileId)))
    .returning({ id: p.id });
  return deleted.length > 0;
}

/** One page of the project's profiles, filtered by name, in keyset order (`limit + 1` rows). */
export async function listProfiles(tx: Db, input: { orgId: string; projectId: string; name?: string; page: PageRequest }): Promise<ProfileRow[]> {
  const ks = keyset(input.page.sort, sortColumns, input.page.cursor);
  return tx
    .select()
    .from(p)
    .where(allOf(eq(p.orgId, input.orgId), eq(p.projectId, input.projectId), nameMatches(p.name, input.name), ks.where))
    .orderBy(...ks.orderBy)
    .limit(input.page.limit + 1);
}

/** The most recently updated profiles of the org among `projectIds` (a subquery), newest first, with their current configs. */
export async function listRecent(tx: Db, orgId: string, projectIds: SQL, limit: number) {
  return tx
    .select({ profile: p, config: agentConfigs })
    .from(p)
    .innerJoin(agentConfigs, and(eq(agentConfigs.orgId, p.orgId), eq(agentConfigs.id, p.currentConfigId)))
    .where(and(eq(p.orgId, orgId), sql`${p.projectId} IN (${projectIds})`))
    .orderBy(desc(p.updatedAt), desc(p.id))
    .limit(limit);
}

/** Up to `limit` names of the project's profiles whose current config attaches the memory store. */
export async function profilesAttachingMemoryStore(tx: Db, orgId: string, projectId: string, storeId: string, limit: number): Promise<string[]> {
  const rows = await tx
    .select({ name: p.name })
    .from(p)
    .innerJoin(agentConfigs, and(eq(agentConfigs.orgId, p.orgId), eq(agentConfigs.id, p.currentConfigId)))
    .where(and(eq(p.orgId, orgId), eq(p.projectId, projectId), sql`${agentConfigs.compiledDefinition} -> 'memory' @> ${JSON.stringify([{ storeId }])}::jsonb`))
    .orderBy(p.name)
    .limit(limit);
  return rows.map((row) => row.name);
}
