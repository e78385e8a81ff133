import { and, asc, eq, lte, sql, type SQL } from "drizzle-orm";
import { agentRuntimeLocks, agents, agentWakeups } from "../../db/schema/index.js";
import { dbNow, dbSecondsFromNow, epochMs } from "../../db/schema/columns.js";
import { rawRows, type Tx } from "../../platform/db/index.js";
import { builtOnce } from "../../platform/db/prepared.js";
import { newUuid } from "../../platform/ids.js";
import { insertEventSql, newEventRow, type AgentRow } from "./journal.js";
import type { ContextRow } from "../frontier.js";
import { notifyIn } from "../signals.js";
import { budgetStateCte, budgetSummaryColumns, inputOfPausedActorSql, measuredBudget, type BudgetedAgent, type MeasuredBudget, type MeasuredBudgetRow } from "./budgets.js";

/*
 * The claim's SQL (reference design-brief.md §3.1): lock a ready agent, read what its turn needs in one statement,
 * and start a model call (admitting inputs, taking the lease, opening the context) in one more.
 */

export interface ClaimedAgent {
  agent: AgentRow;
  /** Another agent's wakeup is ready too: the caller may wake one more idle slot. */
  moreReady: boolean;
}

/**
 * The oldest ready wakeup of an active agent that no runtime holds, its agent row locked with SKIP
 * LOCKED so concurrent workers never take the same agent.
 */
export async function lockReadyAgent(tx: Tx): Promise<ClaimedAgent | undefined> {
  const [claimed] = await readyAgentForUpdate(tx).execute();
  return claimed;
}

const readyAgentForUpdate = builtOnce((db) =>
  db
    .select({
      agent: agents,
      moreReady: sql<boolean>`EXISTS (SELECT 1 FROM agent_wakeups other WHERE other.ready_at <= ${dbNow} AND other.agent_id <> ${agentWakeups.agentId}
        AND NOT EXISTS (SELECT 1 FROM agent_runtime_locks held WHERE held.agent_id = other.agent_id))`,
    })
    .from(agentWakeups)
    .innerJoin(agents, eq(agents.id, agentWakeups.agentId))
    .where(
      and(
        lte(agentWakeups.readyAt, dbNow),
        eq(agents.state, "active"),
        sql`NOT EXISTS (SELECT 1 FROM ${agentRuntimeLocks} WHERE ${agentRuntimeLocks.agentId} = ${agentWakeups.agentId})`,
      ),
    )
    .orderBy(asc(agentWakeups.readyAt), asc(agentWakeups.agentId))
    .limit(1)
    .for("update", { of: agents, skipLocked: true })
    .prepare("svc_claim_ready_agent"),
);

/** A content input waiting in the backlog, as admission needs it. */
export interface WaitingInput {
  id: string;
  contentBlocks: unknown[];
}

/** Where the latest turn stands, read from the turn row and its own contexts and calls: whether it still has model work. */
export interface TurnProgress {
  turnId: string | null;
  latestPromptSequence: number;
  /** Some tool call of the turn is not completed: the full frontier decides (tool work, waits). */
  callsOpen: boolean;
  /** The turn's latest context after its stop boundary. */
  last: { state: string; recoveryKind: string | null; retryAt: Date | null; retryDue: boolean; attempt: number; operation: "normal" | "compaction" } | null;
  /** Highest watermark a live, uncanceled context of the turn was started with. */
  seen: number;
}

/** The turn's progress, the head of the agent's backlog and its budgets: everything the claim decides on. */
export interface TurnSummary extends TurnProgress {
  steering: WaitingInput[];
  queued: WaitingInput | null;
  /** Budgets that apply to the agent or to the actors of its latest turn and waiting inputs, measured now. */
  budgets: MeasuredBudget[];
  /** The actor of the input that opened the latest turn (read only when some budget applies). */
  turnActorId: string | null;
  /** Some waiting input's sender has an exceeded `pause` budget: it waits, skipped by `steering` and `queued`. */
  blockedWaiting: boolean;
}

interface SummaryRow {
  turn_id: string | null;
  latest_prompt_sequence: number | null;
  calls_open: boolean | null;
  last_state: string | null;
  last_recovery: string | null;
  last_retry_at_ms: number | null;
  last_retry_due: boolean | null;
  last_attempt: number | null;
  last_operation: "normal" | "compaction" | null;
  seen: number | null;
}

interface BacklogRow {
  steering: Array<{ id: string; content_blocks: unknown[] }>;
  queued: { id: string; content_blocks: unknown[] } | null;
  budgets: MeasuredBudgetRow[] | null;
  turn_actor_id: string | null;
  blocked_waiting: boolean;
}

const waitingInput = (agentId: string, mode: "steering" | "queued"): SQL =>
  sql`i.agent_id = ${agentId} AND i.state = 'received' AND i.input_kind = 'content' AND i.delivery_mode = ${mode} AND NOT ${inputOfPausedActorSql}`;

