import { InvalidArgumentError, type Command } from "commander";
import { unwrap } from "@svc/sdk";
import { context, table, UsageError, type Context } from "../context.js";
import { listAll, pageQuery } from "../lists.js";
import { limitOption } from "./options.js";

/*
 * `svc usage` and `svc budgets` (docs/usage-and-budgets.md): what the organization's agents used and cost,
 * and the budgets that cap it.
 */

const GROUP_KEYS = ["project", "agent", "agent_profile", "actor", "model", "day"] as const;
type GroupKey = (typeof GROUP_KEYS)[number];
const KEY_FIELDS: Record<GroupKey, string> = { project: "project_id", agent: "agent_id", agent_profile: "agent_profile_id", actor: "actor_id", model: "model_id", day: "day" };

const SCOPES = ["org", "project", "agent_profile", "agent", "actor"] as const;
const PERIODS = ["day", "week", "month", "total"] as const;
const ACTIONS = ["pause", "notify"] as const;

export function budgetCommands(program: Command): void {
  usageCommand(program);
  const budgets = program.command("budgets").description("limits on what the organization's agents spend per period (org owners and admins manage them)");
  budgets
    .command("list")
    .description("the budgets you can see, with what each spent in its current period")
    .option(...limitOption)
    .action(async (options: { limit: number }, command: Command) => {
      const ctx = await context(command);
      const orgID = await ctx.org();
      const items = await listAll((cursor) => unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/budgets", { params: { path: { orgID }, query: pageQuery(cursor) } })), options.limit);
      ctx.print(items, () =>
        table([["ID", "NAME", "SCOPE", "PERIOD", "SPENT", "LIMIT", "STATE"], ...items.map((b) => [b.id, b.name, scopeText(b.scope), b.period, spentText(b), limitText(b), b.state])]),
      );
    });
  budgets
    .command("get <budget>")
    .description("one budget: its limits, what it spent this period, and the thresholds notified")
    .action(async (budgetID: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      const b = await unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/budgets/{budgetID}", { params: { path: { orgID: await ctx.org(), budgetID } } }));
      ctx.print(b, () => budgetText(b));
    });
  withBudgetFields(
    budgets
      .command("create <name>")
      .description("create a budget (a pause budget stops the scope's model calls at its limit until the period ends or it is raised)")
      .requiredOption("--scope <kind>", `what it counts: ${SCOPES.join(", ")}`, oneOf(SCOPES))
      .option("--id <id>", "the project, agent profile, agent or actor (default for --scope project: the current project)"),
  ).action(async (name: string, options: BudgetOptions & { scope: (typeof SCOPES)[number]; id?: string }, command: Command) => {
    const ctx = await context(command);
    if (!options.period) throw new UsageError("--period is required: day, week, month or total");
    if (!options.action) throw new UsageError("--action is required: pause or notify");
    const id = options.id ?? (options.scope === "project" ? await ctx.project() : undefined);
    const body = {
      name,
      scope: { kind: options.scope, ...(id !== undefined ? { id } : {}) },
      period: options.period,
      action: options.action,
      ...limits(options),
      ...(options.notifyAt ? { notify_at_percent: options.notifyAt } : {}),
    };
    const b = await unwrap(ctx.client().POST("/api/v1/orgs/{orgID}/budgets", { params: { path: { orgID: await ctx.org() } }, body }));
    ctx.print(b, () => `Created budget ${b.id}.\n${budgetText(b)}`);
  });
  withBudgetFields(budgets.command("update <budget>").description("change a budget's limits, period, action, thresholds or name; agents it held check again at once").option("--name <name>", "a new name")).action(
    async (budgetID: string, options: BudgetOptions & { name?: string }, command: Command) => {
      const ctx = await context(command);
      const body = {
        ...(options.name !== undefined ? { name: options.name } : {}),
        ...(options.period !== undefined ? { period: options.period } : {}),
        ...(options.action !== undefined ? { action: options.action } : {}),
        ...limits(options),
        ...(options.notifyAt !== undefined ? { notify_at_percent: options.notifyAt } : {}),
      };
      if (Object.keys(body).length === 0) throw new UsageError("nothing to change: give --limit-usd, --limit-tokens, --period, --action, --notify-at or --name");
      const b = await unwrap(ctx.client().PATCH("/api/v1/orgs/{orgID}/budgets/{budgetID}", { params: { path: { orgID: await ctx.org(), budgetID } }, body }));
      ctx.print(b, () => `Updated budget ${b.id}.\n${budgetText(b)}`);
    },
  );
  budgets
    .command("delete <budget>")
    .description("delete a budget; agents it held resume by themselves")
    .action(async (budgetID: string, _o: unknown, command: Command) => {
      const ctx = await context(command);
      await unwrap(ctx.client().DELETE("/api/v1/orgs/{orgID}/budgets/{budgetID}", { params: { path: { orgID: await ctx.org(), budgetID } } }));
      ctx.print({ deleted: budgetID }, () => `Deleted budget ${budgetID}.`);
    });
}

function usageCommand(program: Command): void {
  program
    .command("usage")
    .description("model calls, tokens and cost of the organization's agents over whole UTC days (default: this month)")
    .option("--from <time>", "start, RFC 3339 (e.g. 2026-11-01T00:00:00Z)")
    .option("--to <time>", "end, RFC 3339, at most 366 days after --from")
    .option("--group-by <keys>", `comma-separated: ${GROUP_KEYS.join(", ")}`, groupKeys)
    .option("--project-id <id>", "only this project's usage")
    .option("--agent-id <id>", "only this agent's usage")
    .option("--actor-id <id>", "only this actor's usage")
    .option("--model-id <id>", "only this configured model's usage")
    .option(...limitOption)
    .action(async (options: UsageOptions, command: Command) => {
      const ctx = await context(command);
      const orgID = await ctx.org();
      const query = {
        ...(options.from ? { from: options.from } : {}),
        ...(options.to ? { to: options.to } : {}),
        ...(options.groupBy ? { group_by: options.groupBy.join(",") } : {}),
        ...(options.projectId ? { project_id: options.projectId } : {}),
        ...(options.agentId ? { agent_id: options.agentId } : {}),
        ...(options.actorId ? { actor_id: options.actorId } : {}),
        ...(options.modelId ? { model_id: options.modelId } : {}),
      };
      const first = await usagePage(ctx, orgID, query, undefined);
      const groups = [...first.data];
      let next = first.next_cursor;
      while (next && groups.length < options.limit) {
        const page = await usagePage(ctx, orgID, query, next);
        groups.push(...page.data);
        next = page.next_cursor;
      }
      const shown = groups.slice(0, options.limit);
      const keys = (options.groupBy ?? []).map((k) => KEY_FIELDS[k]);
      ctx.print({ ...first, data: shown, next_cursor: null }, () => {
        const sums = (g: UsageSums) => [String(g.model_calls), String(g.input_tokens), String(g.output_tokens), dollars(g.cost_micro_usd)];
        // An org key's input naming no actor is counted under the key (api_key_id): show it in the actor column.
        const cell = (g: Record<string, unknown>, k: string) => String(g[k] ?? (k === "actor_id" ? g["api_key_id"] : undefined) ?? "-");
        const rows = shown.map((g) => [...keys.map((k) => cell(g as Record<string, unknown>, k)), ...sums(g)]);
        const header = [...keys.map((k) => k.toUpperCase()), "CALLS", "INPUT", "OUTPUT", "COST"];
        const total = [...keys.map((_, i) => (i === 0 ? "TOTAL" : "")), ...sums(first.totals)];
        return `${first.from} to ${first.to}\n${table([header, ...rows, ...(keys.length > 0 ? [total] : [])])}`;
      });
    });
}

interface UsageOptions {
  from?: string;
  to?: string;
  groupBy?: GroupKey[];
  projectId?: string;
  agentId?: string;
  actorId?: string;
  modelId?: string;
  limit: number;
}

interface UsageSums {
  model_calls: number;
  input_tokens: number;
  output_tokens: number;
  cost_micro_usd: number;
}

async function usagePage(ctx: Context, orgID: string, query: Record<string, string>, cursor: string | undefined) {
  return unwrap(ctx.client().GET("/api/v1/orgs/{orgID}/usage", { params: { path: { orgID }, query: { ...query, limit: 100, ...(cursor ? { cursor } : {}) } } }));
}

interface BudgetOptions {
  period?: (typeof PERIODS)[number];
  action?: (typeof ACTIONS)[number];
  /** "none" removes the limit (commander turns a parser's null into ""). */
  limitUsd?: number | "none";
  limitTokens?: number | "none";
  notifyAt?: number[];
}

function withBudgetFields(command: Command): Command {
  return command
    .option("--period <period>", `${PERIODS.join(", ")} (UTC; weeks start on Monday)`, oneOf(PERIODS))
    .option("--action <action>", "pause (stop model calls at the limit) or notify (only record notifications)", oneOf(ACTIONS))
    .option("--limit-usd <dollars>", 'a cost limit in US dollars, up to 6 decimals ("none" removes it)', microDollars)
    .option("--limit-tokens <n>", 'a limit on input plus output tokens ("none" removes it)', tokens)
    .option("--notify-at <percents>", "comma-separated percentages of a limit to notify at, e.g. 50,80", percents);
}

function limits(options: BudgetOptions) {
  return {
    ...(options.limitUsd !== undefined ? { limit_micro_usd: options.limitUsd === "none" ? null : options.limitUsd } : {}),
    ...(options.limitTokens !== undefined ? { limit_tokens: options.limitTokens === "none" ? null : options.limitTokens } : {}),
  };
}

function oneOf<T extends string>(values: readonly T[]) {
  return (value: string): T => {
    if (!(values as readonly string[]).includes(value)) throw new InvalidArgumentError(values.join(", "));
    return value as T;
  };
}

function groupKeys(value: string): GroupKey[] {
  const keys = value.split(",").map((k) => k.trim());
  for (const key of keys) if (!(GROUP_KEYS as readonly string[]).includes(key)) throw new InvalidArgumentError(`group by ${GROUP_KEYS.join(", ")}`);
  return keys as GroupKey[];
}

/** Dollars as a decimal string to whole micro-dollars, exactly (no floating point). */
export function microDollars(value: string): number | "none" {
  if (value === "none") return value;
  const match = /^(\d+)(?:\.(\d{1,6}))?$/.exec(value);
  const micros = match ? Number(match[1]) * 1_000_000 + Number((match[2] ?? "").padEnd(6, "0")) : NaN;
  if (!Number.isSafeInteger(micros) || micros < 1) throw new InvalidArgumentError(`not an amount of dollars with up to 6 decimals: ${value}`);
  return micros;
}

function tokens(value: string): number | "none" {
  if (value === "none") return value;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError(`not a positive whole number: ${value}`);
  return n;
}

function percents(value: string): number[] {
  const list = value.split(",").map((p) => Number(p.trim()));
  if (list.some((p) => !Number.isInteger(p) || p < 1 || p > 100)) throw new InvalidArgumentError("whole percentages from 1 to 100, comma-separated");
  return list;
}

/** Micro-dollars as dollars with their six decimals (5265 is $0.005265). */
export function dollars(micros: number): string {
  const whole = Math.floor(micros / 1_000_000);
  return `$${whole}.${String(micros - whole * 1_000_000).padStart(6, "0")}`;
}

interface BudgetView {
  id: string;
  name: string;
  scope: { kind: string; id?: string };
  period: string;
  limit_micro_usd: number | null;
  limit_tokens: number | null;
  action: string;
  notify_at_percent: number[];
  spent_micro_usd: number;
  spent_tokens: number;
  period_start: string;
  period_end: string | null;
  state: string;
  notifications: Array<{ percent: number; created_at: string }>;
}

const scopeText = (scope: BudgetView["scope"]) => (scope.id ? `${scope.kind} ${scope.id}` : scope.kind);

function spentText(b: BudgetView): string {
  return [b.limit_micro_usd !== null ? dollars(b.spent_micro_usd) : null, b.limit_tokens !== null ? `${b.spent_tokens} tokens` : null].filter(Boolean).join(", ");
}

function limitText(b: BudgetView): string {
  return [b.limit_micro_usd !== null ? dollars(b.limit_micro_usd) : null, b.limit_tokens !== null ? `${b.limit_tokens} tokens` : null].filter(Boolean).join(", ");
}

function budgetText(b: BudgetView): string {
  const lines = [
    `${b.name} (${b.id}): ${b.action} at ${limitText(b)} per ${b.period === "total" ? "all time" : b.period}, scope ${scopeText(b.scope)}`,
    `spent ${spentText(b)} since ${b.period_start}${b.period_end ? `, period ends ${b.period_end}` : ""}: ${b.state}`,
  ];
  if (b.notify_at_percent.length > 0) lines.push(`notifies at ${b.notify_at_percent.join(", ")} %`);
  for (const n of b.notifications) lines.push(`  reached ${n.percent} % at ${n.created_at}`);
  return lines.join("\n");
}
