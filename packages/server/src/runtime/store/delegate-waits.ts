import { sql } from "drizzle-orm";
import { dbNow, epochMs } from "../../db/schema/columns.js";
import { rawRows, type Tx } from "../../platform/db/index.js";
import { BUDGET_WAIT } from "./budgets.js";

/*
 * The engine's delegation statements (docs/delegation.md): what a coordinator's waiting call waits for
 * (`delegate_waits`), and where a child's turn stands. Only the coordinator's claim and its tool work
 * run them, under the coordinator's lock; a child is read, never locked, here.
 */

export interface DelegateWait {
  childAgentId: string;
  inputId: string | null;
  /** The deadline, in epoch ms, when one was set (await_delegates). */
  deadlineMs: number | null;
  /** The deadline has passed by the database clock. */
  expired: boolean;
}

export async function insertWaits(tx: Tx, orgId: string, coordinatorId: string, toolCallId: string, waits: Array<{ childAgentId: string; inputId: string | null }>, timeoutSeconds?: number): Promise<void> {
  const deadline = timeoutSeconds === undefined ? sql`NULL::timestamptz` : sql`${dbNow} + make_interval(secs => ${timeoutSeconds})`;
  await tx.execute(sql`INSERT INTO delegate_waits (tool_call_id, org_id, coordinator_agent_id, child_agent_id, input_id, deadline)
    SELECT ${toolCallId}::uuid, ${orgId}::uuid, ${coordinatorId}::uuid, w.child, w.input, ${deadline}
    FROM jsonb_to_recordset(${JSON.stringify(waits.map((w) => ({ child: w.childAgentId, input: w.inputId })))}::jsonb) AS w(child uuid, input uuid)
    ON CONFLICT DO NOTHING`);
}

/** The waits of the given calls, in the order they were written. */
export async function waitsOf(tx: Tx, toolCallIds: readonly string[]): Promise<Map<string, DelegateWait[]>> {
  const rows = await rawRows<{ tool_call_id: string; child_agent_id: string; input_id: string | null; deadline_ms: number | null; expired: boolean }>(
    tx,
    sql`SELECT tool_call_id, child_agent_id, input_id, ${epochMs(sql`deadline`)} AS deadline_ms, coalesce(deadline <= ${dbNow}, false) AS expired
      FROM delegate_waits WHERE tool_call_id = ANY(${`{${toolCallIds.join(",")}}`}::uuid[]) ORDER BY created_at, child_agent_id`,
  );
  const waits = new Map<string, DelegateWait[]>();
  for (const row of rows) {
    const list = waits.get(row.tool_call_id) ?? [];
    list.push({ childAgentId: row.child_agent_id, inputId: row.input_id, deadlineMs: row.deadline_ms, expired: row.expired });
    waits.set(row.tool_call_id, list);
  }
  return waits;
}

/** How a child's turn ended: its final output's blocks, or why there is none. */
export interface TurnEnding {
  /** The turn's last model output, if any, and whether it is the error output of a failed turn. */
  output: { blocks: unknown[]; failed: boolean } | null;
  /** A cancel came after the last output (or there is none). */
  canceled: boolean;
  /** That stop was a `budget_exceeded` event: a budget ended the turn before it answered. */
  budgetStopped: boolean;
}

/**
 * How the turn that admitted `inputId` ended, or the child's latest turn when there is no input: its last
 * model output (a `stop_reason: error` output is a failed turn) and whether a cancel followed it.
 */
