import { sql, type SQL } from "drizzle-orm";
import { rawRows, type Tx } from "../../platform/db/index.js";
import { USAGE_SCOPE_SHARDS } from "../../db/schema/usage.js";
import type { AgentRow } from "./journal.js";
import type { ModelReply } from "./record.js";

/** What the rollup counts of a model call: its token usage, its cost and the configured model it used. */
export type CostedCall = Pick<ModelReply, "usage" | "costMicroUsd" | "configuredModelId">;

/**
 * The upserts that add one recorded model call to its day's usage rows (docs/usage-and-budgets.md), as the
 * record statement's CTEs `usage_rollup` and `usage_scope_rollup` beside the event it writes (`owned` is that
 * statement's guard: nothing is added when the step no longer owns its call). The `usage_daily` row is keyed
 * by the agent's org, project and profile, the model, the UTC day of the database clock, and who sent the
 * input that opened the turn (its first opening event, found by the turn's index on events): its actor, or the
 * organization API key that sent it naming none. The same call is added to the day's `usage_scope_daily` row of
 * each budget scope it counts in (the org, project, profile, agent and actor of that row, the ones it has), in
 * the agent's shard of that day.
 */
export function usageRollupCtes(agent: AgentRow, turnId: string, reply: CostedCall): SQL {
  const { usage } = reply;
  return sql`usage_rollup AS (INSERT INTO usage_daily AS u (org_id, day, project_id, agent_id, agent_profile_id, actor_id, api_key_id, configured_model_id, model_calls,
      input_tokens, output_tokens, cache_read_input_tokens, cache_write_input_tokens, reasoning_output_tokens, cost_micro_usd)
    SELECT ${agent.orgId}::uuid, (statement_timestamp() AT TIME ZONE 'UTC')::date, ${agent.projectId}::uuid, ${agent.id}::uuid,
      ${agent.agentProfileId}::uuid,
      opener.actor_id, opener.api_key_id,
      ${reply.configuredModelId}::uuid, 1, ${usage.inputTokens}::bigint, ${usage.outputTokens}::bigint, ${usage.cacheReadTokens}::bigint,
      ${usage.cacheWriteTokens}::bigint, ${usage.reasoningTokens}::bigint, ${reply.costMicroUsd}::bigint
    FROM owned LEFT JOIN LATERAL (SELECT i.actor_id, i.api_key_id FROM agent_events e JOIN agent_inputs i ON i.id = e.agent_input_id
        WHERE e.turn_id = ${turnId} AND e.is_opening_event ORDER BY e.sequence LIMIT 1) opener ON true
    ON CONFLICT ON CONSTRAINT usage_daily_key DO UPDATE SET
      model_calls = u.model_calls + 1,
      input_tokens = u.input_tokens + excluded.input_tokens,
      output_tokens = u.output_tokens + excluded.output_tokens,
      cache_read_input_tokens = u.cache_read_input_tokens + excluded.cache_read_input_tokens,
      cache_write_input_tokens = u.cache_write_input_tokens + excluded.cache_write_input_tokens,
      reasoning_output_tokens = u.reasoning_output_tokens + excluded.reasoning_output_tokens,
      cost_micro_usd = u.cost_micro_usd + excluded.cost_micro_usd
    RETURNING u.org_id, u.day, u.project_id, u.agent_profile_id, u.agent_id, u.actor_id),
    usage_scope_rollup AS (INSERT INTO usage_scope_daily AS s (org_id, scope_kind, scope_id, day, shard, input_tokens, output_tokens, cost_micro_usd)
      SELECT r.org_id, scope.kind, scope.id, r.day, ${shardOf(agent.id)}::smallint, ${usage.inputTokens}::bigint, ${usage.outputTokens}::bigint, ${reply.costMicroUsd}::bigint
      FROM usage_rollup r CROSS JOIN LATERAL (VALUES ('org', r.org_id), ('project', r.project_id), ('agent_profile', r.agent_profile_id),
        ('agent', r.agent_id), ('actor', r.actor_id)) AS scope(kind, id)
      WHERE scope.id IS NOT NULL
      ON CONFLICT ON CONSTRAINT usage_scope_daily_pkey DO UPDATE SET
        input_tokens = s.input_tokens + excluded.input_tokens,
        output_tokens = s.output_tokens + excluded.output_tokens,
        cost_micro_usd = s.cost_micro_usd + excluded.cost_micro_usd)`;
}

/**
 * Adds a compaction's summary call to the usage rollup (it is a model call, billed like any): its own
 * statement, on the compaction's record path only, so a plain step costs what it did.
 */
export async function addCompactionUsage(tx: Tx, agent: AgentRow, turnId: string, call: CostedCall): Promise<void> {
  await rawRows(tx, sql`WITH owned AS (SELECT 1), ${usageRollupCtes(agent, turnId, call)} SELECT 1`);
}

/** The agent's shard of a scope's day (schema/usage.ts): from the random end of its id. */
function shardOf(agentId: string): number {
  return Number.parseInt(agentId.slice(-2), 16) % USAGE_SCOPE_SHARDS;
}
