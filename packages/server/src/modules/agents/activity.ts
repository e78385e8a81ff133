import { sql, type SQL } from "drizzle-orm";
import { Type, type Static } from "typebox";
import { component } from "../../platform/http/components.js";
import { Timestamp } from "../../platform/http/schemas.js";
import { failureWithPlan, MAX_MODEL_ATTEMPTS } from "../../runtime/outcomes.js";
import { BUDGET_WAIT } from "../../runtime/store/budgets.js";

/*
 * What an agent is doing now, read from the records the engine already keeps (no new column, nothing
 * written by the engine's step path): open interactions, the latest turn's model call contexts (a failed
 * one with recovery `retry` is a durable retry, runtime/outcomes.ts), unfinished tool calls, the runtime
 * lease, the work queue, and the turn's latest events (a `cancel_current` control input, a model output
 * with stop reason `error`). One scalar subquery per agent row: lists select it alongside each row, so a
 * page costs no extra statement and the `activity` filter pages like any other condition.
 */

export const ACTIVITY_STATUSES = ["running", "retrying", "waiting", "paused", "idle", "failed", "cancelled", "archived"] as const;
export type ActivityStatus = (typeof ACTIVITY_STATUSES)[number];

const strict = { additionalProperties: false } as const;

export const AgentActivity = component("AgentActivity", Type.Object(
  {
    status: Type.Enum([...ACTIVITY_STATUSES], {
      description:
        "running: a model call or tool work is under way or due; retrying: a model call failed and svc tries again at " +
        "next_attempt_at; waiting: open interactions wait for a person; idle: nothing to do; failed: the latest turn ended with " +
        "an error; cancelled: the latest turn was stopped; paused: an exceeded budget holds its next model call until the " +
        "period ends or the budget is raised or deleted (docs/usage-and-budgets.md); archived.",
    }),
    since: Timestamp,
    detail: Type.Optional(Type.String({ description: "What it is doing or waiting for, or why it failed, in words." })),
    attempt: Type.Optional(Type.Integer({ minimum: 1 })),
    max_attempts: Type.Optional(Type.Integer({ minimum: 1 })),
    next_attempt_at: Type.Optional(Timestamp),
    open_interactions: Type.Optional(Type.Integer({ minimum: 0, description: "Open approvals and questions; present when waiting." })),
  },
  strict,
));

export type AgentActivityView = Static<typeof AgentActivity>;

/** The subquery's JSON: the status and the facts its view is made from (timestamps as PostgreSQL writes them). */
export interface ActivityFacts {
  status: ActivityStatus;
  since: string;
  open_n: number;
  open_kind: string | null;
  open_tool: string | null;
  tool_n: number;
  tool_name: string | null;
  ctx_id: string | null;
  ctx_state: string | null;
  attempt: number | null;
  retry_at: string | null;
  retry_delay_ms: number | null;
  error_kind: string | null;
  error_message: string | null;
  failure_text: string | null;
}

/**
 * The activity of the agent whose id is `agentId` (a column or parameter) and whose state and timestamps
 * are `agent` columns, as one jsonb value. Every lookup goes through an index: turns by (agent_id,
 * turn_sequence), contexts and tool calls by turn, interactions by agent, locks and wakeups by agent.
 */
