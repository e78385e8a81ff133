import { sql, type SQL } from "drizzle-orm";
import type { AgentRow } from "./journal.js";
import type { ModelReply } from "./record.js";

/**
 * The upsert that adds one recorded model call to its day's usage row (docs/usage-and-budgets.md), for the
 * record statement to run beside the event it writes (`owned` is that statement's guard: nothing is added
 * when the step no longer owns its call). The row is keyed by the agent's org, project and profile, the
 * model, the UTC day of the database clock, and the actor of the input that opened the turn (its first
 * opening event, found by the turn's index on events).
 */
export function usageRollupSql(agent: AgentRow, turnId: string, reply: ModelReply): SQL {
  const { usage } = reply;
  return sql`INSERT INTO usage_daily AS u (org_id, day, project_id, agent_id, agent_profile_id, actor_id, configured_model_id, model_calls,
      input_tokens, output_tokens, cache_read_input_tokens, cache_write_input_tokens, reasoning_output_tokens, cost_micro_usd)
    SELECT ${agent.orgId}::uuid, (statement_timestamp() AT TIME ZONE 'UTC')::date, ${agent.projectId}::uuid, ${agent.id}::uuid,
      ${agent.agentProfileId}::uuid,
      (SELECT i.actor_id FROM agent_events e JOIN agent_inputs i ON i.id = e.agent_input_id
        WHERE e.turn_id = ${turnId} AND e.is_opening_event ORDER BY e.sequence LIMIT 1),
      ${reply.configuredModelId}::uuid, 1, ${usage.inputTokens}::bigint, ${usage.outputTokens}::bigint, ${usage.cacheReadTokens}::bigint,
      ${usage.cacheWriteTokens}::bigint, ${usage.reasoningTokens}::bigint, ${reply.costMicroUsd}::bigint
    FROM owned
    ON CONFLICT ON CONSTRAINT usage_daily_key DO UPDATE SET
      model_calls = u.model_calls + 1,
      input_tokens = u.input_tokens + excluded.input_tokens,
      output_tokens = u.output_tokens + excluded.output_tokens,
      cache_read_input_tokens = u.cache_read_input_tokens + excluded.cache_read_input_tokens,
      cache_write_input_tokens = u.cache_write_input_tokens + excluded.cache_write_input_tokens,
      reasoning_output_tokens = u.reasoning_output_tokens + excluded.reasoning_output_tokens,
      cost_micro_usd = u.cost_micro_usd + excluded.cost_micro_usd`;
}
