import { sql } from "drizzle-orm";
import { bigint, check, foreignKey, index, integer, pgTable, text, timestamp, unique, uuid } from "drizzle-orm/pg-core";
import { createdAt, idColumn, updatedAt } from "./columns.js";
import { orgs, projects } from "./orgs.js";

/*
 * Budgets (docs/usage-and-budgets.md): a limit on what a scope of an organization spends per UTC period,
 * read from the scope rollup (`usage_scope_daily`), checked by the claim before every model call.
 */
export const budgets = pgTable(
  "budgets",
  {
    id: idColumn(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** org | project | agent_profile | agent | actor. */
    scopeKind: text("scope_kind").notNull(),
    /** The scoped thing's id; null for an org budget. A plain id: the budget outlives an agent or actor it names. */
    scopeId: uuid("scope_id"),
    /**
     * The project the scope belongs to (null for an org budget), for who may read the budget; a project's
     * deletion deletes its budgets.
     */
    projectId: uuid("project_id"),
    /** day | week | month | total. */
    period: text("period").notNull(),
    limitMicroUsd: bigint("limit_micro_usd", { mode: "number" }),
    limitTokens: bigint("limit_tokens", { mode: "number" }),
    /** pause | notify. */
    action: text("action").notNull(),
    notifyAtPercent: integer("notify_at_percent").array().notNull().default(sql`'{}'::integer[]`),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    unique("budgets_org_id").on(t.orgId, t.id),
    foreignKey({ name: "budgets_project_fk", columns: [t.orgId, t.projectId], foreignColumns: [projects.orgId, projects.id] }).onDelete("cascade"),
    check("budgets_scope_kind", sql`${t.scopeKind} IN ('org', 'project', 'agent_profile', 'agent', 'actor')`),
    check("budgets_scope_id", sql`(${t.scopeKind} = 'org') = (${t.scopeId} IS NULL)`),
    check("budgets_period", sql`${t.period} IN ('day', 'week', 'month', 'total')`),
    check("budgets_action", sql`${t.action} IN ('pause', 'notify')`),
    check("budgets_limit", sql`${t.limitMicroUsd} IS NOT NULL OR ${t.limitTokens} IS NOT NULL`),
    // The claim finds the budgets that apply to an agent by (org, scope).
    index("budgets_scope_idx").on(t.orgId, t.scopeKind, t.scopeId),
  ],
);

/**
 * A threshold a budget's spending crossed in one period, recorded once (the unique key): percent 100 is
 * the limit itself. What webhooks' `budget.warning` / `budget.exceeded` report.
 */
export const budgetNotifications = pgTable(
  "budget_notifications",
  {
    id: idColumn(),
    orgId: uuid("org_id").notNull(),
    budgetId: uuid("budget_id").notNull(),
    /** The start of the period the crossing belongs to (the budget's creation day for a `total` budget). */
    periodStart: timestamp("period_start", { withTimezone: true }).notNull(),
    percent: integer("percent").notNull(),
    spentMicroUsd: bigint("spent_micro_usd", { mode: "number" }).notNull(),
    spentTokens: bigint("spent_tokens", { mode: "number" }).notNull(),
    /** The agent whose claim noticed the crossing. */
    agentId: uuid("agent_id"),
    createdAt: createdAt(),
  },
  (t) => [
    foreignKey({ name: "budget_notifications_budget_fk", columns: [t.orgId, t.budgetId], foreignColumns: [budgets.orgId, budgets.id] }).onDelete("cascade"),
    unique("budget_notifications_once").on(t.budgetId, t.periodStart, t.percent),
    check("budget_notifications_percent", sql`${t.percent} BETWEEN 1 AND 100`),
  ],
);
