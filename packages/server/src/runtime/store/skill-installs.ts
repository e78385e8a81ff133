import { and, asc, eq, inArray, notInArray, sql } from "drizzle-orm";
import { skillInstalls, toolCalls } from "../../db/schema/index.js";
import { dbNow, dbSecondsFromNow } from "../../db/schema/columns.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { encodeId, newUuid } from "../../platform/ids.js";
import type { AgentSignals } from "../signals.js";
import type { AgentRow } from "./journal.js";
import { notifyDaemonWork } from "./processes.js";
import type { ToolCallRow } from "./tool-calls.js";
import type { AttachedMachine } from "../tools/machine-tools.js";

/*
 * The `skill` tool's installs on machines (table skill_installs): one row per attached machine and call.
 * The tool step writes them and leaves its call `waiting`; daemons' reports and the deadline end them;
 * the last one to end lets the call complete (tools/skill.ts).
 */

type Db = AppDb | Tx;
export type SkillInstallRow = typeof skillInstalls.$inferSelect;
export type InstallState = "pending" | "ready" | "failed" | "timeout" | "unreachable";
export type InstallWithMachine = SkillInstallRow & { machineName: string };

export interface PinnedSkill {
  skillId: string;
  revisionId: string;
  name: string;
  digest: string;
}

/**
 * Asks every attached machine to install `skill`, in the caller's transaction (agent locked, `call`
 * running under the step's lock). An offline or unusable machine is `unreachable` at once. When any
 * install is pending the call becomes `waiting` (a waiting call has no runtime lock, so a worker restart
 * never reruns it) and each machine's daemon is hinted; the rows are returned either way.
 */
export async function startInstalls(
  tx: Tx,
  signals: AgentSignals,
  agent: AgentRow,
  call: ToolCallRow,
  skill: PinnedSkill,
  timeoutSeconds: number,
  targets: AttachedMachine[],
): Promise<InstallWithMachine[]> {
  if (targets.length === 0) return [];
  const rows = await tx
    .insert(skillInstalls)
    .values(
      targets.map((machine) => {
        const reachable = machine.usable && machine.online;
        const why = machine.usable
          ? "the machine is offline (its daemon is not connected)"
          : machine.lifecycleState === "provisioning"
            ? "the machine is not ready yet (still provisioning)"
            : "the machine is no longer available to this project (deleted, or its grant was revoked)";
        return {
          id: newUuid(),
          orgId: machine.orgId,
          agentId: agent.id,
          toolCallId: call.id,
          machineId: machine.id,
          skillId: skill.skillId,
          revisionId: skill.revisionId,
          skillName: skill.name,
          digest: skill.digest,
          state: reachable ? "pending" : "unreachable",
          error: reachable ? "" : why,
          deadlineAt: dbSecondsFromNow(timeoutSeconds),
        };
      }),
    )
    .returning();
  const pending = rows.filter((row) => row.state === "pending");
  if (pending.length > 0) {
    await tx.update(toolCalls).set({ state: "waiting", runtimeLockId: null, updatedAt: dbNow }).where(eq(toolCalls.id, call.id));
    await signals.toolCallsChanged(tx, agent.id, [{ toolCallId: encodeId("toolCall", call.id), state: "waiting" }]);
    for (const machineId of new Set(pending.map((row) => row.machineId))) await notifyDaemonWork(tx, machineId);
  }
  return withMachineNames(rows, new Map(targets.map((t) => [t.id, t.name])));
}

