import { and, eq, inArray, sql } from "drizzle-orm";
import { processActions, processes, toolCalls } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { lockAgent } from "./journal.js";
import { completeToolCall, textBlock, type ToolOutcome } from "./tool-calls.js";
import { encodeId } from "../../platform/ids.js";

type Db = AppDb | Tx;
export type ProcessRow = typeof processes.$inferSelect;
export type ProcessActionRow = typeof processActions.$inferSelect;
export type ActionKind = "write" | "read" | "interrupt" | "terminate";
export const OPEN_ACTION_STATES = ["queued", "accepted"] as const;
export type ProcessState = "queued" | "starting" | "running" | "exited" | "failed" | "killed" | "unknown";
export const TERMINAL_PROCESS_STATES: ReadonlySet<string> = new Set(["exited", "failed", "killed", "unknown"]);

/**
 * Connected daemons listen here for "machine M has work": the payload is the machine's id. Sent inside the
 * transaction that queues the work, so it arrives on commit; a lost hint is made up by the daemon's next
 * heartbeat, which looks for queued work too.
 */
export const DAEMON_WORK_CHANNEL = "svc_daemon_work";

export async function notifyDaemonWork(tx: Db, machineId: string): Promise<void> {
  await tx.execute(sql`SELECT pg_notify(${DAEMON_WORK_CHANNEL}, ${machineId}::text)`);
}

export async function insertProcess(tx: Db, row: typeof processes.$inferInsert): Promise<ProcessRow> {
  const [created] = await tx.insert(processes).values(row).returning();
  return created!;
}

/**
 * Ends a process with its final state and completes its run_command call with `blocks`, in the caller's
 * transaction, exactly once: a process already terminal is left as it is (a report sent twice, or after a
 * settlement) and `false` is returned. A call no longer waiting (the turn was canceled) keeps its result.
 */
export async function settleProcess(
  tx: Tx,
  process: ProcessRow,
  end: { state: Exclude<ProcessState, "queued" | "starting" | "running">; exitCode: number | null; exitSignal: string | null; reason: string; startedAt: Date | null; endedAt: Date | null; outputBytes: number },
  result: { outcome: ToolOutcome; blocks: unknown[] },
): Promise<boolean> {
  const agent = await lockAgent(tx, process.agentId);
  if (!agent) return false;
  const [ended] = await tx
    .update(processes)
    .set({
      state: end.state,
      exitCode: end.exitCode,
      exitSignal: end.exitSignal,
      reason: end.reason,
      outputBytes: end.outputBytes,
      sourceStartedAt: end.startedAt,
      sourceEndedAt: end.endedAt,
      updatedAt: dbNow,
    })
    .where(and(eq(processes.id, process.id), sql`${processes.state} NOT IN ('exited', 'failed', 'killed', 'unknown')`))
    .returning();
  if (!ended) return false;
  const [call] = await tx.select().from(toolCalls).where(and(eq(toolCalls.id, process.toolCallId), eq(toolCalls.state, "waiting")));
  if (call) {
    await completeToolCall(tx, agent, call, result.outcome, result.blocks, { wake: "process_finished" });
  }
  return true;
}

/**
 * Ends a process svc can no longer follow (its daemon lost it, its machine was deleted, its binding
 * released) as `unknown`; a call still waiting for it fails with `reason`. It is never offered again.
 */
export async function abandonProcess(tx: Tx, process: ProcessRow, reason: string): Promise<void> {
  const result = { process_id: encodeId("process", process.id), state: "unknown", command: process.command, done: true, exit_code: null, reason };
  // Its queued and accepted actions can no longer be applied (or told apart from not applied): they fail with it.
  for (const action of await openActions(tx, process.id)) {
    await settleAction(tx, action, action.state === "accepted" ? "unknown" : "failed", reason, { outcome: "failed", blocks: [textBlock(reason)] });
  }
  await settleProcess(
    tx,
    process,
    { state: "unknown", exitCode: null, exitSignal: null, reason, startedAt: null, endedAt: null, outputBytes: 0 },
    { outcome: "failed", blocks: [{ type: "structured_data", value: result }, textBlock(reason)] },
  );
}

