import { and, eq, isNull, sql, type SQL } from "drizzle-orm";
import { machines, processActions, processes, toolCalls } from "../../db/schema/index.js";
import { dbNow } from "../../db/schema/columns.js";
import type { Tx } from "../../platform/db/index.js";
import { endRuntimes, type RuntimeRow } from "../daemon/store.js";
import { providerRules } from "./providers/index.js";
import { dropLeaseOfToken, notifyDaemon } from "./store.js";
import { revokeTokens } from "./tokens-store.js";

/*
 * Sleeping pool machines (reference machines/overview.mdx "Machine state", reference design-brief.md §2.6 and §7): a
 * machine of a provider that can sleep, with no process work, has its runtime ended ("sleep"), its daemon
 * token revoked and `asleep_since` set, in one transaction under the machine's lock; then the provider
 * stops its daemon keeping its state (lifecycle.ts). It reads `connection_state: asleep`. Work queued for
 * it (a run_command, a process action) wakes it: maintenance starts its daemon again with a fresh token on
 * the same state, and the daemon's registration clears `asleep_since`.
 *
 * The token is revoked so a daemon told its runtime ended cannot register again by itself: only a wake,
 * which mints a new token, brings the machine back.
 */

/**
 * Qualified by hand: drizzle leaves a single table's columns unqualified, which the subqueries below (with
 * their own `id` columns) would make ambiguous. Both fragments are for statements over `machines`.
 */
const MACHINE_ID = sql.raw(`"machines"."id"`);
const MACHINE_UPDATED_AT = sql.raw(`"machines"."updated_at"`);

/**
 * SQL true while the machine (of the statement's `machines` row) has process work: a process queued for a call that still
 * waits, or starting or running; or a process action queued for a waiting call, or accepted. Such a
 * machine does not sleep, and an asleep one with such work is woken. (A process whose call was canceled
 * before any daemon took it is no work.)
 */
export function hasProcessWork(): SQL {
  const machineId = MACHINE_ID;
  return sql`(EXISTS (SELECT 1 FROM ${processes} p WHERE p.machine_id = ${machineId} AND (p.state IN ('starting', 'running')
      OR (p.state = 'queued' AND EXISTS (SELECT 1 FROM ${toolCalls} c WHERE c.id = p.tool_call_id AND c.state = 'waiting'))))
    OR EXISTS (SELECT 1 FROM ${processActions} a JOIN ${processes} p ON p.id = a.process_id WHERE p.machine_id = ${machineId}
      AND (a.state = 'accepted' OR (a.state = 'queued' AND EXISTS (SELECT 1 FROM ${toolCalls} c WHERE c.id = a.tool_call_id AND c.state = 'waiting')))))`;
}

/**
 * When the machine last had process work, or was activated: the later of its row's last change (its
 * activation) and its processes' and their actions' last changes. Sleep and idle deletion count from here.
 */
export function lastActivity(): SQL {
  const machineId = MACHINE_ID;
  return sql`greatest(${MACHINE_UPDATED_AT},
    (SELECT max(p.updated_at) FROM ${processes} p WHERE p.machine_id = ${machineId}),
    (SELECT max(a.updated_at) FROM ${processActions} a JOIN ${processes} p ON p.id = a.process_id WHERE p.machine_id = ${machineId}))`;
}

export type SleepOutcome = { asleep: true; runtime: RuntimeRow | undefined } | { asleep: false; code: "pending_work" | "not_wake_capable" | "gone"; message: string };

/**
 * Puts a live, active pool machine to sleep in the caller's transaction, unless it has process work.
 * Idempotent: an asleep machine stays asleep (its `asleep_since` kept). The caller stops the daemon
 * through the provider after commit.
 */
export async function putToSleep(tx: Tx, machineId: string): Promise<SleepOutcome> {
  const [machine] = await tx
    .select({ id: machines.id, sourceKind: machines.sourceKind, provider: machines.provider, lifecycleState: machines.lifecycleState, busy: hasProcessWork() })
    .from(machines)
    .where(and(eq(machines.id, machineId), isNull(machines.deletedAt)))
    .for("update");
  if (!machine) return { asleep: false, code: "gone", message: "the machine was deleted" };
  if (machine.sourceKind !== "pool" || !providerRules(machine.provider)?.sleeps) {
    return { asleep: false, code: "not_wake_capable", message: "this machine cannot be woken by svc (a connected machine has no sandbox to wake), so it may not sleep" };
  }
  if (machine.lifecycleState !== "active") return { asleep: false, code: "not_wake_capable", message: `only an active machine may sleep; this one is ${machine.lifecycleState}` };
  if (machine.busy) return { asleep: false, code: "pending_work", message: "the machine has queued or running process work" };
  const [runtime] = await endRuntimes(tx, machineId, { code: "sleep", message: "the machine was put to sleep" });
  const revoked = await revokeTokens(tx, machineId, "sleep");
  await dropLeaseOfToken(tx, machineId, revoked.map((t) => t.id));
  await tx
    .update(machines)
    .set({ asleepSince: sql`coalesce(${machines.asleepSince}, ${dbNow})`, leaseExpiresAt: null, leaseTokenId: null, lastObservedAt: dbNow, nextReconcileAfter: null })
    .where(eq(machines.id, machineId));
  // The daemon's socket hears it, finds its token revoked and closes; svcd exits.
  await notifyDaemon(tx, machineId);
  return { asleep: true, runtime };
}
