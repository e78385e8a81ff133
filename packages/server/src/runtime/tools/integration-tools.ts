import type { PreparedBlocks } from "../../modules/artifacts/service.js";
import { storable } from "../../platform/storable.js";
import type { AgentDefinition, IntegrationToolRef } from "../definition.js";
import type { StepDeps } from "../model-step.js";
import type { ToolCallRow, ToolOutcome } from "../store/tool-calls.js";

/**
 * The integrations module as the worker sees it when it runs an `int__<name>__<operation>` call
 * (modules/integrations/tool-runner.ts): the engine reads no integration tables and holds no provider client.
 */
export interface IntegrationToolRunner {
  run(agent: { id: string; orgId: string; projectId: string }, tool: IntegrationToolRef & { name: string }, input: Record<string, unknown>): Promise<IntegrationToolResult>;
}

export type IntegrationToolResult = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/** Runs one ready integration call in a tool step; any failure is the call's tool error, never the step's. */
export async function runIntegrationTool(
  deps: Pick<StepDeps, "integrationTools" | "artifacts">,
  step: { agentId: string; orgId: string; projectId: string },
  call: ToolCallRow,
  definition: AgentDefinition,
): Promise<{ outcome: ToolOutcome; prepared: PreparedBlocks }> {
  const tool = definition.tools.find((t) => t.name === call.name && t.integration !== undefined);
  let result: IntegrationToolResult;
  if (!tool?.integration || !deps.integrationTools) result = { ok: false, message: `The tool ${call.name} cannot run in this deployment.` };
  else {
    try {
      result = await deps.integrationTools.run({ id: step.agentId, orgId: step.orgId, projectId: step.projectId }, { ...tool.integration, name: call.name }, call.input);
    } catch (err) {
      result = { ok: false, message: `${call.name} could not run: ${(err as Error).message}` };
    }
  }
  // Provider text enters svc here: storable() keeps one odd character from failing the record.
  const blocks = result.ok ? [{ type: "structured_data" as const, value: storable(result.value) }] : [{ type: "text" as const, text: storable(result.message) }];
  return { outcome: result.ok ? "succeeded" : "failed", prepared: await deps.artifacts.prepareContentBlocks(blocks, RESULT_BLOCKS) };
}

const RESULT_BLOCKS = new Set(["text", "structured_data"] as const);
