import type { PreparedBlocks } from "../../modules/artifacts/service.js";
import { storable } from "../../platform/storable.js";
import type { AgentDefinition, IntegrationToolRef } from "../definition.js";
import type { StepDeps } from "../model-step.js";
import type { ToolCallRow, ToolOutcome } from "../store/tool-calls.js";
import { attachmentReader, type AttachmentReader } from "./files/attachment.js";
import { attachedStores } from "./files/memory.js";
import { OVERFLOW_BYTES, previewOf, saveAsArtifact } from "./overflow.js";

/**
 * The integrations module as the worker sees it when it runs an `int__<name>__<operation>` call
 * (modules/integrations/tool-runner.ts): the engine reads no integration tables and holds no provider client.
 */
export interface IntegrationToolRunner {
  /**
   * `signal` aborts when the worker stops or the agent is canceled; a call it interrupted throws. `files`
   * reads the stored files the call's `paths` name: the agent's artifacts and its attached memory.
   */
  run(
    agent: { id: string; orgId: string; projectId: string },
    tool: IntegrationToolRef & { name: string },
    input: Record<string, unknown>,
    signal: AbortSignal,
    files: AttachmentReader,
  ): Promise<IntegrationToolResult>;
}

export type IntegrationToolResult = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/**
 * Runs one ready integration call in a tool step; any failure is the call's tool error, never the step's.
 * A call interrupted by `signal` is undefined: a cancel has completed it, or the next claim runs it again.
 */
export async function runIntegrationTool(
  deps: Pick<StepDeps, "integrationTools" | "artifacts" | "memory">,
  step: { agentId: string; orgId: string; projectId: string },
  call: ToolCallRow,
  definition: AgentDefinition,
  signal: AbortSignal,
): Promise<{ outcome: ToolOutcome; prepared: PreparedBlocks } | undefined> {
  const tool = definition.tools.find((t) => t.name === call.name && t.integration !== undefined);
  let result: IntegrationToolResult;
  if (!tool?.integration || !deps.integrationTools) result = { ok: false, message: `The tool ${call.name} cannot run in this deployment.` };
  else {
    try {
      const ctx = { agentId: step.agentId, orgId: step.orgId, projectId: step.projectId, attached: attachedStores(definition) };
      const files = attachmentReader(deps, ctx, call.name);
      result = await deps.integrationTools.run({ id: step.agentId, orgId: step.orgId, projectId: step.projectId }, { ...tool.integration, name: call.name }, call.input, signal, files);
    } catch (err) {
      if (signal.aborted) return undefined;
      result = { ok: false, message: `${call.name} could not run: ${(err as Error).message}` };
    }
  }
  if (!result.ok) return { outcome: "failed", prepared: await deps.artifacts.prepareContentBlocks([{ type: "text", text: storable(result.message) }], RESULT_BLOCKS) };
  return { outcome: "succeeded", prepared: await resultBlocks(deps, call.name, storable(result.value)) };
}

/**
 * Provider text enters svc here (storable() keeps one odd character from failing the record). A result over
 * 50 KiB (a long thread page) follows the overflow rule (overflow.ts): saved whole as a text artifact of its JSON (artifacts take no application/json), and a
 * marker with its path and a preview in its place.
 */
async function resultBlocks(deps: Pick<StepDeps, "artifacts">, name: string, value: Record<string, unknown>): Promise<PreparedBlocks> {
  const json = JSON.stringify(value);
  const size = Buffer.byteLength(json, "utf8");
  if (size <= OVERFLOW_BYTES) return deps.artifacts.prepareContentBlocks([{ type: "structured_data", value }], RESULT_BLOCKS);
  const { stored, ref } = await saveAsArtifact(deps.artifacts, json, "text/plain", `${name}-result.json`);
  const marker = { path: ref.path, preview: previewOf(json), size_bytes: size, content_type: ref.content_type, truncated: true };
  const rest = await deps.artifacts.prepareContentBlocks([{ type: "structured_data", value: marker }], RESULT_BLOCKS);
  return { artifacts: stored.artifacts, blocks: [...rest.blocks, ...stored.blocks] };
}

const RESULT_BLOCKS = new Set(["text", "structured_data"] as const);
