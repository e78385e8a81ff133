import { and, count, eq, isNull } from "drizzle-orm";
import type { PgInsertValue } from "drizzle-orm/pg-core";
import { machineDaemonTokens } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset, type PageRequest } from "../../platform/http/lists.js";

type Db = AppDb | Tx;
export type TokenRow = typeof machineDaemonTokens.$inferSelect;

export async function insertToken(tx: Db, row: PgInsertValue<typeof machineDaemonTokens>): Promise<TokenRow> {
  const [token] = await tx.insert(machineDaemonTokens).values(row).returning();
  return token!;
}

export async function findToken(tx: Db, machineId: string, tokenId: string): Promise<TokenRow | undefined> {
  const [token] = await tx
    .select()
    .from(machineDaemonTokens)
    .where(and(eq(machineDaemonTokens.machineId, machineId), eq(machineDaemonTokens.id, tokenId)));
  return token;
}

export async function countActiveTokens(tx: Db, machineId: string): Promise<number> {
  const [row] = await tx
    .select({ n: count() })
    .from(machineDaemonTokens)
    .where(and(eq(machineDaemonTokens.machineId, machineId), isNull(machineDaemonTokens.revokedAt)));
  return row!.n;
}

/** Every token of the machine, revoked ones included, newest first by default. */
export async function listTokens(tx: Db, machineId: string, page: PageRequest): Promise<TokenRow[]> {
  const ks = keyset(page.sort, { created_at: machineDaemonTokens.createdAt, id: machineDaemonTokens.id }, page.cursor);
  return tx
    .select()
    .from(machineDaemonTokens)
    .where(allOf(eq(machineDaemonTokens.machineId, machineId), ks.where))
    .orderBy(...ks.orderBy)
    .limit(page.limit + 1);
}

/** Revokes the machine's active tokens (one, or all when `tokenId` is absent); returns those revoked now. */
export async function revokeTokens(tx: Db, machineId: string, reason: "revoked" | "machine_deleted" | "sleep", tokenId?: string): Promise<TokenRow[]> {
  return tx
    .update(machineDaemonTokens)
    .set({ revokedAt: dbNow, revokeReason: reason })
    .where(
      allOf(
        eq(machineDaemonTokens.machineId, machineId),
        tokenId === undefined ? undefined : eq(machineDaemonTokens.id, tokenId),
        isNull(machineDaemonTokens.revokedAt),
      ),
    )
    .returning();
}