export async function turnEnding(tx: Tx, childId: string, inputId: string | null): Promise<TurnEnding> {
  const turn = inputId
    ? sql`(SELECT e.turn_id FROM agent_inputs i JOIN agent_events e ON e.id = i.admitted_event_id WHERE i.id = ${inputId}::uuid)`
    : sql`(SELECT t.id FROM agent_turns t WHERE t.agent_id = ${childId}::uuid ORDER BY t.turn_sequence DESC LIMIT 1)`;
  const [row] = await rawRows<{ blocks: unknown[] | null; stop_reason: string | null; output_sequence: number | null; stop_sequence: number | null; budget_stopped: boolean | null }>(
    tx,
    sql`WITH turn AS (SELECT t.id, t.stop_sequence FROM agent_turns t WHERE t.id = ${turn}),
      last_output AS (
        SELECT o.content_blocks, o.stop_reason, e.sequence FROM agent_events e JOIN model_outputs o ON o.id = e.model_output_id
        WHERE e.turn_id = (SELECT id FROM turn) AND e.event_kind = 'model_output' ORDER BY e.sequence DESC LIMIT 1
      )
      SELECT (SELECT content_blocks FROM last_output) AS blocks, (SELECT stop_reason FROM last_output) AS stop_reason,
        (SELECT sequence FROM last_output)::float8 AS output_sequence, (SELECT stop_sequence FROM turn)::float8 AS stop_sequence,
        EXISTS (SELECT 1 FROM agent_events e WHERE e.turn_id = (SELECT id FROM turn) AND e.event_kind = 'budget_exceeded'
          AND e.sequence = (SELECT stop_sequence FROM turn)) AS budget_stopped`,
  );
  const outputSequence = row?.output_sequence ?? null;
  const stopSequence = row?.stop_sequence ?? 0;
  const output = row?.blocks ? { blocks: row.blocks, failed: row.stop_reason === "error" } : null;
  const canceled = stopSequence > 0 && (outputSequence === null || stopSequence > outputSequence);
  return { output, canceled, budgetStopped: canceled && row?.budget_stopped === true };
}

/** What holds a child paused by a budget: the budget and its period's end, from its latest `budget_exceeded` event. */
export interface BudgetHold {
  budgetId: string | null;
  periodEnd: string | null;
}

/**
 * The budget that holds the child now, if one does: as the agent's `activity` says `paused`
 * (modules/agents/activity.ts), its wakeup waits for a budget and no worker runs it, and that wakeup is
 * still ahead (a raised budget makes it due at once, and the child runs again).
 */
export async function budgetHold(tx: Tx, childId: string): Promise<BudgetHold | undefined> {
  const [row] = await rawRows<{ budget_id: string | null; period_end: string | null }>(
    tx,
    sql`SELECT p.payload ->> 'budget_id' AS budget_id, p.payload ->> 'period_end' AS period_end
      FROM agent_wakeups w
      LEFT JOIN LATERAL (SELECT e.payload FROM agent_events e WHERE e.agent_id = w.agent_id AND e.event_kind = 'budget_exceeded' ORDER BY e.sequence DESC LIMIT 1) p ON true
      WHERE w.agent_id = ${childId}::uuid AND w.reason = ${BUDGET_WAIT} AND w.ready_at > ${dbNow}
        AND NOT EXISTS (SELECT 1 FROM agent_runtime_locks rl WHERE rl.agent_id = w.agent_id)`,
  );
  return row ? { budgetId: row.budget_id, periodEnd: row.period_end } : undefined;
}

/** How many children the coordinator has launched, archived ones included (the fan-out limit counts every launch). */
export async function countChildren(tx: Tx, coordinatorId: string): Promise<number> {
  const [row] = await rawRows<{ n: number }>(tx, sql`SELECT count(*)::int AS n FROM agents WHERE parent_agent_id = ${coordinatorId}::uuid`);
  return row?.n ?? 0;
}

/**
 * The agents among `ids` (any state) with their parent, to check a coordinator names only its own children,
 * and what a child's turn summary needs to measure its budgets.
 */
export async function agentsByIds(tx: Tx, ids: readonly string[]): Promise<Map<string, DelegateAgent>> {
  if (ids.length === 0) return new Map();
  const rows = await rawRows<{ id: string; org_id: string; project_id: string; agent_profile_id: string | null; parent_agent_id: string | null; state: string }>(
    tx,
    sql`SELECT id, org_id, project_id, agent_profile_id, parent_agent_id, state FROM agents WHERE id = ANY(${`{${ids.join(",")}}`}::uuid[])`,
  );
  return new Map(
    rows.map((row) => [
      row.id,
      { id: row.id, orgId: row.org_id, projectId: row.project_id, agentProfileId: row.agent_profile_id, parentAgentId: row.parent_agent_id, state: row.state },
    ]),
  );
}

export interface DelegateAgent {
  id: string;
  orgId: string;
  projectId: string;
  agentProfileId: string | null;
  parentAgentId: string | null;
  state: string;
}
