import { SpanKind } from "@opentelemetry/api";
import { and, eq } from "drizzle-orm";
import { agentMcpConnections, agentRuntimeLocks, toolCalls } from "../db/schema/index.js";
import { dbNow } from "../db/schema/columns.js";
import { AppError } from "../platform/errors.js";
import { encodeId } from "../platform/ids.js";
import { storable, storableText } from "../platform/storable.js";
import { inSpan } from "../platform/tracing.js";
import type { PreparedBlocks, SubmittedBlock } from "../modules/artifacts/service.js";
import { lockAgent } from "./store/journal.js";
import { completeToolCall, type ToolCallRow, type ToolOutcome } from "./store/tool-calls.js";
import type { Tx } from "../platform/db/index.js";
import { parseMcpToolName, type AgentDefinition, type McpServerDefinition } from "./definition.js";
import type { McpEndpoint } from "./mcp/client.js";
import { describeMcpError, endpointOf, withMcpAuth } from "./mcp/connections.js";
import { fallbackBlocks, resultBlocks } from "./mcp/results.js";
import type { StepDeps } from "./model-step.js";
import type { AgentSignals } from "./signals.js";
import { definitionsOfCalls } from "./tools/execute.js";
import { FILE_TOOL_NAMES, runFileTool } from "./tools/files/index.js";
import { attachedStores } from "./tools/files/memory.js";
import { runSkillTool } from "./tools/skill.js";
import { isIntegrationToolName } from "./tools/catalog-integrations.js";
import { runIntegrationTool } from "./tools/integration-tools.js";
import { markWakeup } from "./wakeups.js";

/** Ready MCP and `skill` calls claimed together: each is `running` under the runtime lock `lockId`. */
export interface ToolStep {
  kind: "tools";
  agentId: string;
  orgId: string;
  projectId: string;
  lockId: string;
  calls: ToolCallRow[];
}

/** Calls of one batch run at once against their servers; the rest wait for a free place. */
const PARALLEL_CALLS = 8;
const RESULT_BLOCKS = new Set(["text", "media", "structured_data"] as const);

/**
 * Runs a claimed batch of MCP calls outside any transaction (reference design-brief.md §3.5, the async phase), each
 * result recorded in its own transaction as it arrives. A call is recorded only while it is still
 * running under this step's lock: a cancel or a lost lease has decided for it already. Calls left
 * running (the worker is stopping) go back to `ready` for the next claim.
 */
export async function runToolStep(deps: StepDeps, step: ToolStep, signal: AbortSignal): Promise<void> {
  const targetOf = mcpTargets(deps, step);
  const definitionFor = definitionsOfCalls(deps.db.read);
  const queue = [...step.calls];
  const run = (call: ToolCallRow) => (call.type === "mcp" ? runMcpCall(deps, step, call, targetOf, signal) : runBuiltInCall(deps, step, call, definitionFor, signal));
  const lanes = Array.from({ length: Math.min(PARALLEL_CALLS, queue.length) }, async () => {
    for (let call = queue.shift(); call && !signal.aborted; call = queue.shift()) await tracedCall(call, () => run(call));
  });
  await Promise.all(lanes);
  await inSpan("agent.record", {}, () =>
    deps.db.tx(async (tx) => {
      const agent = await lockAgent(tx, step.agentId);
      if (!agent) return;
      await releaseRunningCalls(tx, deps.signals, agent.id, step.lockId);
      await tx.delete(agentRuntimeLocks).where(eq(agentRuntimeLocks.id, step.lockId));
      await markWakeup(tx, agent.id, "tool_step_done");
    }),
  );
}

/** One call as a `tool.call` span of the step's trace: the tool's name, type and call id, and how it ended. */
function tracedCall(call: ToolCallRow, run: () => Promise<ToolOutcome | undefined>): Promise<void> {
  const attributes = { "gen_ai.tool.name": call.name, "gen_ai.tool.call.id": encodeId("toolCall", call.id), "svc.tool.type": call.type };
  return inSpan("tool.call", { kind: SpanKind.CLIENT, attributes }, async (span) => {
    const outcome = await run();
    span.setAttribute("svc.tool_call.outcome", outcome ?? "not_run");
  });
}