/** The agent's process by id, locked: actions of one process are numbered under this lock. */
export async function lockAgentProcess(tx: Tx, agentId: string, processId: string): Promise<ProcessRow | undefined> {
  const [row] = await tx.select().from(processes).where(and(eq(processes.id, processId), eq(processes.agentId, agentId))).for("update");
  return row;
}

/**
 * Work queued for calls that were just canceled is never offered (offers go only to waiting calls), so it
 * ends here, in the cancel's transaction: queued processes end `killed` (list_processes no longer shows
 * them) and queued process actions `failed`. Work a daemon already took is stopped through the daemon.
 */
export async function endQueuedWorkOf(tx: Tx, toolCallIds: readonly string[]): Promise<void> {
  if (toolCallIds.length === 0) return;
  const ids = [...toolCallIds];
  await tx
    .update(processes)
    .set({ state: "killed", reason: "its tool call was canceled before any daemon started it", updatedAt: dbNow })
    .where(and(inArray(processes.toolCallId, ids), eq(processes.state, "queued")));
  await tx
    .update(processActions)
    .set({ state: "failed", reason: "its tool call was canceled before the daemon took it", updatedAt: dbNow })
    .where(and(inArray(processActions.toolCallId, ids), eq(processActions.state, "queued")));
}

/** Queues an action for the process (locked by the caller) with the next seq, and hints its machine's daemon. */
export async function insertAction(tx: Tx, process: ProcessRow, toolCallId: string, id: string, kind: ActionKind, payload: Record<string, unknown>): Promise<ProcessActionRow> {
  const [created] = await tx
    .insert(processActions)
    .values({
      id,
      orgId: process.orgId,
      processId: process.id,
      toolCallId,
      seq: sql`(SELECT coalesce(max(${processActions.seq}), 0) + 1 FROM ${processActions} WHERE ${processActions.processId} = ${process.id})`,
      kind,
      payload,
    })
    .returning();
  await notifyDaemonWork(tx, process.machineId);
  return created!;
}

export async function openActions(tx: Db, processId: string): Promise<ProcessActionRow[]> {
  return tx
    .select()
    .from(processActions)
    .where(and(eq(processActions.processId, processId), inArray(processActions.state, [...OPEN_ACTION_STATES])))
    .orderBy(processActions.seq);
}

/**
 * Ends an open action with `state` and completes its tool call with `result`, once: an action already
 * ended is left as it is and `false` returned. The daemon is hinted, since the process's next action may go.
 */
export async function settleAction(
  tx: Tx,
  action: ProcessActionRow,
  state: "applied" | "failed" | "unknown",
  reason: string,
  result: { outcome: ToolOutcome; blocks: unknown[] },
): Promise<boolean> {
  const [call] = await tx.select({ agentId: toolCalls.agentId }).from(toolCalls).where(eq(toolCalls.id, action.toolCallId));
  const agent = call ? await lockAgent(tx, call.agentId) : undefined;
  if (!agent) return false;
  const [ended] = await tx
    .update(processActions)
    .set({ state, reason, updatedAt: dbNow })
    .where(and(eq(processActions.id, action.id), inArray(processActions.state, [...OPEN_ACTION_STATES])))
    .returning({ processId: processActions.processId });
  if (!ended) return false;
  const [waiting] = await tx.select().from(toolCalls).where(and(eq(toolCalls.id, action.toolCallId), eq(toolCalls.state, "waiting")));
  if (waiting) {
    await completeToolCall(tx, agent, waiting, result.outcome, result.blocks, { wake: "process_action" });
  }
  const [process] = await tx.select({ machineId: processes.machineId }).from(processes).where(eq(processes.id, ended.processId));
  if (process) await notifyDaemonWork(tx, process.machineId);
  return true;
}
