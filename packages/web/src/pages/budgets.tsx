import { useState, type FormEvent } from "react";
import { useMutation } from "@tanstack/react-query";
import { api, call, type Schemas } from "../api/client";
import { keys, useInvalidate } from "../query";
import { ErrorNotice, Field, issueAt, Page, RelativeTime } from "../ui";
import { DeleteButton, optionalInt, Table, text, useBudgets } from "../widgets";
import { ScopePicker, type ScopeKind } from "./budget-scope";
import { dollars } from "./usage";

/*
 * The organization's budgets (docs/usage-and-budgets.md): each one's spend in its current period as a bar
 * against its limit, its state, and create, change and delete (deleting asks first).
 */

type Budget = Schemas["Budget"];
const SCOPES: ScopeKind[] = ["org", "project", "agent_profile", "agent", "actor"];
const PERIODS = ["day", "week", "month", "total"] as const;

export function Budgets({ org }: { org: string }) {
  const list = useBudgets(org);
  const [editing, setEditing] = useState<string>();
  const invalidate = useInvalidate();
  // The agent pages name the budget that paused an agent from the same list (agent/status.ts).
  const refresh = () => void invalidate(keys.org(org, "budgets"));
  return (
    <Page title="Budgets">
      <p className="muted">
        A <strong>pause</strong> budget stops model calls once spent reaches its limit (one call may go over: its cost is known only after it);
        a <strong>notify</strong> budget only sends budget.warning and budget.exceeded webhooks.
      </p>
      <ErrorNotice error={list.error} />
      <Table
        label="Budgets"
        head={["Name", "Scope", "Period", "Spent", "State", "Action", ""]}
        empty="No budgets yet. Add one below to cap or watch what agents spend."
        rows={(list.data ?? []).map((b) => [
          b.name,
          b.scope.id ? `${b.scope.kind} ${b.scope.id}` : b.scope.kind,
          <span>
            {b.period}
            {b.period_end ? (
              <span className="small muted">
                {" "}
                · ends <RelativeTime at={b.period_end} />
              </span>
            ) : null}
          </span>,
          <SpendBar budget={b} />,
          <span data-state={b.state} className={b.state === "exceeded" ? "text-red-600 font-semibold" : b.state === "warning" ? "text-amber-600" : ""}>
            {b.state}
          </span>,
          b.action,
          <span className="flex gap-2">
            <button type="button" className="secondary small-button" aria-label={`Edit ${b.name}`} onClick={() => setEditing(editing === b.id ? undefined : b.id)}>
              Edit
            </button>
            <DeleteButton
              label={`Delete budget ${b.name}`}
              name={b.name}
              consequence={b.action === "pause" ? `Agents held by ${b.name} resume at once.` : undefined}
              remove={() => call(api.DELETE("/api/v1/orgs/{orgID}/budgets/{budgetID}", { params: { path: { orgID: org, budgetID: b.id } } }))}
              removed={refresh}
            />
          </span>,
        ])}
      />
      {editing && list.data?.find((b) => b.id === editing) ? (
        <EditBudget org={org} budget={list.data.find((b) => b.id === editing)!} done={() => { setEditing(undefined); refresh(); }} />
      ) : null}
      <CreateBudget org={org} created={refresh} />
    </Page>
  );
}

/** Spent against each limit the budget has, the fuller one drawn. */
function SpendBar({ budget }: { budget: Budget }) {
  const parts: Array<{ label: string; fraction: number }> = [];
  if (budget.limit_micro_usd !== null) parts.push({ label: `${dollars(budget.spent_micro_usd)} of ${dollars(budget.limit_micro_usd)}`, fraction: budget.spent_micro_usd / budget.limit_micro_usd });
  if (budget.limit_tokens !== null) parts.push({ label: `${budget.spent_tokens.toLocaleString()} of ${budget.limit_tokens.toLocaleString()} tokens`, fraction: budget.spent_tokens / budget.limit_tokens });
  const fullest = Math.max(0, ...parts.map((p) => p.fraction));
  const percent = Math.round(fullest * 100);
  return (
    <div className="min-w-40">
      <div
        role="meter"
        aria-label={`${budget.name} spent`}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Math.min(percent, 100)}
        aria-valuetext={`${percent}%`}
        className="h-2 w-full overflow-hidden rounded bg-black/10"
      >
        <div className={`h-full ${fullest >= 1 ? "bg-red-600" : budget.state === "warning" ? "bg-amber-500" : "bg-green-600"}`} style={{ width: `${Math.min(percent, 100)}%` }} />
      </div>
      <span className="small muted">{parts.map((p) => p.label).join(" · ")}</span>
    </div>
  );
}

/** Dollars typed in the form as micro-dollars; empty is no limit. */
function microUsd(form: FormData, name: string): number | null {
  const value = text(form, name);
  return value === "" ? null : Math.round(Number(value) * 1_000_000);
}

function percents(form: FormData): number[] {
  return text(form, "notify_at_percent")
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "")
    .map(Number);
}

