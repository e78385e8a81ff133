import { and, eq, isNull, sql } from "drizzle-orm";
import type { PgInsertValue } from "drizzle-orm/pg-core";
import { orgApiKeys } from "../../db/schema/index.js";
import { dbNow, unsetOrOlderThan } from "../../db/schema/columns.js";
import { TOKEN_TOUCH_SECONDS } from "../../platform/crypto/tokens.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset, type Sort } from "../../platform/http/lists.js";

type Db = AppDb | Tx;
export type OrgApiKeyRow = typeof orgApiKeys.$inferSelect;

export async function insertKey(tx: Db, row: PgInsertValue<typeof orgApiKeys>): Promise<OrgApiKeyRow> {
  const [key] = await tx.insert(orgApiKeys).values(row).returning();
  return key!;
}

export async function findKey(tx: Db, orgId: string, keyId: string): Promise<OrgApiKeyRow | undefined> {
  const [key] = await tx.select().from(orgApiKeys).where(and(eq(orgApiKeys.orgId, orgId), eq(orgApiKeys.id, keyId)));
  return key;
}

export async function findActiveKeyByName(tx: Db, orgId: string, name: string): Promise<OrgApiKeyRow | undefined> {
  const [key] = await tx
    .select()
    .from(orgApiKeys)
    .where(and(eq(orgApiKeys.orgId, orgId), eq(orgApiKeys.name, name), isNull(orgApiKeys.revokedAt)));
  return key;
}

/** Every key of the org, revoked ones included. */
export async function listKeys(tx: Db, orgId: string, page: { limit: number; cursor?: string; sort: Sort }) {
  const ks = keyset(page.sort, { created_at: orgApiKeys.createdAt, id: orgApiKeys.id }, page.cursor);
  return tx
    .select()
    .from(orgApiKeys)
    .where(allOf(eq(orgApiKeys.orgId, orgId), ks.where))
    .orderBy(...ks.orderBy)
    .limit(page.limit + 1);
}

export async function updateKey(
  tx: Db,
  keyId: string,
  changes: { name?: string; orgRole?: "admin" | "member" },
): Promise<OrgApiKeyRow> {
  const [key] = await tx
    .update(orgApiKeys)
    .set({ ...changes, updatedAt: dbNow })
    .where(eq(orgApiKeys.id, keyId))
    .returning();
  return key!;
}

/** Revokes once; a revoked key keeps its first revocation time. */
export async function revokeKey(tx: Db, keyId: string): Promise<OrgApiKeyRow | undefined> {
  const [key] = await tx
    .update(orgApiKeys)
    .set({ revokedAt: dbNow, updatedAt: dbNow })
    .where(and(eq(orgApiKeys.id, keyId), isNull(orgApiKeys.revokedAt)))
    .returning();
  return key;
}

/** An active key by hash, and whether its last use is due to be recorded (decided by the database clock). */
export async function findActiveKeyByHash(tx: Db, tokenHash: string) {
  const [row] = await tx
    .select({
      id: orgApiKeys.id,
      orgId: orgApiKeys.orgId,
      touchDue: sql<boolean>`${unsetOrOlderThan(orgApiKeys.lastUsedAt, TOKEN_TOUCH_SECONDS)}`,
    })
    .from(orgApiKeys)
    .where(and(eq(orgApiKeys.tokenHash, tokenHash), isNull(orgApiKeys.revokedAt)));
  return row;
}

export async function touchKey(tx: Db, keyId: string): Promise<void> {
  await tx
    .update(orgApiKeys)
    .set({ lastUsedAt: dbNow })
    .where(
      and(
        eq(orgApiKeys.id, keyId),
        unsetOrOlderThan(orgApiKeys.lastUsedAt, TOKEN_TOUCH_SECONDS),
      ),
    );
}