/** Calls still running under `lockId` go back to `ready`, for the next claim to run again. The agent must be locked. */
export async function releaseRunningCalls(tx: Tx, signals: AgentSignals, agentId: string, lockId: string): Promise<void> {
  const released = await tx
    .update(toolCalls)
    .set({ state: "ready", runtimeLockId: null, updatedAt: dbNow })
    .where(and(eq(toolCalls.runtimeLockId, lockId), eq(toolCalls.state, "running")))
    .returning({ id: toolCalls.id });
  await signals.toolCallsChanged(tx, agentId, released.map((call) => ({ toolCallId: encodeId("toolCall", call.id), state: "ready" })));
}

/** Where a call goes: its server's endpoint (auth included), the agent's session there, and the server's own tool name. */
interface McpTarget {
  server: McpServerDefinition;
  endpoint: McpEndpoint;
  session: { sessionId: string; protocolVersion: string } | undefined;
  tool: string;
}

/**
 * Resolves each call's target, reading the definition, the secret and the session once per server of a
 * model output: the calls of a batch share them.
 */
function mcpTargets(deps: StepDeps, step: ToolStep): (call: ToolCallRow) => Promise<McpTarget> {
  const definitionFor = definitionsOfCalls(deps.db.read);
  const servers = new Map<string, Promise<Omit<McpTarget, "tool">>>();
  return async (call) => {
    const parsed = parseMcpToolName(call.name);
    // Authorization found the tool in the call's definition, so the name parses; this guards the type.
    if (!parsed) throw new Error(`${call.name} names no MCP server`);
    const key = `${call.modelOutputId}/${parsed.server}`;
    let server = servers.get(key);
    if (!server) servers.set(key, (server = serverTarget(deps, step, parsed.server, definitionFor(call))));
    return { ...(await server), tool: parsed.tool };
  };
}

async function serverTarget(deps: StepDeps, step: ToolStep, key: string, definition: Promise<AgentDefinition>): Promise<Omit<McpTarget, "tool">> {
  const server = (await definition).mcp[key];
  if (!server) throw new Error(`no MCP server "${key}" in the agent's config`);
  const [session] = await deps.db.read
    .select({ sessionId: agentMcpConnections.sessionId, protocolVersion: agentMcpConnections.protocolVersion })
    .from(agentMcpConnections)
    .where(and(eq(agentMcpConnections.agentId, step.agentId), eq(agentMcpConnections.serverKey, key)));
  const resumable = session?.sessionId && session.protocolVersion ? { sessionId: session.sessionId, protocolVersion: session.protocolVersion } : undefined;
  return { server, endpoint: await endpointOf(deps.db, deps.mcp, step, server), session: resumable };
}

/** Runs and records one call; its outcome, or undefined when canceled or stopping left it for others. */
async function runMcpCall(deps: StepDeps, step: ToolStep, call: ToolCallRow, targetOf: (call: ToolCallRow) => Promise<McpTarget>, signal: AbortSignal): Promise<ToolOutcome | undefined> {
  let outcome: ToolOutcome;
  let blocks: SubmittedBlock[];
  try {
    const target = await targetOf(call);
    const result = await withMcpAuth(deps.db, deps.mcp, step, target.server, (endpoint) => deps.mcp.client.callTool(endpoint, target.session, target.tool, call.input, signal), target.endpoint);
    outcome = result.isError ? "failed" : "succeeded";
    // An MCP server's answer is made storable here, where it enters svc (issue 9, F2).
    blocks = storable(resultBlocks(result));
  } catch (err) {
    // Canceled, or the worker is stopping: the cancel has completed the call, or the next claim reruns it.
    if (signal.aborted) return undefined;
    outcome = "failed";
    blocks = [{ type: "text", text: storableText(`The MCP server did not complete the call: ${describeMcpError(err)}`) }];
  }
  await recordCall(deps, step, call, outcome, await prepare(deps, blocks));
  return outcome;
}

/**
 * A built-in tool that runs in a step (tools/catalog.ts, runsInToolStep): the `skill` tool, the file tools and integration tools.
 * A `skill` call that asked machines to install its files is left waiting (undefined): their reports complete it.
 */