function CreateBudget({ org, created }: { org: string; created: () => void }) {
  const [scope, setScope] = useState<ScopeKind>("org");
  const create = useMutation({
    mutationFn: (body: Schemas["CreateBudgetRequest"]) => call(api.POST("/api/v1/orgs/{orgID}/budgets", { params: { path: { orgID: org } }, body })),
    onSuccess: created,
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const limitTokens = optionalInt(form, "limit_tokens");
    create.mutate({
      name: text(form, "name"),
      scope: scope === "org" ? { kind: "org" } : { kind: scope, id: text(form, "scope_id") },
      period: text(form, "period") as (typeof PERIODS)[number],
      limit_micro_usd: microUsd(form, "limit_usd"),
      limit_tokens: limitTokens ?? null,
      action: text(form, "action") as "pause" | "notify",
      notify_at_percent: percents(form),
    });
  };
  return (
    <form className="card" onSubmit={submit} aria-label="Add a budget">
      <h2>Add a budget</h2>
      <Field label="Name" id="budget-name" error={issueAt(create.error, "/name")}>
        <input id="budget-name" name="name" required />
      </Field>
      <Field label="Scope" id="budget-scope">
        <select id="budget-scope" value={scope} onChange={(e) => setScope(e.target.value as ScopeKind)}>
          {SCOPES.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
      </Field>
      <ScopePicker org={org} kind={scope} error={issueAt(create.error, "/scope")} />
      <Field label="Period" id="budget-period" hint="UTC; weeks start on Monday; total counts from today on." error={issueAt(create.error, "/period")}>
        <select id="budget-period" name="period" defaultValue="month">
          {PERIODS.map((p) => (
            <option key={p}>{p}</option>
          ))}
        </select>
      </Field>
      <Field label="Limit in US dollars" id="budget-limit-usd" hint="Leave empty for no dollar limit; set this, tokens, or both." error={issueAt(create.error, "/limit_micro_usd")}>
        <input id="budget-limit-usd" name="limit_usd" inputMode="decimal" pattern="[0-9]*[.]?[0-9]*" />
      </Field>
      <Field label="Limit in tokens" id="budget-limit-tokens" error={issueAt(create.error, "/limit_tokens")}>
        <input id="budget-limit-tokens" name="limit_tokens" inputMode="numeric" pattern="[0-9]*" />
      </Field>
      <Field label="When reached" id="budget-action">
        <select id="budget-action" name="action" defaultValue="pause">
          <option value="pause">pause: hold further model calls</option>
          <option value="notify">notify: only send webhooks</option>
        </select>
      </Field>
      <Field label="Warn at percents" id="budget-notify" hint="Comma-separated, e.g. 50, 80." error={issueAt(create.error, "/notify_at_percent")}>
        <input id="budget-notify" name="notify_at_percent" />
      </Field>
      <ErrorNotice error={create.error} />
      <button type="submit" disabled={create.isPending}>
        Add budget
      </button>
    </form>
  );
}

function EditBudget({ org, budget, done }: { org: string; budget: Budget; done: () => void }) {
  const update = useMutation({
    mutationFn: (body: Schemas["UpdateBudgetRequest"]) => call(api.PATCH("/api/v1/orgs/{orgID}/budgets/{budgetID}", { params: { path: { orgID: org, budgetID: budget.id } }, body })),
    onSuccess: done,
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    update.mutate({
      name: text(form, "name"),
      limit_micro_usd: microUsd(form, "limit_usd"),
      limit_tokens: optionalInt(form, "limit_tokens") ?? null,
      notify_at_percent: percents(form),
    });
  };
  return (
    <form className="card" onSubmit={submit} aria-label={`Edit ${budget.name}`}>
      <h2>Edit {budget.name}</h2>
      <Field label="Name" id="edit-budget-name" error={issueAt(update.error, "/name")}>
        <input id="edit-budget-name" name="name" defaultValue={budget.name} required />
      </Field>
      <Field label="Limit in US dollars" id="edit-budget-limit-usd" error={issueAt(update.error, "/limit_micro_usd")}>
        <input id="edit-budget-limit-usd" name="limit_usd" defaultValue={budget.limit_micro_usd === null ? "" : String(budget.limit_micro_usd / 1_000_000)} />
      </Field>
      <Field label="Limit in tokens" id="edit-budget-limit-tokens" error={issueAt(update.error, "/limit_tokens")}>
        <input id="edit-budget-limit-tokens" name="limit_tokens" defaultValue={budget.limit_tokens === null ? "" : String(budget.limit_tokens)} />
      </Field>
      <Field label="Warn at percents" id="edit-budget-notify" error={issueAt(update.error, "/notify_at_percent")}>
        <input id="edit-budget-notify" name="notify_at_percent" defaultValue={budget.notify_at_percent.join(", ")} />
      </Field>
      <ErrorNotice error={update.error} />
      <button type="submit" disabled={update.isPending}>
        Save
      </button>
    </form>
  );
}
