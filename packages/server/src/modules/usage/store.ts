import { sql, type SQL } from "drizzle-orm";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { rawRows } from "../../platform/db/index.js";
import type { UsageKey } from "./schemas.js";

type Db = AppDb | Tx;

/*
 * Reading the daily usage rollups (`usage_daily`, written by runtime/store/usage.ts). A read sums rows of
 * whole UTC days; it never looks at events.
 */

/** Stands for "none" in a nullable key's sort value: no UUIDv7 is all zeros, so it sorts before every real id. */
export const NO_ID = "00000000-0000-0000-0000-000000000000";

// A literal, not a parameter: the select list, GROUP BY and HAVING must spell the same expression, and two
// parameters are two expressions to PostgreSQL.
const noId = sql.raw(`'${NO_ID}'::uuid`);

const KEY_COLUMNS: Record<UsageKey, SQL> = {
  project: sql`project_id`,
  agent: sql`agent_id`,
  agent_profile: sql`coalesce(agent_profile_id, ${noId})`,
  // Who sent the turn's opening input: its actor, else the org API key that sent it naming none ("key:" then
  // the key's id), else nobody (''); views.ts splits it into actor_id and api_key_id.
  actor: sql`coalesce(actor_id::text, 'key:' || api_key_id::text, '')`,
  model: sql`configured_model_id`,
  day: sql`day`,
};

const KEY_TYPES: Record<UsageKey, SQL> = {
  project: sql`uuid`,
  agent: sql`uuid`,
  agent_profile: sql`uuid`,
  actor: sql`text`,
  model: sql`uuid`,
  day: sql`date`,
};

export interface UsageSelection {
  orgId: string;
  /** The first UTC day counted and the first one after the range, as `YYYY-MM-DD`. */
  firstDay: string;
  endDay: string;
  /** A subquery of the project ids the caller may read; undefined reads every project of the org. */
  readableProjects?: SQL;
  projectId?: string;
  agentId?: string;
  actorId?: string;
  modelId?: string;
}

export interface UsageSums {
  model_calls: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_write_input_tokens: number;
  cost_micro_usd: number;
}

/** One group: its key values (`k0`…, in the order asked; NO_ID for a null id) and its sums. */
export type UsageGroupRow = UsageSums & Record<`k${number}`, string>;

const SUMS = sql`coalesce(sum(model_calls), 0)::float8 AS model_calls, coalesce(sum(input_tokens), 0)::float8 AS input_tokens,
  coalesce(sum(output_tokens), 0)::float8 AS output_tokens, coalesce(sum(cache_read_input_tokens), 0)::float8 AS cache_read_input_tokens,
  coalesce(sum(cache_write_input_tokens), 0)::float8 AS cache_write_input_tokens, coalesce(sum(cost_micro_usd), 0)::float8 AS cost_micro_usd`;

/**
 * One page of groups (`limit + 1` rows, sorted by their keys, after `after`) and the totals over every
 * group, in one statement so that both see the same rows. Sums are float8: exact below 2^53.
 */
export async function usagePage(
  db: Db,
  selection: UsageSelection,
  keys: readonly UsageKey[],
  page: { limit: number; after?: string[] },
): Promise<{ groups: UsageGroupRow[]; totals: UsageSums }> {
  const columns = keys.map((key) => KEY_COLUMNS[key]);
  const named = columns.map((column, i) => sql`${column} AS ${sql.raw(`k${i}`)}`);
  const after = page.after
    ? sql`HAVING (${sql.join(columns, sql`, `)}) > (${sql.join(page.after.map((value, i) => sql`${value}::${KEY_TYPES[keys[i]!]}`), sql`, `)})`
    : sql``;
  const order = keys.map((_, i) => sql.raw(`g.k${i}`));
  const groups =
    keys.length === 0
      ? sql`SELECT ${SUMS} FROM picked HAVING count(*) > 0`
      : sql`SELECT ${sql.join(named, sql`, `)}, ${SUMS} FROM picked GROUP BY ${sql.join(columns, sql`, `)} ${after}
          ORDER BY ${sql.join(columns, sql`, `)} LIMIT ${page.limit + 1}`;
  const [row] = await rawRows<{ groups: UsageGroupRow[]; totals: UsageSums }>(
    db,
    sql`WITH picked AS MATERIALIZED (
        SELECT * FROM usage_daily WHERE ${where(selection)}
      )
      SELECT (SELECT coalesce(json_agg(g${order.length > 0 ? sql` ORDER BY ${sql.join(order, sql`, `)}` : sql``}), '[]') FROM (${groups}) g) AS groups,
        (SELECT row_to_json(t) FROM (SELECT ${SUMS} FROM picked) t) AS totals`,
  );
  return row!;
}

function where(s: UsageSelection): SQL {
  const conditions = [sql`org_id = ${s.orgId}`, sql`day >= ${s.firstDay}::date`, sql`day < ${s.endDay}::date`];
  if (s.readableProjects) conditions.push(sql`project_id IN (${s.readableProjects})`);
  if (s.projectId) conditions.push(sql`project_id = ${s.projectId}`);
  if (s.agentId) conditions.push(sql`agent_id = ${s.agentId}`);
  if (s.actorId) conditions.push(sql`actor_id = ${s.actorId}`);
  if (s.modelId) conditions.push(sql`configured_model_id = ${s.modelId}`);
  return sql.join(conditions, sql` AND `);
}

/** The current UTC month by the database clock: its first day and the next month's, as `YYYY-MM-DD`. */
export async function currentMonth(db: Db): Promise<{ first: string; next: string }> {
  const [row] = await rawRows<{ first: string; next: string }>(
    db,
    sql`SELECT to_char(m, 'YYYY-MM-DD') AS first, to_char(m + interval '1 month', 'YYYY-MM-DD') AS next
      FROM (SELECT date_trunc('month', statement_timestamp() AT TIME ZONE 'UTC') AS m) x`,
  );
  return row!;
}
