import { encodeId } from "../platform/ids.js";
import type { Step } from "./claim.js";
import type { ModelStepReport } from "./model-step.js";
import type { BudgetCrossing } from "./store/budgets.js";

export interface WorkerLog {
  info(obj: unknown, msg: string): void;
  warn(obj: unknown, msg: string): void;
  error(obj: unknown, msg: string): void;
}

/**
 * The agent activity a worker logs (docs/operations.md, "Logs"): each step's start and end at info, a
 * failed model attempt at warn with what svc does next. Public ids, as the API shows them, so a line
 * leads to the agent's timeline; never the prompt, the answer or a tool's input.
 */
export function stepStarted(log: WorkerLog, step: Step): void {
  if (step.kind === "tools") log.info({ ...stepIds(step), tools: step.calls.map((call) => call.name) }, "tool step started");
  else log.info(stepIds(step), step.context.operationKind === "compaction" ? "compaction step started" : "model step started");
}

export function toolStepFinished(log: WorkerLog, step: Step, ms: number): void {
  log.info({ ...stepIds(step), ms: Math.round(ms) }, "tool step finished");
}

export function modelStepFinished(log: WorkerLog, step: Step, report: ModelStepReport, ms: number): void {
  const fields = { ...stepIds(step), ms: Math.round(ms) };
  switch (report.outcome) {
    case "reply":
      log.info({ ...fields, stop_reason: report.stopReason, tool_calls: report.toolCalls }, "model step finished");
      return;
    case "retry":
      log.warn({ ...fields, failure: report.failure.kind, retry_in_ms: report.retryInMs }, `model step failed; retrying: ${report.message}`);
      return;
    case "failed":
      log.warn({ ...fields, failure: report.failure.kind }, `model step failed; the turn ends: ${report.message}`);
      return;
    case "dropped":
      log.info(fields, "model step ended without a record: the agent was canceled or its lease passed to another worker");
      return;
    default:
      log.info(fields, report.outcome === "checkpoint" ? "compaction step finished" : "model step stopped: the context must be compacted first");
  }
}

function stepIds(step: Step) {
  const ids = { agent_id: encodeId("agent", step.agentId), project_id: encodeId("project", step.projectId) };
  if (step.kind === "tools") return ids;
  return {
    ...ids,
    turn_id: encodeId("turn", step.context.turnId),
    model_call_context_id: encodeId("modelCallContext", step.context.id),
    attempt: step.context.attemptNumber,
  };
}

/** A budget threshold the claim recorded (docs/usage-and-budgets.md, "Notifications"). */
export function budgetCrossingLogged(log: WorkerLog, crossing: BudgetCrossing): void {
  const { budget, percent } = crossing;
  log.info(
    { budgetId: encodeId("budget", budget.id), percent, spentMicroUsd: budget.spentMicroUsd, spentTokens: budget.spentTokens, periodStart: budget.periodStart.toISOString() },
    percent >= 100 ? "budget exceeded" : "budget threshold reached",
  );
}
