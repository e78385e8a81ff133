import { Type } from "typebox";
import type { HttpApp } from "../../platform/http/app.js";
import { pageOf, sortValue, toPage } from "../../platform/http/lists.js";
import { pathId } from "../../platform/http/params.js";
import { errorResponses, Page } from "../../platform/http/schemas.js";
import { OrgParams } from "../orgs/schemas.js";
import * as s from "./schemas.js";
import type { BudgetService, UpdateInput } from "./service.js";
import { budgetView } from "./views.js";

const ABOUT =
  "Spent is read from the daily usage rollups over the budget's current UTC period (docs/usage-and-budgets.md). " +
  "Org owners and admins see every budget; other members see org-wide budgets and those of projects they can read.";

export function budgetRoutes(app: HttpApp, deps: { budgets: BudgetService }) {
  const { budgets } = deps;

  app.get(
    "/orgs/:orgID/budgets",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listBudgets",
        summary: "List budgets",
        description: `The organization's budgets with what each spent in its current period; by default created_at descending. ${ABOUT}`,
        params: OrgParams,
        querystring: s.ListBudgetsQuery,
        response: { 200: Page(s.Budget), ...errorResponses() },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      const rows = await budgets.list(request.principal!, pathId("org", request.params.orgID), {
        ...(request.query.name !== undefined ? { name: request.query.name } : {}),
        ...(request.query.scope_kind !== undefined ? { scopeKind: request.query.scope_kind } : {}),
        page,
      });
      return toPage(rows, page.limit, page.sort, (r) => ({ value: sortValue(page.sort, r.row), id: r.row.id }), budgetView);
    },
  );

  app.post(
    "/orgs/:orgID/budgets",
    {
      schema: {
        tags: [s.TAG],
        operationId: "createBudget",
        summary: "Create a budget",
        description:
          "Creates a budget (org.manage). A pause budget stops the scope's model calls once a limit is reached, until the period " +
          "ends or the budget is raised or deleted; an actor budget stops only that actor's turns. 400 validation_failed without a " +
          `limit, or with a scope id that is missing, given for org, or not of the organization. ${ABOUT}`,
        params: OrgParams,
        body: s.CreateBudgetRequest,
        response: { 201: s.Budget, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const created = await budgets.create(request.principal!, pathId("org", request.params.orgID), {
        name: body.name,
        scope: { kind: body.scope.kind, ...(body.scope.id !== undefined ? { id: body.scope.id } : {}) },
        period: body.period,
        limitMicroUsd: body.limit_micro_usd ?? null,
        limitTokens: body.limit_tokens ?? null,
        action: body.action,
        notifyAtPercent: body.notify_at_percent ?? [],
      });
      return reply.status(201).send(budgetView(created));
    },
  );

  app.get(
    "/orgs/:orgID/budgets/:budgetID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "getBudget",
        summary: "Get a budget",
        description: `One budget with what it spent in its current period, its state and the thresholds notified in it. ${ABOUT}`,
        params: s.BudgetParams,
        response: { 200: s.Budget, ...errorResponses() },
      },
    },
    async (request) => budgetView(await budgets.get(request.principal!, ...budgetPath(request.params))),
  );

  app.patch(
    "/orgs/:orgID/budgets/:budgetID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "updateBudget",
        summary: "Update a budget",
        description:
          "Changes the name, period, limits, action or thresholds (org.manage); the scope is immutable. Agents waiting on a budget " +
          "of the organization check again at once, so raising a limit resumes them. 400 validation_failed when no limit would remain.",
        params: s.BudgetParams,
        body: s.UpdateBudgetRequest,
        response: { 200: s.Budget, ...errorResponses() },
      },
    },
    async (request) => {
      const body = request.body;
      const input: UpdateInput = {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.period !== undefined ? { period: body.period } : {}),
        ...(body.limit_micro_usd !== undefined ? { limitMicroUsd: body.limit_micro_usd } : {}),
        ...(body.limit_tokens !== undefined ? { limitTokens: body.limit_tokens } : {}),
        ...(body.action !== undefined ? { action: body.action } : {}),
        ...(body.notify_at_percent !== undefined ? { notifyAtPercent: body.notify_at_percent } : {}),
      };
      return budgetView(await budgets.update(request.principal!, ...budgetPath(request.params), input));
    },
  );

  app.delete(
    "/orgs/:orgID/budgets/:budgetID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "deleteBudget",
        summary: "Delete a budget",
        description: "Deletes the budget and its notifications (org.manage); agents it held resume by themselves.",
        params: s.BudgetParams,
        response: { 204: Type.Null(), ...errorResponses() },
      },
    },
    async (request, reply) => {
      await budgets.remove(request.principal!, ...budgetPath(request.params));
      return reply.status(204).send(null);
    },
  );
}

function budgetPath(params: { orgID: string; budgetID: string }): [string, string] {
  return [pathId("org", params.orgID), pathId("budget", params.budgetID)];
}
