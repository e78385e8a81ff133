import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import type { PgInsertValue, PgUpdateSetSource } from "drizzle-orm/pg-core";
import { machinePools, machines } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { allOf, keyset, nameMatches, type PageRequest } from "../../platform/http/lists.js";

type Db = AppDb | Tx;
export type PoolRow = typeof machinePools.$inferSelect;
export type PoolChanges = PgUpdateSetSource<typeof machinePools>;
export interface PoolUsage {
  machines: number;
  cpu: number;
  memoryMb: number;
}

export async function insertPool(tx: Db, row: PgInsertValue<typeof machinePools>): Promise<PoolRow> {
  const [pool] = await tx.insert(machinePools).values(row).returning();
  return pool!;
}

export async function findPool(tx: Db, orgId: string, poolId: string): Promise<PoolRow | undefined> {
  const [pool] = await tx.select().from(machinePools).where(and(eq(machinePools.orgId, orgId), eq(machinePools.id, poolId)));
  return pool;
}

/** Locks the pool: changes to it and to its grants serialize here, so a grant is checked against current limits. */
export async function lockPool(tx: Tx, orgId: string, poolId: string): Promise<PoolRow | undefined> {
  const [pool] = await tx
    .select()
    .from(machinePools)
    .where(and(eq(machinePools.orgId, orgId), eq(machinePools.id, poolId)))
    .for("update");
  return pool;
}

export async function findPoolByName(tx: Db, orgId: string, name: string): Promise<PoolRow | undefined> {
  const [pool] = await tx.select().from(machinePools).where(and(eq(machinePools.orgId, orgId), eq(machinePools.name, name)));
  return pool;
}

export async function updatePool(tx: Db, poolId: string, changes: PoolChanges): Promise<PoolRow> {
  const [pool] = await tx
    .update(machinePools)
    .set({ ...changes, updatedAt: dbNow })
    .where(eq(machinePools.id, poolId))
    .returning();
  return pool!;
}

/** Its grants, the machine grants they generated and its machines go with it (foreign keys cascade). */
export async function deletePool(tx: Db, poolId: string): Promise<void> {
  await tx.delete(machinePools).where(eq(machinePools.id, poolId));
}

export async function listPools(tx: Db, input: { orgId: string; name?: string; page: PageRequest }): Promise<PoolRow[]> {
  const ks = keyset(
    input.page.sort,
    { name: machinePools.name, created_at: machinePools.createdAt, updated_at: machinePools.updatedAt, id: machinePools.id },
    input.page.cursor,
  );
  return tx
    .select()
    .from(machinePools)
    .where(allOf(eq(machinePools.orgId, input.orgId), nameMatches(machinePools.name, input.name), ks.where))
    .orderBy(...ks.orderBy)
    .limit(input.page.limit + 1);
}

/** The live machines of each pool and their provisioned size, which count against the pool's limits. */
export async function usageOf(tx: Db, poolIds: string[]): Promise<Map<string, PoolUsage>> {
  const usage = new Map<string, PoolUsage>();
  if (poolIds.length === 0) return usage;
  const rows = await tx
    .select({
      poolId: machines.machinePoolId,
      machines: sql<number>`count(*)::int`,
      cpu: sql<number>`coalesce(sum(${machines.cpu}), 0)::int`,
      memoryMb: sql<number>`coalesce(sum(${machines.memoryMb}), 0)::int`,
    })
    .from(machines)
    .where(and(inArray(machines.machinePoolId, poolIds), isNull(machines.deletedAt)))
    .groupBy(machines.machinePoolId);
  for (const row of rows) usage.set(row.poolId!, { machines: row.machines, cpu: row.cpu, memoryMb: row.memoryMb });
  return usage;
}