/**
 * Everything the claim decides on, in one statement run after the agent is locked (so it sees every
 * change committed under that lock). It reads only the latest turn's own rows, the backlog's head and the
 * budgets that apply (docs/usage-and-budgets.md, "Enforcement"): its cost does not grow with the timeline.
 * Inputs whose sender's `pause` budget is exceeded are skipped: they wait in order while others run.
 */
export async function readTurnSummary(tx: Tx, agent: BudgetedAgent): Promise<TurnSummary> {
  const agentId = agent.id;
  const backlog = sql`,
        (SELECT coalesce(json_agg(json_build_object('id', i.id, 'content_blocks', i.content_blocks) ORDER BY i.input_rank, i.queued_at, i.id), '[]'::json)
          FROM agent_inputs i WHERE ${waitingInput(agentId, "steering")}) AS steering,
        (SELECT json_build_object('id', i.id, 'content_blocks', i.content_blocks) FROM agent_inputs i
          WHERE ${waitingInput(agentId, "queued")} ORDER BY i.input_rank, i.queued_at, i.id LIMIT 1) AS queued${budgetSummaryColumns(sql`t.id`)},
        EXISTS (SELECT 1 FROM agent_inputs i WHERE i.agent_id = ${agentId} AND i.state = 'received' AND i.input_kind = 'content'
          AND ${inputOfPausedActorSql}) AS blocked_waiting`;
  const [row] = await rawRows<SummaryRow & BacklogRow>(tx, turnStateSql(agentId, backlog, sql`WITH ${budgetStateCte(agent)} `));
  const r = row!;
  const input = (i: { id: string; content_blocks: unknown[] }): WaitingInput => ({ id: i.id, contentBlocks: i.content_blocks });
  return {
    ...progressOf(r),
    steering: r.steering.map(input),
    queued: r.queued ? input(r.queued) : null,
    budgets: (r.budgets ?? []).map(measuredBudget),
    turnActorId: r.turn_actor_id,
    blockedWaiting: r.blocked_waiting,
  };
}

/**
 * The latest turn's progress without the backlog, for a caller that only asks whether the turn has
 * settled (a config change joins an unsettled turn): the backlog's subqueries were most of the
 * statement's time on PGlite.
 */
export async function readTurnProgress(tx: Tx, agentId: string): Promise<TurnProgress> {
  const [row] = await rawRows<SummaryRow>(tx, turnStateSql(agentId, sql``));
  return progressOf(row!);
}

function turnStateSql(agentId: string, extraColumns: SQL, prefix: SQL = sql``): SQL {
  return sql`${prefix}SELECT t.id AS turn_id, t.latest_prompt_sequence::float8 AS latest_prompt_sequence,
        EXISTS (SELECT 1 FROM tool_calls c WHERE c.turn_id = t.id AND c.state <> 'completed') AS calls_open,
        lc.state AS last_state, lc.recovery_kind AS last_recovery, ${epochMs(sql`lc.retry_at`)} AS last_retry_at_ms,
        lc.retry_at <= ${dbNow} AS last_retry_due, lc.attempt_number AS last_attempt, lc.operation_kind AS last_operation,
        (SELECT max(c.input_event_sequence)::float8 FROM model_call_contexts c
          WHERE c.turn_id = t.id AND c.state <> 'canceled' AND c.input_event_sequence >= t.stop_sequence) AS seen${extraColumns}
      FROM (SELECT 1) AS one
      LEFT JOIN LATERAL (SELECT * FROM agent_turns WHERE agent_id = ${agentId} ORDER BY turn_sequence DESC LIMIT 1) t ON true
      LEFT JOIN LATERAL (SELECT * FROM model_call_contexts c WHERE c.turn_id = t.id AND c.input_event_sequence >= t.stop_sequence
        ORDER BY c.created_at DESC, c.attempt_number DESC LIMIT 1) lc ON true`;
}

function progressOf(r: SummaryRow): TurnProgress {
  return {
    turnId: r.turn_id,
    latestPromptSequence: r.latest_prompt_sequence ?? 0,
    callsOpen: r.calls_open ?? false,
    last: r.last_state
      ? {
          state: r.last_state,
          recoveryKind: r.last_recovery,
          retryAt: r.last_retry_at_ms === null ? null : new Date(r.last_retry_at_ms),
          retryDue: r.last_retry_due ?? false,
          attempt: r.last_attempt!,
          operation: r.last_operation!,
        }
      : null,
    seen: r.seen ?? 0,
  };
}

export interface StartModelCall {
  agent: AgentRow;
  workerId: string;
  leaseSeconds: number;
  /** The turn the call belongs to; null opens a new turn with the admitted inputs. */
  turnId: string | null;
  /** Content inputs admitted by this claim: each becomes an opening `agent_input` event. */
  admit: WaitingInput[];
  operation: "normal" | "compaction";
  attempt: number;
}

/** An input admitted by the claim, at the sequence of its event. */
export interface AdmittedInput extends WaitingInput {
  sequence: number;
}

