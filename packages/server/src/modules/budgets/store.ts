import { and, eq, sql, type SQL } from "drizzle-orm";
import type { PgInsertValue, PgUpdateSetSource } from "drizzle-orm/pg-core";
import { budgets } from "../../db/schema/index.js";
import { dbNow, epochMs } from "../../db/schema/columns.js";
import { rawRows, type AppDb, type Tx } from "../../platform/db/index.js";
import { allOf, keyset, nameMatches, type PageRequest } from "../../platform/http/lists.js";
import { budgetMeasureColumns, budgetSpentSql, budgetWindowSql } from "../../runtime/store/budgets.js";
import type { ScopeKind } from "./schemas.js";

type Db = AppDb | Tx;
export type BudgetRow = typeof budgets.$inferSelect;

const b = budgets;
const sortColumns = { name: b.name, created_at: b.createdAt, updated_at: b.updatedAt, id: b.id };

export async function insertBudget(tx: Db, row: PgInsertValue<typeof budgets>): Promise<BudgetRow> {
  const [inserted] = await tx.insert(b).values(row).returning();
  return inserted!;
}

/** The budget if it is the org's and, when `readable` is given, its project is among them (or it has none). */
export async function findBudget(tx: Db, orgId: string, id: string, readable?: SQL): Promise<BudgetRow | undefined> {
  const [row] = await tx
    .select()
    .from(b)
    .where(allOf(eq(b.orgId, orgId), eq(b.id, id), visible(readable)));
  return row;
}

export async function updateBudget(tx: Db, id: string, changes: PgUpdateSetSource<typeof budgets>): Promise<BudgetRow> {
  const [row] = await tx
    .update(b)
    .set({ ...changes, updatedAt: dbNow })
    .where(eq(b.id, id))
    .returning();
  return row!;
}

export async function deleteBudget(tx: Db, orgId: string, id: string): Promise<boolean> {
  const deleted = await tx
    .delete(b)
    .where(and(eq(b.orgId, orgId), eq(b.id, id)))
    .returning({ id: b.id });
  return deleted.length > 0;
}

export async function listBudgets(tx: Db, input: { orgId: string; readable?: SQL; name?: string; scopeKind?: ScopeKind; page: PageRequest }): Promise<BudgetRow[]> {
  const ks = keyset(input.page.sort, sortColumns, input.page.cursor);
  return tx
    .select()
    .from(b)
    .where(
      allOf(
        eq(b.orgId, input.orgId),
        visible(input.readable),
        nameMatches(b.name, input.name),
        input.scopeKind === undefined ? undefined : eq(b.scopeKind, input.scopeKind),
        ks.where,
      ),
    )
    .orderBy(...ks.orderBy)
    .limit(input.page.limit + 1);
}

/** Org budgets are visible to every member; others to those who can read their project. */
function visible(readable: SQL | undefined): SQL | undefined {
  return readable === undefined ? undefined : sql`(${b.projectId} IS NULL OR ${b.projectId} IN (${readable}))`;
}

/** What a budget spent in its current period, by the database clock, and the thresholds recorded in it. */
export interface BudgetMeasure {
  spentMicroUsd: number;
  spentTokens: number;
  periodStart: Date;
  periodEnd: Date | null;
  exceeded: boolean;
  notifications: Array<{ percent: number; spentMicroUsd: number; spentTokens: number; createdAt: Date }>;
}

interface MeasureRow {
  id: string;
  spent_micro_usd: number;
  spent_tokens: number;
  period_start_ms: number;
  period_end_ms: number | null;
  exceeded: boolean;
  notifications: Array<{ percent: number; spent_micro_usd: number; spent_tokens: number; created_ms: number }> | null;
}

/** Measures the budgets (one statement, the same SQL the claim's check uses: runtime/store/budgets.ts). */
export async function measureBudgets(tx: Db, ids: string[]): Promise<Map<string, BudgetMeasure>> {
  if (ids.length === 0) return new Map();
  const rows = await rawRows<MeasureRow>(
    tx,
    sql`SELECT b.id, ${budgetMeasureColumns},
        (SELECT json_agg(json_build_object('percent', n.percent, 'spent_micro_usd', n.spent_micro_usd::float8, 'spent_tokens', n.spent_tokens::float8,
            'created_ms', ${epochMs(sql`n.created_at`)}) ORDER BY n.percent)
          FROM budget_notifications n WHERE n.budget_id = b.id AND n.period_start = w.start_utc AT TIME ZONE 'UTC') AS notifications
      FROM budgets b ${budgetWindowSql} ${budgetSpentSql}
      WHERE b.id IN (SELECT value::uuid FROM json_array_elements_text(${JSON.stringify(ids)}::json))`,
  );
  return new Map(
    rows.map((r) => [
      r.id,
      {
        spentMicroUsd: r.spent_micro_usd,
        spentTokens: r.spent_tokens,
        periodStart: new Date(r.period_start_ms),
        periodEnd: r.period_end_ms === null ? null : new Date(r.period_end_ms),
        exceeded: r.exceeded,
        notifications: (r.notifications ?? []).map((n) => ({ percent: n.percent, spentMicroUsd: n.spent_micro_usd, spentTokens: n.spent_tokens, createdAt: new Date(n.created_ms) })),
      },
    ]),
  );
}

const SCOPE_TABLES: Record<Exclude<ScopeKind, "org">, string> = { project: "projects", agent_profile: "agent_profiles", agent: "agents", actor: "actors" };

/**
 * The project a scope belongs to, or undefined when the org has no such thing. A read of the scoped thing's own
 * row by primary key (its module owns the table; this is the one look-up a budget's creation makes).
 */
export async function scopeProject(tx: Db, orgId: string, kind: Exclude<ScopeKind, "org">, id: string): Promise<string | undefined> {
  const table = sql.raw(SCOPE_TABLES[kind]);
  const project = kind === "project" ? sql`id` : sql`project_id`;
  const [row] = await rawRows<{ project_id: string }>(tx, sql`SELECT ${project} AS project_id FROM ${table} WHERE org_id = ${orgId} AND id = ${id}`);
  return row?.project_id;
}
