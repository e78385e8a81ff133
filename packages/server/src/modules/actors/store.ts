import { and, eq, sql, type SQL } from "drizzle-orm";
import { actors } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset, type PageRequest } from "../../platform/http/lists.js";
import { newUuid } from "../../platform/ids.js";
import type { ActorProvider } from "./schemas.js";

type Db = AppDb | Tx;
export type ActorRow = typeof actors.$inferSelect;

/** The key an actor is upserted by. An absent tenant is '' (see the column's comment). */
export interface ActorIdentity {
  orgId: string;
  projectId: string;
  provider: ActorProvider;
  tenant: string;
  providerUserId: string;
}

/** Attributes an upsert writes; an omitted one keeps its stored value. */
export interface ActorAttributes {
  displayName?: string;
  metadata?: Record<string, string>;
  userId?: string;
}

export interface ActorFilters {
  provider?: ActorProvider;
  tenant?: string;
  providerUserId?: string;
}

/**
 * Inserts the actor, or writes the given attributes over the stored ones. One INSERT … ON CONFLICT, so
 * two concurrent upserts of one identity both succeed (the second waits for the first and then takes
 * the conflict path). The update happens only when a given attribute differs, so an unchanged actor
 * keeps its updated_at; then nothing is written and nothing returned (read it with findActorByIdentity).
 */
export async function upsertActor(tx: Db, identity: ActorIdentity, attributes: ActorAttributes): Promise<ActorRow | undefined> {
  const target = [actors.projectId, actors.provider, actors.providerTenantId, actors.providerUserId];
  const values = {
    id: newUuid(),
    orgId: identity.orgId,
    projectId: identity.projectId,
    provider: identity.provider,
    providerTenantId: identity.tenant,
    providerUserId: identity.providerUserId,
    displayName: attributes.displayName ?? null,
    metadata: attributes.metadata ?? {},
    userId: attributes.userId ?? null,
  };
  const set: { displayName?: SQL; metadata?: SQL; userId?: SQL } = {};
  const changed: SQL[] = [];
  const overwrite = (property: "displayName" | "metadata" | "userId", column: string) => {
    set[property] = sql.raw(`excluded.${column}`);
    changed.push(sql`${actors[property]} IS DISTINCT FROM ${sql.raw(`excluded.${column}`)}`);
  };
  if (attributes.displayName !== undefined) overwrite("displayName", "display_name");
  if (attributes.metadata !== undefined) overwrite("metadata", "metadata");
  if (attributes.userId !== undefined) overwrite("userId", "user_id");
  const insert = tx.insert(actors).values(values);
  const [written] =
    changed.length === 0
      ? await insert.onConflictDoNothing({ target }).returning()
      : await insert.onConflictDoUpdate({ target, set: { ...set, updatedAt: dbNow }, setWhere: sql.join(changed, sql` OR `) }).returning();
  return written;
}

export async function findActorByIdentity(tx: Db, identity: ActorIdentity): Promise<ActorRow | undefined> {
  const [row] = await tx
    .select()
    .from(actors)
    .where(
      and(
        eq(actors.projectId, identity.projectId),
        eq(actors.provider, identity.provider),
        eq(actors.providerTenantId, identity.tenant),
        eq(actors.providerUserId, identity.providerUserId),
      ),
    );
  return row;
}

export async function findActor(tx: Db, orgId: string, projectId: string, actorId: string): Promise<ActorRow | undefined> {
  const [row] = await tx
    .select()
    .from(actors)
    .where(and(eq(actors.orgId, orgId), eq(actors.projectId, projectId), eq(actors.id, actorId)));
  return row;
}

/** One page of a project's actors, oldest first (created_at, then id), filtered exactly. */
export async function listActors(tx: Db, input: { orgId: string; projectId: string; filters: ActorFilters; page: PageRequest }): Promise<ActorRow[]> {
  const ks = keyset(input.page.sort, { created_at: actors.createdAt, id: actors.id }, input.page.cursor);
  const { provider, tenant, providerUserId } = input.filters;
  return tx
    .select()
    .from(actors)
    .where(
      allOf(
        eq(actors.orgId, input.orgId),
        eq(actors.projectId, input.projectId),
        provider !== undefined ? eq(actors.provider, provider) : undefined,
        tenant !== undefined ? eq(actors.providerTenantId, tenant) : undefined,
        providerUserId !== undefined ? eq(actors.providerUserId, providerUserId) : undefined,
        ks.where,
      ),
    )
    .orderBy(...ks.orderBy)
    .limit(input.page.limit + 1);
}
