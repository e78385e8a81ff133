import { trace, type Attributes } from "@opentelemetry/api";
import { and, eq } from "drizzle-orm";
import { agentRuntimeLocks, contextCheckpoints, modelCallContexts } from "../db/schema/index.js";
import { dbNow } from "../db/schema/columns.js";
import type { Database, Tx } from "../platform/db/index.js";
import { encodeId, newUuid } from "../platform/ids.js";
import { storableText } from "../platform/storable.js";
import { inSpan } from "../platform/tracing.js";
import { appendEvent, lockAgent, type AgentRow } from "./store/journal.js";
import type { StepCaches } from "./caches.js";
import { planCompaction, SUMMARY_INSTRUCTION, summaryRequestMessage } from "./compaction.js";
import { conversationMessages, estimateTokens, replayScope } from "./context.js";
import type { AgentDefinition, ToolDefinition } from "./definition.js";
import { prepareMcpTools, type McpAccess } from "./mcp/connections.js";
import type { ArtifactsService } from "../modules/artifacts/service.js";
import type { SkillsService } from "../modules/skills/service.js";
import { skillCatalog } from "./skills.js";
import { costMicroUsd } from "./cost.js";
import { DeltaPublisher } from "./deltas.js";
import type { ContextRow } from "./frontier.js";
import { ModelError, type ModelClient, type ModelMessage, type ModelRequest, type ModelResult } from "./models/types.js";
import { failureWithPlan, recordCompactionNeeded, recordFailure, retryDelayMs, type Failure } from "./outcomes.js";
import type { AgentSignals } from "./signals.js";
import type { AdmittedInput } from "./store/claim.js";
import { recordReply, type ModelReply, type NewToolCall } from "./store/record.js";
import { markWakeup } from "./wakeups.js";
import { addCompactionUsage } from "./store/usage.js";
import type { AgentMachines, ToolPorts } from "./tools/machine-tools.js";
import type { IntegrationToolRunner } from "./tools/integration-tools.js";
import { attachedStores, memoryNotes, type MemoryPort } from "./tools/files/memory.js";

export interface StepDeps {
  db: Database;
  signals: AgentSignals;
  models: ModelClient;
  caches: StepCaches;
  mcp: McpAccess;
  /** Stores media of tool results run by the worker (MCP, overflowing skill results); the file tools read the agent's artifacts. */
  artifacts: Pick<ArtifactsService, "prepareContentBlocks" | "recordArtifacts" | "findAgentArtifact" | "artifactBytes" | "listAgentArtifacts">;
  /** Reads the skill revisions compiled configs pin, for the `skill` tool. */
  skills: Pick<SkillsService, "readRevision">;
  /** The machines module for the machine tools (tools/machine-tools.ts); without it they fail. */
  machines?: AgentMachines;
  /** The integration kinds' catalogs (ToolPorts.kinds): where questions and approvals go, and the handler tools' schemas. */
  kinds: NonNullable<ToolPorts["kinds"]>;
  /** Runs `int__<integration>__<operation>` calls (modules/integrations/tool-runner.ts); without it they fail. */
  integrationTools?: IntegrationToolRunner;
  /** Launches and messages coordinators' children (ToolPorts.delegates); without it the delegation tools fail. */
  delegates?: ToolPorts["delegates"];
  /** The memory stores the file tools reach under /memory (tools/files/memory.ts); without it none are. */
  memory?: MemoryPort;
  /** How long a `skill` call waits for its machines' installs (default 30 s). */
  skillInstallSeconds?: number;
}

/** A claimed model call: the context row inserted by the claim, under the runtime lock `lockId`. */
export interface ModelStep {
  kind: "model";
  agentId: string;
  orgId: string;
  projectId: string;
  lockId: string;
  context: ContextRow;
  /** Inputs the claim admitted for this call, at their events' sequences. */
  admitted: AdmittedInput[];
}

