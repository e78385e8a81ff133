import { Ajv, type ValidateFunction } from "ajv";
import { eq } from "drizzle-orm";
import { agentConfigs, modelCallContexts, modelOutputs } from "../../db/schema/index.js";
import type { AppDb, Tx } from "../../platform/db/index.js";
import { mcpToolOf } from "../mcp/connections.js";
import { insertInteraction } from "../store/interactions.js";
import { routeInteraction } from "../../modules/integrations/interaction-delivery.js";
import { enqueueWebhookEvents } from "../../modules/webhooks/enqueue.js";
import { interactionView } from "../../modules/interactions/views.js";
import type { InteractionRow } from "../store/interactions.js";
import { completeToolCall, setToolCallState, textBlock, type ToolCallRow } from "../store/tool-calls.js";
import type { AgentRow } from "../store/journal.js";
import type { AgentDefinition } from "../definition.js";
import { permissionForm, questionForm, type AskQuestionInput } from "./forms.js";
import { runsInToolStep } from "./catalog.js";
import { dispatchRunCommand, runCommandContext, type RunCommandInput } from "./run-command.js";
import { dispatchMachineTool, MACHINE_TOOL_NAMES, type ToolPorts } from "./machine-tools.js";
import { PROCESS_TOOL_NAMES } from "./catalog-processes.js";
import { dispatchProcessTool } from "./process-tools.js";
import { HANDLER_TOOL_NAMES } from "./catalog-handlers.js";
import { dispatchHandlerTool } from "./handler-tools.js";
import { TRANSFER_TOOL_NAMES } from "./catalog-transfer.js";
import { dispatchTransferTool, transferContext, type TransferInput } from "./transfer-tools.js";
import { dispatchDelegationTool, DELEGATION_TOOL_NAMES, tellCoordinatorOfInteraction } from "./delegation-tools.js";

/*
 * The worker's transactional tool work (reference design-brief.md §3.5): permission checks move `awaiting_authorization`
 * calls on, and ready built-in calls are dispatched. Ready MCP and `skill` calls run outside the transaction,
 * in a tool step (tool-step.ts). Custom calls are never dispatched: once ready they wait for the client's result.
 */

const ajv = new Ajv({ allErrors: true, strict: false });
const validators = new Map<string, ValidateFunction | undefined>();

/**
 * A validator for a tool's input schema, or undefined for a schema ajv cannot compile: config schemas
 * were checked when the config was made, but an MCP server's are its own, and that server validates too.
 */
function validatorFor(schema: Record<string, unknown>): ValidateFunction | undefined {
  const key = JSON.stringify(schema);
  if (!validators.has(key)) {
    if (validators.size > 1000) validators.clear();
    let validate: ValidateFunction | undefined;
    try {
      validate = ajv.compile(schema);
    } catch {
      validate = undefined;
    }
    validators.set(key, validate);
  }
  return validators.get(key);
}

/** The definition a tool call was made under: the config of the model call that produced its output. */
async function definitionOfOutput(db: AppDb | Tx, modelOutputId: string): Promise<AgentDefinition> {
  const [row] = await db
    .select({ definition: agentConfigs.compiledDefinition })
    .from(modelOutputs)
    .innerJoin(modelCallContexts, eq(modelCallContexts.id, modelOutputs.modelCallContextId))
    .innerJoin(agentConfigs, eq(agentConfigs.id, modelCallContexts.agentConfigId))
    .where(eq(modelOutputs.id, modelOutputId));
  return row!.definition;
}

/** The definition of each call's model output, read once per output: the calls of one output share it. */
export function definitionsOfCalls(db: AppDb | Tx): (call: ToolCallRow) => Promise<AgentDefinition> {
  const definitions = new Map<string, Promise<AgentDefinition>>();
  return (call) => {
    let definition = definitions.get(call.modelOutputId);
    if (!definition) definitions.set(call.modelOutputId, (definition = definitionOfOutput(db, call.modelOutputId)));
    return definition;
  };
}

export async function runToolWork(tx: Tx, agent: AgentRow, calls: ToolCallRow[], ports: ToolPorts = {}): Promise<void> {
  const definitionFor = definitionsOfCalls(tx);
  for (const call of calls) {
    if (call.state === "awaiting_authorization") await authorize(tx, agent, call, await definitionFor(call), ports);
    // Tools that run in a tool step (the `skill` tool) are left ready for it.
    if (call.state === "ready" && call.type === "built_in" && !runsInToolStep(call.name)) await dispatch(tx, agent, call, ports, definitionFor);
  }
}

