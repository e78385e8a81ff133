import { Type } from "typebox";
import { Cursor, Limit, NameFilter, ResourceSort } from "../../platform/http/lists.js";
import { Id, ResourceName, Timestamp } from "../../platform/http/schemas.js";
import { component } from "../../platform/http/components.js";

const strict = { additionalProperties: false } as const;

export const TAG = "Budgets";

export const SCOPE_KINDS = ["org", "project", "agent_profile", "agent", "actor"] as const;
export type ScopeKind = (typeof SCOPE_KINDS)[number];
export const PERIODS = ["day", "week", "month", "total"] as const;
export type Period = (typeof PERIODS)[number];
export const ACTIONS = ["pause", "notify"] as const;
export type Action = (typeof ACTIONS)[number];

const Micros = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const Amount = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });

export const BudgetScope = component("BudgetScope", Type.Object(
  {
    kind: Type.Enum([...SCOPE_KINDS]),
    id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: "The project (proj_), agent profile (aprf_), agent (agt_) or actor (actr_) of the organization; required except for org, absent for org.",
      }),
    ),
  },
  { ...strict, description: "What the budget counts: the whole organization, or one project, agent profile, agent or actor (end user). Immutable." },
));

export const BudgetPeriod = component("BudgetPeriod", Type.Enum([...PERIODS], {
  description: "The UTC period spending is counted over: day, week (from Monday), month, or total (from the UTC day the budget was created).",
}));

export const BudgetAction = component("BudgetAction", Type.Enum([...ACTIONS], {
  description: "pause: once a limit is reached no further model call of the scope is made until the period ends or the budget changes; notify: only notifications.",
}));

export const NotifyAtPercent = component("BudgetNotifyAtPercent", Type.Array(Type.Integer({ minimum: 1, maximum: 100 }), {
  uniqueItems: true,
  maxItems: 100,
  description: "Percentages of a limit at which a notification is recorded, once per period each; 100 (the limit) is always notified.",
}));

export const BudgetState = component("BudgetState", Type.Enum(["ok", "warning", "exceeded"], {
  description: "exceeded: spent reached a limit; warning: spent reached one of notify_at_percent; ok otherwise.",
}));

const BudgetNotification = component("BudgetNotification", Type.Object(
  {
    percent: Type.Integer({ minimum: 1, maximum: 100 }),
    spent_micro_usd: Amount,
    spent_tokens: Amount,
    created_at: Timestamp,
  },
  { ...strict, description: "A threshold reached in the current period, recorded once." },
));

export const Budget = component("Budget", Type.Object(
  {
    id: Id("budget"),
    org_id: Id("org"),
    name: ResourceName,
    scope: BudgetScope,
    period: BudgetPeriod,
    limit_micro_usd: Type.Union([Micros, Type.Null()], { description: "Millionths of a US dollar; null: no cost limit." }),
    limit_tokens: Type.Union([Micros, Type.Null()], { description: "Input plus output tokens; null: no token limit." }),
    action: BudgetAction,
    notify_at_percent: NotifyAtPercent,
    spent_micro_usd: Amount,
    spent_tokens: Amount,
    period_start: Timestamp,
    period_end: Type.Union([Timestamp, Type.Null()], { description: "When the current period ends (exclusive); null for total." }),
    state: BudgetState,
    notifications: Type.Array(BudgetNotification, { description: "The thresholds reached in the current period, lowest first." }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { ...strict, description: "A limit on what a scope of the organization spends on model calls per period (docs/usage-and-budgets.md)." },
));

const limitFields = {
  limit_micro_usd: Type.Optional(Type.Union([Micros, Type.Null()])),
  limit_tokens: Type.Optional(Type.Union([Micros, Type.Null()])),
};

export const CreateBudgetRequest = Type.Object(
  {
    name: ResourceName,
    scope: BudgetScope,
    period: BudgetPeriod,
    ...limitFields,
    action: BudgetAction,
    notify_at_percent: Type.Optional(NotifyAtPercent),
  },
  { ...strict, description: "At least one of limit_micro_usd and limit_tokens." },
);

export const UpdateBudgetRequest = Type.Object(
  {
    name: Type.Optional(ResourceName),
    period: Type.Optional(BudgetPeriod),
    ...limitFields,
    action: Type.Optional(BudgetAction),
    notify_at_percent: Type.Optional(NotifyAtPercent),
  },
  { ...strict, description: "The scope is immutable. A null limit removes it; at least one limit must remain." },
);

export const ListBudgetsQuery = Type.Object(
  {
    name: Type.Optional(NameFilter),
    scope_kind: Type.Optional(Type.Enum([...SCOPE_KINDS])),
    sort: Type.Optional(ResourceSort),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
  },
  strict,
);

export const BudgetParams = Type.Object({ orgID: Id("org"), budgetID: Id("budget") });