type Outcome =
  | { kind: "result"; result: ModelResult; cost: number; definition: AgentDefinition; tools: ToolDefinition[]; toolCallIds: Map<string, string>; deltas: unknown[] }
  | Unrecorded;

/** Outcomes other than a well-formed reply, which the general recorders write. */
type Unrecorded = { kind: "checkpoint"; summary: string; through: number; result: ModelResult; cost: number; configuredModelId: string } | { kind: "compact"; message: string } | { kind: "failure"; failure: Failure };

/** A result that asked to use tools but named none. */
const MALFORMED: Unrecorded = { kind: "failure", failure: { kind: "invalid_response", message: "the model asked to use tools but named none", retryable: true } };

/** What came of a model step, for the worker's log. */
export type ModelStepReport =
  | { outcome: "reply"; stopReason: string; toolCalls: number }
  | { outcome: "retry"; failure: Failure; message: string; retryInMs: number }
  | { outcome: "failed"; failure: Failure; message: string }
  | { outcome: "compaction_needed" | "checkpoint" }
  /** Nothing recorded: the step lost its runtime lock or its context (canceled, or reaped). */
  | { outcome: "dropped" };

/**
 * Runs one claimed model call outside any transaction, then records what came of it in one. Nothing
 * is recorded when the step lost its runtime lock or its context meanwhile (canceled, or reaped after
 * its lease ran out): whoever took them over decides. A failure is also a live `error` preview saying
 * what svc does next, sent with the record's own statement.
 */
export async function runModelStep(deps: StepDeps, step: ModelStep, signal: AbortSignal): Promise<ModelStepReport> {
  const publisher = new DeltaPublisher(deps.signals, step.agentId, {
    turnId: encodeId("turn", step.context.turnId),
    contextId: encodeId("modelCallContext", step.context.id),
    sourceSequence: step.context.inputEventSequence,
  });
  const called = await callModel(deps, step, signal, publisher).catch(
    (err: unknown): Outcome => ({ kind: "failure", failure: signal.aborted ? interrupted(signal) : asFailure(err) }),
  );
  const reply = called.kind === "result" ? replyOf(called) : undefined;
  trace.getActiveSpan()?.setAttributes(outcomeAttributes(called, reply));
  try {
    if (reply) return await keepReply(deps, step, reply);
    return await keepOtherwise(deps, step, called.kind === "result" ? MALFORMED : called, publisher);
  } catch (err) {
    await recordUnstorable(deps, step, err);
    throw err;
  }
}

async function keepReply(deps: StepDeps, step: ModelStep, reply: ModelReply): Promise<ModelStepReport> {
  const event = await inSpan("agent.record", {}, () =>
    deps.db.tx(async (tx) => {
      const agent = await lockAgent(tx, step.agentId);
      return agent ? tx.commitWith(() => recordReply(tx, agent, step, reply)) : null;
    }),
  );
  if (!event) return { outcome: "dropped" };
  deps.caches.conversations.appendRecorded(step.agentId, event.sequence, outputFacts(reply), reply.calls);
  return { outcome: "reply", stopReason: reply.stopReason, toolCalls: reply.calls.length };
}

async function keepOtherwise(deps: StepDeps, step: ModelStep, outcome: Unrecorded, publisher: DeltaPublisher): Promise<ModelStepReport> {
  const message = outcome.kind === "failure" ? failureWithPlan(step.context, outcome.failure) : undefined;
  if (message !== undefined) publisher.fail(message);
  const previews = message !== undefined ? await publisher.drainAfterSent() : [];
  const kept = await inSpan("agent.record", {}, () =>
    deps.db.tx(async (tx) => {
      const agent = await lockAgent(tx, step.agentId);
      return agent ? recordOtherwise(tx, agent, step, outcome, previews) : false;
    }),
  );
  if (!kept) return { outcome: "dropped" };
  if (outcome.kind !== "failure") return { outcome: outcome.kind === "compact" ? "compaction_needed" : "checkpoint" };
  const retryInMs = retryDelayMs(step.context, outcome.failure);
  const failure = { failure: outcome.failure, message: message! };
  return retryInMs === undefined ? { outcome: "failed", ...failure } : { outcome: "retry", ...failure, retryInMs };
}