async function authorize(tx: Tx, agent: AgentRow, call: ToolCallRow, definition: AgentDefinition, ports: ToolPorts): Promise<void> {
  const tool = call.type === "mcp" ? await mcpToolOf(tx, agent.id, definition, call.name) : definition.tools.find((t) => t.name === call.name && t.type === call.type);
  if (!tool) {
    await completeToolCall(tx, agent, call, "failed", [textBlock(`Unsupported tool: ${call.name} is not configured for this agent.`)]);
    return;
  }
  const validate = validatorFor(tool.inputSchema);
  if (validate && !validate(call.input)) {
    const problems = (validate.errors ?? []).map((e) => `${e.instancePath || "input"} ${e.message ?? "is invalid"}`).join("; ");
    await completeToolCall(tx, agent, call, "failed", [textBlock(`Malformed input for ${call.name}: ${problems}`)]);
    return;
  }
  if (tool.permission === "always_deny") {
    await completeToolCall(tx, agent, call, "denied", [textBlock(`Permission denied: ${call.name} is not allowed for this agent.`)]);
    return;
  }
  if (tool.permission === "always_ask") {
    const details = await approverDetails(tx, agent, call, ports);
    const interaction = await insertInteraction(tx, { agentId: agent.id, turnId: call.turnId, toolCallId: call.id, kind: "permission", request: permissionForm(call.name, call.input, details) });
    await routeInteraction(tx, ports.kinds, definition, interaction);
    await announceWaiting(tx, agent, interaction);
    await setToolCallState(tx, call, "awaiting_permission");
    await tellCoordinatorOfInteraction(tx, agent);
    return;
  }
  await setToolCallState(tx, call, "ready");
}

/** What an approver sees beyond the input: where a command would run, or which machine file a transfer reads or writes. */
async function approverDetails(tx: Tx, agent: AgentRow, call: ToolCallRow, ports: ToolPorts): Promise<Array<{ label: string; value: string }>> {
  if (call.type !== "built_in") return [];
  if (call.name === "run_command") return runCommandContext(tx, agent, call.input as unknown as RunCommandInput, ports.machines);
  if (TRANSFER_TOOL_NAMES.has(call.name)) return transferContext(tx, agent, call.name, call.input as unknown as TransferInput, ports.machines);
  return [];
}

async function dispatch(tx: Tx, agent: AgentRow, call: ToolCallRow, ports: ToolPorts, definitionFor: (call: ToolCallRow) => Promise<AgentDefinition>): Promise<void> {
  if (call.name === "ask_question") {
    const interaction = await insertInteraction(tx, { agentId: agent.id, turnId: call.turnId, toolCallId: call.id, kind: "question", request: questionForm(call.input as unknown as AskQuestionInput) });
    await routeInteraction(tx, ports.kinds, await definitionFor(call), interaction);
    await announceWaiting(tx, agent, interaction);
    await setToolCallState(tx, call, "waiting");
    await tellCoordinatorOfInteraction(tx, agent);
    return;
  }
  if (call.name === "run_command") return dispatchRunCommand(tx, agent, call, ports.machines);
  if (MACHINE_TOOL_NAMES.has(call.name)) return dispatchMachineTool(tx, agent, call, ports.machines);
  if (PROCESS_TOOL_NAMES.has(call.name)) return dispatchProcessTool(tx, agent, call);
  if (HANDLER_TOOL_NAMES.has(call.name)) return dispatchHandlerTool(tx, agent, call, await definitionFor(call), ports.kinds);
  if (TRANSFER_TOOL_NAMES.has(call.name)) return dispatchTransferTool(tx, agent, call, ports, await definitionFor(call));
  if (DELEGATION_TOOL_NAMES.has(call.name)) return dispatchDelegationTool(tx, agent, call, await definitionFor(call), ports.delegates);
  await completeToolCall(tx, agent, call, "failed", [textBlock(`The built-in tool ${call.name} cannot run in this deployment.`)]);
}

/**
 * `agent.waiting` to webhooks, in the transaction that opens the interaction (docs/webhooks.md): the agent,
 * and the interaction as the interactions list answers it (what is asked is its `request`).
 */
async function announceWaiting(tx: Tx, agent: AgentRow, interaction: InteractionRow): Promise<void> {
  const shown = interactionView(agent, interaction);
  // As the API answers it: its serializer fills the schema's default `allows_text: false`.
  const questions = shown.request.questions.map((q) => ({ ...q, multiple: q.multiple ?? false, options: q.options.map((o) => ({ ...o, allows_text: o.allows_text ?? false })) }));
  const view = { ...shown, request: { ...shown.request, questions } };
  await enqueueWebhookEvents(tx, {
    orgId: agent.orgId,
    projectId: agent.projectId,
    type: "agent.waiting",
    data: { agent_id: view.agent_id, project_id: view.project_id, interaction: view },
  });
}