async function runBuiltInCall(deps: StepDeps, step: ToolStep, call: ToolCallRow, definitionFor: (call: ToolCallRow) => Promise<AgentDefinition>, signal: AbortSignal): Promise<ToolOutcome | undefined> {
  if (isIntegrationToolName(call.name)) {
    const ran = await runIntegrationTool(deps, step, call, await definitionFor(call), signal);
    if (!ran) return undefined;
    await recordCall(deps, step, call, ran.outcome, ran.prepared);
    return ran.outcome;
  }
  if (FILE_TOOL_NAMES.has(call.name)) return runFileCall(deps, step, call, await definitionFor(call));
  const result = await runSkillTool(deps, step, call, await definitionFor(call));
  if (result === "waiting") return undefined;
  await recordCall(deps, step, call, result.outcome, result.prepared);
  return result.outcome;
}

/** A script's rerun when another write landed between its read and its commit (tools/files/write.ts). */
const WRITE_ATTEMPTS = 3;

/**
 * A file tool call. A memory write is applied in the transaction that records the result, after the
 * call is found still running under this step's lock: the version and the result commit together, so a
 * crash or a lost lease never leaves a write without its result, and the retried call writes once.
 */
async function runFileCall(deps: StepDeps, step: ToolStep, call: ToolCallRow, definition: AgentDefinition): Promise<ToolOutcome | undefined> {
  const ctx = { agentId: step.agentId, orgId: step.orgId, projectId: step.projectId, attached: attachedStores(definition) };
  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
    const ran = await runFileTool(deps, ctx, call.name, call.input);
    if (!("commit" in ran)) {
      await recordCall(deps, step, call, ran.outcome, ran.prepared);
      return ran.outcome;
    }
    const recorded = await recordCallWith(deps, step, call, (tx) => ran.commit(tx, call.id));
    if (recorded !== "changed_meanwhile") return recorded;
  }
  const text = `Conflict: the file kept changing while the script ran (${WRITE_ATTEMPTS} attempts); read it again and retry.`;
  await recordCall(deps, step, call, "failed", await deps.artifacts.prepareContentBlocks([{ type: "text", text }], RESULT_BLOCKS));
  return "failed";
}

/** Records a call's result, only while it is still running under this step's lock. */
async function recordCall(deps: StepDeps, step: ToolStep, call: ToolCallRow, outcome: ToolOutcome, prepared: PreparedBlocks): Promise<void> {
  await recordCallWith(deps, step, call, async () => ({ outcome, prepared }));
}

/**
 * Records what `produce` answers inside the recording transaction, once the call is found still running
 * under this step's lock; its outcome, or undefined when nothing was recorded. `changed_meanwhile` is
 * passed back unrecorded (a write that must be planned again).
 */
async function recordCallWith<T extends "changed_meanwhile">(
  deps: StepDeps,
  step: ToolStep,
  call: ToolCallRow,
  produce: (tx: Tx) => Promise<{ outcome: ToolOutcome; prepared: PreparedBlocks } | T>,
): Promise<ToolOutcome | T | undefined> {
  return inSpan("agent.record", {}, () =>
    deps.db.tx(async (tx) => {
      const agent = await lockAgent(tx, step.agentId);
      if (!agent) return undefined;
      const [current] = await tx
        .select()
        .from(toolCalls)
        .where(and(eq(toolCalls.id, call.id), eq(toolCalls.runtimeLockId, step.lockId), eq(toolCalls.state, "running")));
      if (!current) return undefined;
      const produced = await produce(tx);
      if (produced === "changed_meanwhile") return produced;
      await deps.artifacts.recordArtifacts(tx, produced.prepared, { orgId: step.orgId, projectId: step.projectId, agentId: step.agentId });
      await completeToolCall(tx, agent, current, produced.outcome, produced.prepared.blocks);
      return produced.outcome;
    }),
  );
}

/** The result's blocks with media stored; a result over svc's limits is cut down to a note and its text. */
async function prepare(deps: StepDeps, blocks: SubmittedBlock[]): Promise<PreparedBlocks> {
  try {
    return await deps.artifacts.prepareContentBlocks(blocks, RESULT_BLOCKS);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return deps.artifacts.prepareContentBlocks(fallbackBlocks(blocks, "it exceeded svc's limits on tool results"), RESULT_BLOCKS);
  }
}