/** What the step's trace says came of the call: the outcome's kind, and a failure's kind; never its message. */
function outcomeAttributes(outcome: Outcome, reply: ModelReply | undefined): Attributes {
  if (outcome.kind === "failure") return { "svc.step.outcome": "failure", "svc.failure.kind": outcome.failure.kind };
  if (outcome.kind === "result" && !reply) return { "svc.step.outcome": "failure", "svc.failure.kind": "invalid_response" };
  return { "svc.step.outcome": outcome.kind === "result" ? "reply" : outcome.kind };
}

/**
 * A record that failed (the database refused what the model answered) becomes a terminal error on the
 * timeline at once, rather than a silent wait for the lease to run out and the same failure again.
 * When even this fails (the database is gone), the lease runs out and maintenance retries the call.
 */
async function recordUnstorable(deps: StepDeps, step: ModelStep, err: unknown): Promise<void> {
  const message = storableText(`svc could not store the model's answer: ${(err as Error)?.message ?? String(err)}`);
  await deps.db
    .tx(async (tx) => {
      const agent = await lockAgent(tx, step.agentId);
      if (agent) await recordOtherwise(tx, agent, step, { kind: "failure", failure: { kind: "runtime", message, retryable: false } });
    })
    .catch(() => undefined);
}

/**
 * Outcomes other than a well-formed reply: the lock and context are checked, then the general recorders
 * run. Whether it was recorded; the `previews` go out with the wakeup only then.
 */
async function recordOtherwise(tx: Tx, agent: AgentRow, step: ModelStep, outcome: Unrecorded, previews: unknown[] = []): Promise<boolean> {
  const [context] = await tx.select().from(modelCallContexts).where(eq(modelCallContexts.id, step.context.id));
  const [lock] = await tx.select().from(agentRuntimeLocks).where(eq(agentRuntimeLocks.id, step.lockId));
  const kept = context?.state === "started" && lock !== undefined;
  if (kept) await record(tx, agent, context, outcome);
  if (lock) await tx.delete(agentRuntimeLocks).where(eq(agentRuntimeLocks.id, step.lockId));
  await markWakeup(tx, agent.id, "model_step_done", kept ? previews : []);
  return kept;
}