/** Installs with their machines' names, ordered by name (then id), as the call's result lists them. */
export function withMachineNames(rows: SkillInstallRow[], names: ReadonlyMap<string, string>): InstallWithMachine[] {
  const named = rows.map((row) => ({ ...row, machineName: names.get(row.machineId) ?? "" }));
  return named.sort((a, b) => (a.machineName < b.machineName ? -1 : a.machineName > b.machineName ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** A call's installs (one call's rows are made in one statement). */
export async function installsOfCall(db: Db, toolCallId: string): Promise<SkillInstallRow[]> {
  return db.select().from(skillInstalls).where(eq(skillInstalls.toolCallId, toolCallId));
}

/**
 * Pending installs of the machine whose call still waits and whose deadline has not passed, oldest first,
 * skipping `skip`; with the time a download token offered now expires, by the database clock (Unix seconds).
 */
export async function offerableInstalls(db: Db, machineId: string, skip: readonly string[], limit: number, tokenSeconds: number) {
  return db
    .select({
      install: skillInstalls,
      expiresAt: sql<number>`(floor(extract(epoch from statement_timestamp())) + ${tokenSeconds})::float8`,
    })
    .from(skillInstalls)
    .innerJoin(toolCalls, eq(toolCalls.id, skillInstalls.toolCallId))
    .where(
      and(
        eq(skillInstalls.machineId, machineId),
        eq(skillInstalls.state, "pending"),
        eq(toolCalls.state, "waiting"),
        sql`${skillInstalls.deadlineAt} > statement_timestamp()`,
        skip.length ? notInArray(skillInstalls.id, [...skip]) : undefined,
      ),
    )
    .orderBy(asc(skillInstalls.createdAt))
    .limit(limit);
}

/** Ends a pending install of the machine with the daemon's report; undefined when it had ended already (or is another machine's). */
export async function reportInstall(db: Db, machineId: string, id: string, report: { state: Exclude<InstallState, "pending">; error: string; path: string }): Promise<SkillInstallRow | undefined> {
  const [row] = await db
    .update(skillInstalls)
    .set({ state: report.state, error: report.error, installPath: report.path, updatedAt: dbNow })
    .where(and(eq(skillInstalls.id, id), eq(skillInstalls.machineId, machineId), eq(skillInstalls.state, "pending")))
    .returning();
  return row;
}

/** Pending installs past their deadline end `timeout`, at most `limit` at a time; the calls they belonged to. */
export async function expireInstalls(db: Db, limit: number): Promise<string[]> {
  const due = db
    .select({ id: skillInstalls.id })
    .from(skillInstalls)
    .where(and(eq(skillInstalls.state, "pending"), sql`${skillInstalls.deadlineAt} <= statement_timestamp()`))
    .limit(limit);
  const rows = await db
    .update(skillInstalls)
    .set({ state: "timeout", error: "the machine's daemon did not report the install in time", updatedAt: dbNow })
    .where(and(inArray(skillInstalls.id, due), eq(skillInstalls.state, "pending")))
    .returning({ toolCallId: skillInstalls.toolCallId });
  return [...new Set(rows.map((r) => r.toolCallId))];
}

/**
 * Calls still waiting although none of their installs is pending, among installs whose deadline passed in
 * the last hour: a report or an expiry whose completion did not happen (the process died in between).
 */
export async function settledWaitingCalls(db: Db, limit: number): Promise<string[]> {
  const rows = await db
    .selectDistinct({ toolCallId: skillInstalls.toolCallId })
    .from(skillInstalls)
    .innerJoin(toolCalls, and(eq(toolCalls.id, skillInstalls.toolCallId), eq(toolCalls.state, "waiting")))
    .where(
      and(
        sql`${skillInstalls.deadlineAt} <= statement_timestamp()`,
        sql`${skillInstalls.deadlineAt} > statement_timestamp() - interval '1 hour'`,
        sql`NOT EXISTS (SELECT 1 FROM ${skillInstalls} p WHERE p.tool_call_id = ${skillInstalls.toolCallId} AND p.state = 'pending')`,
      ),
    )
    .limit(limit);
  return rows.map((r) => r.toolCallId);
}

/** The call while it still waits. */
export async function waitingCall(db: Db, toolCallId: string): Promise<ToolCallRow | undefined> {
  const [call] = await db.select().from(toolCalls).where(and(eq(toolCalls.id, toolCallId), eq(toolCalls.state, "waiting")));
  return call;
}