export function activityFacts(agent: { id: SQL; state: SQL; archivedAt: SQL; updatedAt: SQL }): SQL<ActivityFacts> {
  return sql<ActivityFacts>`(SELECT jsonb_build_object(
      'status', CASE
        WHEN ${agent.state} = 'archived' THEN 'archived'
        WHEN oi.n > 0 THEN 'waiting'
        WHEN lei.control_type = 'cancel_current' THEN 'cancelled'
        WHEN mc.state = 'failed' AND mc.recovery_kind = 'retry' THEN 'retrying'
        WHEN w.reason = ${BUDGET_WAIT} AND rl.agent_id IS NULL THEN 'paused'
        WHEN rl.agent_id IS NOT NULL OR mc.state = 'started' OR mc.recovery_kind = 'compact' OR tc.n > 0
          OR w.ready_at <= statement_timestamp() THEN 'running'
        WHEN lso.stop_reason = 'error' THEN 'failed'
        ELSE 'idle' END,
      'since', CASE
        WHEN ${agent.state} = 'archived' THEN ${agent.archivedAt}
        WHEN oi.n > 0 THEN oi.since
        WHEN lei.control_type = 'cancel_current' THEN le.created_at
        WHEN mc.state = 'failed' AND mc.recovery_kind = 'retry' THEN mc.completed_at
        WHEN w.reason = ${BUDGET_WAIT} AND rl.agent_id IS NULL THEN w.updated_at
        WHEN rl.agent_id IS NOT NULL THEN rl.created_at
        WHEN mc.state = 'started' THEN mc.created_at
        ELSE coalesce(le.created_at, ${agent.updatedAt}) END,
      'open_n', oi.n, 'open_kind', fi.interaction_kind, 'open_tool', fi.tool_name,
      'tool_n', tc.n, 'tool_name', tc.name,
      'ctx_id', mc.id, 'ctx_state', mc.state, 'attempt', mc.attempt_number, 'retry_at', mc.retry_at,
      'retry_delay_ms', (extract(epoch from (mc.retry_at - mc.completed_at)) * 1000)::float8,
      'error_kind', mc.error_kind, 'error_message', mc.error_message,
      'failure_text', CASE WHEN lso.stop_reason = 'error' THEN lso.content_blocks -> 0 ->> 'text' END)
    FROM (SELECT count(*)::int AS n, min(i.created_at) AS since FROM agent_interactions i WHERE i.agent_id = ${agent.id} AND i.state = 'open') oi
    LEFT JOIN LATERAL (
      SELECT i.interaction_kind, c.name AS tool_name FROM agent_interactions i JOIN tool_calls c ON c.id = i.tool_call_id
      WHERE i.agent_id = ${agent.id} AND i.state = 'open' ORDER BY i.created_at, i.id LIMIT 1) fi ON true
    LEFT JOIN LATERAL (
      SELECT t.id, t.latest_event_id, t.latest_semantic_event_id FROM agent_turns t WHERE t.agent_id = ${agent.id}
      ORDER BY t.turn_sequence DESC LIMIT 1) lt ON true
    LEFT JOIN LATERAL (
      SELECT m.id, m.state, m.recovery_kind, m.retry_at, m.attempt_number, m.error_kind, m.error_message, m.created_at, m.completed_at
      FROM model_call_contexts m WHERE m.turn_id = lt.id ORDER BY m.created_at DESC, m.id DESC LIMIT 1) mc ON true
    LEFT JOIN LATERAL (
      SELECT count(*)::int AS n, min(c.name) AS name FROM tool_calls c WHERE c.turn_id = lt.id AND c.state <> 'completed') tc ON true
    LEFT JOIN agent_events le ON le.id = lt.latest_event_id
    LEFT JOIN agent_inputs lei ON lei.id = le.agent_input_id
    LEFT JOIN agent_events lse ON lse.id = lt.latest_semantic_event_id
    LEFT JOIN model_outputs lso ON lso.id = lse.model_output_id
    LEFT JOIN agent_runtime_locks rl ON rl.agent_id = ${agent.id}
    LEFT JOIN agent_wakeups w ON w.agent_id = ${agent.id})`;
}

/** The status alone, for the list's `activity` filter. */
export function activityStatusOf(facts: SQL<ActivityFacts>): SQL<string> {
  return sql<string>`(${facts} ->> 'status')`;
}

const isoOf = (pgTime: string): string => new Date(pgTime).toISOString();

/** The API's view: the status, since when, and what it is about in words. */
export function activityView(facts: ActivityFacts): AgentActivityView {
  const view: AgentActivityView = { status: facts.status, since: isoOf(facts.since) };
  switch (facts.status) {
    case "waiting": {
      view.open_interactions = facts.open_n;
      const what = facts.open_kind === "question" ? "an answer" : "an approval";
      const tool = facts.open_tool ? ` (${facts.open_tool})` : "";
      view.detail = facts.open_n > 1 ? `${what}${tool} and ${facts.open_n - 1} more` : `${what}${tool}`;
      break;
    }
    case "retrying": {
      const attempt = facts.attempt ?? 1;
      view.attempt = attempt;
      view.max_attempts = MAX_MODEL_ATTEMPTS;
      if (facts.retry_at) view.next_attempt_at = isoOf(facts.retry_at);
      // Worded as the live timeline and the log word it (runtime/outcomes.ts), with the delay svc chose.
      const failure = { kind: facts.error_kind ?? "model_error", message: facts.error_message ?? "the model call failed", retryable: true, retryAfterMs: Math.max(0, facts.retry_delay_ms ?? 0) };
      view.detail = failureWithPlan({ id: facts.ctx_id ?? "", attemptNumber: attempt }, failure);
      break;
    }
    case "paused":
      // The budget_exceeded event in its timeline names the budget and its period's end.
      view.detail = "paused by a budget";
      break;
    case "running":
      if (facts.ctx_state === "started") view.detail = "calling the model";
      else if (facts.tool_n > 0 && facts.tool_name) view.detail = facts.tool_n > 1 ? `running ${facts.tool_name} and ${facts.tool_n - 1} more tools` : `running ${facts.tool_name}`;
      break;
    case "failed":
      if (facts.failure_text) view.detail = facts.failure_text;
      break;
    default:
      break;
  }
  return view;
}