async function callModel(deps: StepDeps, step: ModelStep, signal: AbortSignal, publisher: DeltaPublisher): Promise<Outcome> {
  const { context } = step;
  const { caches } = deps;
  const definition = await caches.definitions.get(deps.db.read, context.agentConfigId);
  const endpoint = await caches.endpoints.get(deps.db, step.orgId, step.projectId, definition.model);
  if ("refused" in endpoint) return { kind: "failure", failure: { kind: "configuration", message: endpoint.refused, retryable: false } };
  await caches.conversations.appendAdmitted(step.agentId, step.admitted);
  const log = await caches.conversations.upTo(deps.db.read, step.agentId, context.inputEventSequence);
  const conversation = log.conversation(definition.model);
  const usable = definition.model.contextWindowTokens - definition.model.maxOutputTokens;
  const base: Omit<ModelRequest, "messages" | "tools" | "system"> = {
    apiFormat: definition.model.apiFormat,
    baseUrl: endpoint.baseUrl,
    endpointPath: endpoint.endpointPath,
    auth: endpoint.auth,
    credential: endpoint.credential,
    model: definition.model.providerModelSlug,
    maxOutputTokens: definition.model.maxOutputTokens,
    ...(definition.model.supportsReasoning && definition.model.reasoningEffort ? { reasoningEffort: definition.model.reasoningEffort } : {}),
    timeoutMs: endpoint.timeoutMs,
    signal,
  };

  if (context.operationKind === "compaction") {
    const plan = planCompaction(conversation, usable);
    if (!plan) return { kind: "failure", failure: { kind: "context_window", message: "the conversation no longer fits the model's context window and nothing more can be summarized", retryable: false } };
    const messages: ModelMessage[] = [...conversationMessages({ checkpoint: conversation.checkpoint, items: plan.summarized }), summaryRequestMessage()];
    const result = await deps.models.stream({ ...base, system: SUMMARY_INSTRUCTION, messages, tools: [] }, () => {});
    const summary = result.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n").trim();
    if (!summary) return { kind: "failure", failure: { kind: "invalid_response", message: "the summary came back empty", retryable: true } };
    return {
      kind: "checkpoint",
      summary,
      through: plan.through,
      result,
      cost: costMicroUsd(result.usage, definition.model.pricing),
      configuredModelId: definition.model.configuredModelId,
    };
  }

  const messages = conversationMessages(conversation);
  const mcp = await prepareMcpTools(deps.db, deps.mcp, { ...step, turnId: context.turnId }, definition, signal);
  const offered = [...definition.tools, ...mcp.tools];
  const tools = offered.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema as ModelRequest["tools"][number]["inputSchema"] }));
  const system = [definition.instruction, ...skillCatalog(definition), ...(await memoryCatalog(deps, step, definition)), ...mcp.notes].join("\n\n");
  const estimate = estimateTokens(system) + estimateTokens(JSON.stringify(tools)) + conversation.items.reduce((sum, i) => sum + i.tokens, 0);
  if (estimate > usable) return { kind: "compact", message: `estimated ${estimate} input tokens exceed the usable window of ${usable}` };
  try {
    const result = await deps.models.stream({ ...base, system, messages, tools }, (delta) => publisher.push(delta));
    const cost = costMicroUsd(result.usage, definition.model.pricing);
    publisher.stop(result, cost);
    return { kind: "result", result, cost, definition, tools: offered, toolCallIds: publisher.toolCallIds, deltas: await publisher.drainAfterSent() };
  } catch (err) {
    if (!(err instanceof ModelError && err.kind === "context_overflow")) throw err;
    publisher.fail(err.message);
    publisher.publishPending();
    return { kind: "compact", message: err.message };
  }
}

/**
 * The instruction's note on the attached memory stores (issue 31, item 2). Only an agent whose config has a
 * `memory` section reads the stores (one statement); every other step costs what it did.
 */
async function memoryCatalog(deps: StepDeps, step: ModelStep, definition: AgentDefinition): Promise<string[]> {
  const attached = attachedStores(definition);
  if (attached.length === 0 || !deps.memory) return [];
  return memoryNotes(attached, await deps.memory.stores(step.orgId, step.projectId, attached.map((entry) => entry.storeId)));
}

/** A call stopped by svc itself (shutdown, a lost lease) is retried; a cancel already closed its context. */
function interrupted(signal: AbortSignal): Failure {
  return { kind: "interrupted", message: `the model call was interrupted: ${(signal.reason as Error)?.message ?? "aborted"}`, retryable: true };
}

function asFailure(err: unknown): Failure {
  if (err instanceof ModelError) {
    return { kind: err.kind, message: err.message, retryable: err.retryable, ...(err.retryAfterMs !== undefined ? { retryAfterMs: err.retryAfterMs } : {}) };
  }
  return { kind: "runtime", message: storableText(`the model call failed inside svc: ${(err as Error)?.message ?? String(err)}`), retryable: true };
}

