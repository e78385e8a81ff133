import type { Database } from "../../platform/db/index.js";
import { AppError, notFound, type Issue } from "../../platform/errors.js";
import type { Principal } from "../../platform/http/auth.js";
import type { PageRequest } from "../../platform/http/lists.js";
import { decodeId, newUuid } from "../../platform/ids.js";
import { wakeBudgetWaiters } from "../../runtime/store/budgets.js";
import { projectsAllowing, requireOrg, type OrgAccess } from "../orgs/access.js";
import { orgRoleAllows } from "../orgs/policy.js";
import type { Action, Period, ScopeKind } from "./schemas.js";
import * as store from "./store.js";
import { SCOPE_ID_KINDS } from "./views.js";

export interface BudgetFields {
  name: string;
  period: Period;
  limitMicroUsd: number | null;
  limitTokens: number | null;
  action: Action;
  notifyAtPercent: number[];
}

export interface CreateInput extends BudgetFields {
  scope: { kind: ScopeKind; id?: string };
}

export type UpdateInput = Partial<BudgetFields>;

/** A budget with what it spent in its current period. */
export interface MeasuredBudgetRecord {
  row: store.BudgetRow;
  measure: store.BudgetMeasure;
}

/**
 * Budgets (docs/usage-and-budgets.md). Org owners and admins (org.manage) create, change and delete them
 * and read all; other members read org-wide budgets and the budgets of projects they can read. A change or
 * deletion wakes the org's agents that wait on a budget, in its transaction: each claim then checks anew.
 */
export function createBudgetService(deps: { db: Database }) {
  const { db } = deps;

  const readableBy = (access: OrgAccess) => (orgRoleAllows(access.orgRole, "org.manage") ? undefined : projectsAllowing(access, "project.read"));

  async function measured(rows: store.BudgetRow[]): Promise<MeasuredBudgetRecord[]> {
    const measures = await store.measureBudgets(db.read, rows.map((r) => r.id));
    return rows.map((row) => ({ row, measure: measures.get(row.id)! }));
  }

  return {
    async create(principal: Principal, orgId: string, input: CreateInput): Promise<MeasuredBudgetRecord> {
      checkLimits(input.limitMicroUsd, input.limitTokens);
      const row = await db.tx(async (tx) => {
        await requireOrg(tx, principal, orgId, "org.manage");
        const { scopeId, projectId } = await resolveScope(tx, orgId, input.scope);
        return store.insertBudget(tx, {
          id: newUuid(),
          orgId,
          name: input.name,
          scopeKind: input.scope.kind,
          scopeId,
          projectId,
          period: input.period,
          limitMicroUsd: input.limitMicroUsd,
          limitTokens: input.limitTokens,
          action: input.action,
          notifyAtPercent: sorted(input.notifyAtPercent),
        });
      });
      return (await measured([row]))[0]!;
    },

    async get(principal: Principal, orgId: string, budgetId: string): Promise<MeasuredBudgetRecord> {
      const access = await requireOrg(db.read, principal, orgId);
      const row = await store.findBudget(db.read, orgId, budgetId, readableBy(access));
      if (!row) throw notFound("budget");
      return (await measured([row]))[0]!;
    },

    async list(
      principal: Principal,
      orgId: string,
      query: { name?: string; scopeKind?: ScopeKind; page: PageRequest },
    ): Promise<MeasuredBudgetRecord[]> {
      const access = await requireOrg(db.read, principal, orgId);
      const readable = readableBy(access);
      const rows = await store.listBudgets(db.read, { orgId, ...(readable ? { readable } : {}), ...query });
      return measured(rows);
    },

    async update(principal: Principal, orgId: string, budgetId: string, input: UpdateInput): Promise<MeasuredBudgetRecord> {
      const row = await db.tx(async (tx) => {
        await requireOrg(tx, principal, orgId, "org.manage");
        const current = await store.findBudget(tx, orgId, budgetId);
        if (!current) throw notFound("budget");
        const limitMicroUsd = input.limitMicroUsd === undefined ? current.limitMicroUsd : input.limitMicroUsd;
        const limitTokens = input.limitTokens === undefined ? current.limitTokens : input.limitTokens;
        checkLimits(limitMicroUsd, limitTokens);
        const updated = await store.updateBudget(tx, budgetId, {
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.period !== undefined ? { period: input.period } : {}),
          ...(input.action !== undefined ? { action: input.action } : {}),
          ...(input.notifyAtPercent !== undefined ? { notifyAtPercent: sorted(input.notifyAtPercent) } : {}),
          limitMicroUsd,
          limitTokens,
        });
        await wakeBudgetWaiters(tx, orgId);
        return updated;
      });
      return (await measured([row]))[0]!;
    },

    async remove(principal: Principal, orgId: string, budgetId: string): Promise<void> {
      await db.tx(async (tx) => {
        await requireOrg(tx, principal, orgId, "org.manage");
        if (!(await store.deleteBudget(tx, orgId, budgetId))) throw notFound("budget");
        await wakeBudgetWaiters(tx, orgId);
      });
    },
  };
}

export type BudgetService = ReturnType<typeof createBudgetService>;

function sorted(percents: number[]): number[] {
  return [...percents].sort((a, b) => a - b);
}

function invalid(issues: Issue[]): AppError {
  return new AppError("validation_failed", "request body failed validation", { issues });
}

function checkLimits(limitMicroUsd: number | null, limitTokens: number | null): void {
  if (limitMicroUsd === null && limitTokens === null) {
    throw invalid([{ path: "/limit_micro_usd", message: "set limit_micro_usd, limit_tokens or both: a budget needs at least one limit" }]);
  }
}

/** The scope's id decoded and checked against the org, and the project it belongs to. */
async function resolveScope(
  tx: Parameters<typeof store.scopeProject>[0],
  orgId: string,
  scope: CreateInput["scope"],
): Promise<{ scopeId: string | null; projectId: string | null }> {
  if (scope.kind === "org") {
    if (scope.id !== undefined) throw invalid([{ path: "/scope/id", message: "an org budget takes no id: it covers the organization it is created in" }]);
    return { scopeId: null, projectId: null };
  }
  const kind = SCOPE_ID_KINDS[scope.kind];
  if (scope.id === undefined) throw invalid([{ path: "/scope/id", message: `a ${scope.kind} budget needs the id of its ${scope.kind}` }]);
  const scopeId = decodeId(kind, scope.id);
  const projectId = scopeId === null ? undefined : await store.scopeProject(tx, orgId, scope.kind, scopeId);
  if (scopeId === null || projectId === undefined) throw invalid([{ path: "/scope/id", message: `no ${scope.kind} with this id in the organization` }]);
  return { scopeId, projectId };
}
