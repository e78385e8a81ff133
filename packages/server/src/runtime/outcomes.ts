import { createHash } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { modelCallContexts, modelOutputs } from "../db/schema/index.js";
import { dbNow } from "../db/schema/columns.js";
import type { Tx } from "../platform/db/index.js";
import { encodeId, newUuid } from "../platform/ids.js";
import { enqueueWebhookEvents } from "../modules/webhooks/enqueue.js";
import { appendEvent, type AgentRow } from "./store/journal.js";
import type { ContextRow } from "./frontier.js";
import { markWakeup, scheduleWakeup } from "./wakeups.js";

/** At most this many attempts per model operation; then the failure is terminal. */
export const MAX_MODEL_ATTEMPTS = 8;
const BASE_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 30_000;

/**
 * 1 s doubling to 30 s, with ±20 % jitter derived from the context id: deterministic for a given
 * attempt, yet spread across agents that failed together.
 */
export function backoffMs(contextId: string, attempt: number): number {
  const base = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** (attempt - 1));
  const unit = createHash("sha256").update(contextId).digest().readUInt32BE(0) / 0xffffffff;
  return Math.round(base * (0.8 + 0.4 * unit));
}

export interface Failure {
  kind: string;
  message: string;
  retryable: boolean;
  retryAfterMs?: number;
}

/**
 * How long svc waits before the next attempt after this failure, or undefined when it makes none: the
 * failure is not retryable, or this was the last attempt. The provider's Retry-After wins when longer.
 */
export function retryDelayMs(context: Pick<ContextRow, "id" | "attemptNumber">, failure: Failure): number | undefined {
  if (!failure.retryable || context.attemptNumber >= MAX_MODEL_ATTEMPTS) return undefined;
  return Math.max(backoffMs(context.id, context.attemptNumber), failure.retryAfterMs ?? 0);
}

/** The failure as people read it in the live timeline and the log: what failed, which attempt, what svc does next. */
export function failureWithPlan(context: Pick<ContextRow, "id" | "attemptNumber">, failure: Failure): string {
  const delay = retryDelayMs(context, failure);
  const attempt = `attempt ${context.attemptNumber} of ${MAX_MODEL_ATTEMPTS}`;
  const next =
    delay !== undefined
      ? `svc tries again in ${(delay / 1000).toFixed(1)} s`
      : failure.retryable
        ? "no attempts are left, so the turn ends with this error"
        : "svc does not retry this kind of failure, so the turn ends with this error";
  return `${failure.message} (${attempt}; ${next})`;
}

/**
 * Records a failed model attempt. Retryable failures within the attempt budget become a durable retry
 * (`retry_at`, honouring the provider's Retry-After); others are terminal: a `model_output` with stop
 * reason `error` and the message as an `error` block, which ends the turn and stays in the history
 * the next turn sees. The agent must be locked and the context still `started`.
 */
export async function recordFailure(tx: Tx, agent: AgentRow, context: ContextRow, failure: Failure): Promise<"retry" | "terminal"> {
  const base = { state: "failed", errorKind: failure.kind, errorMessage: failure.message, completedAt: dbNow, runtimeLockId: null };
  const delay = retryDelayMs(context, failure);
  if (delay !== undefined) {
    // The retry time is the database's clock plus the delay: every process compares it with that clock.
    const retryAt = sql`${dbNow} + make_interval(secs => ${delay / 1000})`;
    const [retry] = await tx
      .update(modelCallContexts)
      .set({ ...base, recoveryKind: "retry", retryAt })
      .where(eq(modelCallContexts.id, context.id))
      .returning({ at: modelCallContexts.retryAt });
    await scheduleWakeup(tx, agent.id, retry!.at!, "model_retry");
    return "retry";
  }
  await tx.update(modelCallContexts).set(base).where(eq(modelCallContexts.id, context.id));
  const [output] = await tx
    .insert(modelOutputs)
    .values({ id: newUuid(), agentId: agent.id, modelCallContextId: context.id, stopReason: "error", contentBlocks: [{ type: "error", text: failure.message }] })
    .returning();
  await appendEvent(tx, agent, { turnId: context.turnId, kind: "model_output", modelOutputId: output!.id, semantic: true });
  await markWakeup(tx, agent.id, "turn_ended");
  // A delegate's failed turn answers its waiting coordinator (docs/delegation.md), never a hang.
  if (agent.parentAgentId) await markWakeup(tx, agent.parentAgentId, "delegate_turn_ended");
  // Not a plain step's path: a terminal failure is reported to webhooks in its own statement (docs/webhooks.md).
  await enqueueWebhookEvents(tx, {
    orgId: agent.orgId,
    projectId: agent.projectId,
    type: "agent.failed",
    data: {
      agent_id: encodeId("agent", agent.id),
      project_id: encodeId("project", agent.projectId),
      turn_id: encodeId("turn", context.turnId),
      error: { code: failure.kind, message: failure.message },
    },
  });
  return "terminal";
}

/** The context needs a summary of older events before it can be retried (context window exceeded). */
export async function recordCompactionNeeded(tx: Tx, agent: AgentRow, context: ContextRow, message: string): Promise<void> {
  await tx
    .update(modelCallContexts)
    .set({ state: "failed", recoveryKind: "compact", errorKind: "context_window", errorMessage: message, completedAt: dbNow, runtimeLockId: null })
    .where(eq(modelCallContexts.id, context.id));
  await markWakeup(tx, agent.id, "compaction");
}