async function record(tx: Tx, agent: AgentRow, context: ContextRow, outcome: Unrecorded): Promise<void> {
  if (outcome.kind === "failure") {
    await recordFailure(tx, agent, context, outcome.failure);
    return;
  }
  if (outcome.kind === "compact") {
    await recordCompactionNeeded(tx, agent, context, outcome.message);
    return;
  }
  const [checkpoint] = await tx
    .insert(contextCheckpoints)
    .values({ id: newUuid(), agentId: agent.id, modelCallContextId: context.id, summarizedThroughEventSequence: outcome.through, summary: outcome.summary })
    .returning();
  await appendEvent(tx, agent, { turnId: context.turnId, kind: "context_checkpoint", contextCheckpointId: checkpoint!.id, semantic: false });
  await succeed(tx, context, outcome.result, outcome.cost);
  // The summary call is a model call: it is costed and counted in usage (and so in budgets) like any.
  await addCompactionUsage(tx, agent, context.turnId, { usage: outcome.result.usage, costMicroUsd: outcome.cost, configuredModelId: outcome.configuredModelId });
}

/**
 * The reply to record, or undefined for a malformed one (tool use without a tool call), which is
 * recorded as a failure. Tool calls are kept when the model stopped to use them or ended its turn
 * with them; text-only stops (length, refusal) drop them.
 */
function replyOf(outcome: Extract<Outcome, { kind: "result" }>): ModelReply | undefined {
  const { result, definition, tools } = outcome;
  const calls = result.parts.filter((p) => p.type === "tool_call");
  if (result.stopReason === "tool_use" && calls.length === 0) return undefined;
  const usesTools = calls.length > 0 && (result.stopReason === "tool_use" || result.stopReason === "end_turn");
  const outputId = newUuid();
  const blocks: unknown[] = [];
  const replays: unknown[] = [];
  const newCalls: NewToolCall[] = [];
  for (const part of result.parts) {
    if (part.type === "tool_call") {
      if (!usesTools) continue;
      const id = outcome.toolCallIds.get(part.providerCallId) ?? newUuid();
      // A name the model made up is checked by the worker's tool work, which fails it as unsupported.
      const type = tools.find((t) => t.name === part.name)?.type ?? (part.name.startsWith("mcp__") ? "mcp" : "built_in");
      newCalls.push({ id, providerCallId: part.providerCallId, name: part.name, input: part.input, type });
      blocks.push({ type: "tool_call", tool_call_id: encodeId("toolCall", id), tool_type: type, name: part.name, input: part.input });
    } else {
      blocks.push({ type: part.type, text: part.text });
    }
    replays.push(part.providerReplay ?? null);
  }
  return {
    outputId,
    stopReason: usesTools ? "tool_use" : result.stopReason,
    servedModel: result.servedModel ?? null,
    blocks,
    replays,
    replayScope: replayScope(definition.model),
    calls: newCalls,
    usage: result.usage,
    costMicroUsd: outcome.cost,
    configuredModelId: definition.model.configuredModelId,
    providerResponseId: result.providerResponseId ?? null,
    deltas: outcome.deltas,
  };
}

function outputFacts(reply: ModelReply) {
  return { id: reply.outputId, contentBlocks: reply.blocks, providerReplay: reply.replays, replayScope: reply.replayScope };
}

async function succeed(tx: Tx, context: ContextRow, result: ModelResult | undefined, cost?: number): Promise<void> {
  await tx
    .update(modelCallContexts)
    .set({
      state: "succeeded",
      completedAt: dbNow,
      runtimeLockId: null,
      ...(result
        ? {
            providerResponseId: result.providerResponseId ?? null,
            inputTokens: result.usage.inputTokens,
            outputTokens: result.usage.outputTokens,
            cacheReadTokens: result.usage.cacheReadTokens,
            cacheWriteTokens: result.usage.cacheWriteTokens,
            reasoningTokens: result.usage.reasoningTokens,
            ...(cost !== undefined ? { costMicroUsd: cost } : {}),
          }
        : {}),
    })
    .where(and(eq(modelCallContexts.id, context.id), eq(modelCallContexts.state, "started")));
}
