import { context, ROOT_CONTEXT, trace, type Attributes } from "@opentelemetry/api";
import { encodeId } from "../platform/ids.js";
import { markFailed, tracer } from "../platform/tracing.js";
import type { Step } from "./claim.js";

/** When a claim transaction ran, in `performance.now()` time. */
export interface ClaimTime {
  start: number;
  end: number;
}

/**
 * Runs a claimed step as one trace (docs/operations.md, "Traces"): an `agent.step` root from the claim's
 * start to the step's end, an `agent.claim` child for the claim transaction, and whatever `run` starts
 * (model call, tool calls, records) as children through the active context. Both spans are made once the
 * claim has found a step, with the claim's own times, so the many claims that find nothing leave no trace.
 */
export async function traceStep(step: Step, claim: ClaimTime, run: () => Promise<void>): Promise<void> {
  const attributes = stepAttributes(step);
  const root = tracer.startSpan("agent.step", { root: true, startTime: claim.start, attributes }, ROOT_CONTEXT);
  const active = trace.setSpan(ROOT_CONTEXT, root);
  tracer.startSpan("agent.claim", { startTime: claim.start, attributes }, active).end(claim.end);
  try {
    await context.with(active, run);
  } catch (err) {
    markFailed(root, err);
    throw err;
  } finally {
    root.end();
  }
}

/** Which agent, tenant and turn a step serves; public ids, as the API shows them. */
function stepAttributes(step: Step): Attributes {
  const common = {
    "svc.agent.id": encodeId("agent", step.agentId),
    "svc.org.id": encodeId("org", step.orgId),
    "svc.project.id": encodeId("project", step.projectId),
    "svc.step.kind": step.kind,
  };
  if (step.kind === "tools") return { ...common, "svc.tool_calls": step.calls.length };
  return {
    ...common,
    "svc.turn.id": encodeId("turn", step.context.turnId),
    "svc.model_call.operation": step.context.operationKind,
    "svc.model_call.attempt": step.context.attemptNumber,
  };
}