/**
 * Starts a model call in one statement: admits inputs into a new turn (events, counter, resolved
 * inputs), takes the agent's runtime lease, consumes its wakeup and opens the context, notifying
 * followers of the new events on commit. The agent must be locked by `tx`.
 */
export async function startModelCall(tx: Tx, plan: StartModelCall): Promise<{ lockId: string; context: ContextRow; admitted: AdmittedInput[] }> {
  const { agent } = plan;
  const lockId = newUuid();
  const turnId = plan.turnId ?? newUuid();
  const first = agent.nextEventSequence;
  const events = plan.admit.map((input, index) =>
    newEventRow(agent, { turnId, kind: "agent_input", agentInputId: input.id, opening: true, idempotencyKey: `agent_input:${input.id}` }, first + index),
  );
  const watermark = first + events.length - 1;
  const context: ContextRow = {
    id: newUuid(),
    agentId: agent.id,
    turnId,
    operationKind: plan.operation,
    attemptNumber: plan.attempt,
    agentConfigId: agent.currentConfigId,
    inputEventSequence: watermark,
    sourceEventSequenceEnd: null,
    runtimeLockId: lockId,
    state: "started",
    recoveryKind: null,
    retryAt: null,
    errorKind: null,
    errorMessage: null,
    providerResponseId: null,
    inputTokens: null,
    outputTokens: null,
    cacheReadTokens: null,
    cacheWriteTokens: null,
    reasoningTokens: null,
    costMicroUsd: null,
    createdAt: new Date(0),
    completedAt: null,
  };
  const parts: SQL[] = [];
  if (events.length > 0) parts.push(...admission(agent, turnId, events));
  parts.push(
    sql`new_lease AS (INSERT INTO agent_runtime_locks (id, agent_id, worker_id, renewed_at, lease_expires_at)
      VALUES (${lockId}, ${agent.id}, ${plan.workerId}, ${dbNow}, ${dbSecondsFromNow(plan.leaseSeconds)}))`,
    sql`consumed_wakeup AS (DELETE FROM agent_wakeups WHERE agent_id = ${agent.id})`,
    sql`new_context AS (INSERT INTO model_call_contexts (id, agent_id, turn_id, operation_kind, attempt_number, agent_config_id, input_event_sequence, runtime_lock_id)
      VALUES (${context.id}, ${agent.id}, ${turnId}, ${plan.operation}, ${plan.attempt}, ${agent.currentConfigId}, ${watermark}, ${lockId}) RETURNING created_at)`,
  );
  const notify = events.length > 0 ? sql`, ${notifyIn.events(agent.id)}` : sql``;
  const [row] = await rawRows<{ created_ms: number }>(tx, sql`WITH ${sql.join(parts, sql`, `)} SELECT ${epochMs(sql`created_at`)} AS created_ms${notify} FROM new_context`);
  agent.nextEventSequence = watermark + 1;
  return {
    lockId,
    context: { ...context, createdAt: new Date(row!.created_ms) },
    admitted: plan.admit.map((input, index) => ({ ...input, sequence: first + index })),
  };
}

/** The parts of the start statement that open a turn with the admitted inputs' events (reference design-brief.md §3.2). */
function admission(agent: AgentRow, turnId: string, events: ReturnType<typeof newEventRow>[]): SQL[] {
  const last = events.at(-1)!;
  const rows = JSON.stringify(events.map((e) => ({ id: e.id, sequence: e.sequence, agent_input_id: e.agentInputId, idempotency_key: e.idempotencyKey })));
  const first = events[0]!;
  return [
    sql`new_turn AS (INSERT INTO agent_turns (id, agent_id, turn_sequence, event_count, latest_event_id, latest_semantic_event_id, latest_prompt_sequence)
      VALUES (${turnId}, ${agent.id}, (SELECT coalesce(max(turn_sequence), 0) + 1 FROM agent_turns WHERE agent_id = ${agent.id}),
        ${events.length}, ${last.id}, ${last.id}, ${last.sequence}))`,
    events.length === 1
      ? sql`new_events AS (${insertEventSql(first)})`
      : sql`new_events AS (INSERT INTO agent_events (id, agent_id, turn_id, sequence, event_kind, is_opening_event, agent_input_id, idempotency_key)
          SELECT e.id, ${agent.id}::uuid, ${turnId}::uuid, e.sequence, 'agent_input', true, e.agent_input_id, e.idempotency_key
          FROM json_to_recordset(${rows}::json) AS e(id uuid, sequence bigint, agent_input_id uuid, idempotency_key text))`,
    sql`admitted_inputs AS (UPDATE agent_inputs i SET state = 'resolved', resolved_at = ${dbNow}, admitted_event_id = e.id
      FROM json_to_recordset(${rows}::json) AS e(id uuid, agent_input_id uuid) WHERE i.id = e.agent_input_id)`,
    sql`advanced_counter AS (UPDATE agents SET next_event_sequence = ${last.sequence + 1} WHERE id = ${agent.id})`,
  ];
}
