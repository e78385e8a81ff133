import type { PreparedBlocks } from "../../../modules/artifacts/service.js";
import { storable } from "../../../platform/storable.js";
import type { StepDeps } from "../../model-step.js";
import type { ToolOutcome } from "../../store/tool-calls.js";
import { listFiles, type ListFilesInput } from "./list.js";
import { readFile, type ReadFileInput } from "./read.js";
import type { FileToolResult } from "./result.js";
import { searchFiles, type SearchFilesInput } from "./search.js";
import { writeFile, type WriteFileInput } from "./write.js";

export { FILE_TOOL_NAMES } from "../catalog-files.js";

/*
 * Runs a file tool call in a tool step (tool-step.ts): it reads stored bytes, which never happens inside a
 * transaction. The input has passed the tool's input schema (tools/execute.ts checks it before a call
 * becomes ready), so only what a schema cannot say is checked here. A result is one structured_data block;
 * a failure is one text block addressed to the model. Results are bounded by each tool's own limits (4 KiB
 * of text, 100 entries), so unlike `skill` they never overflow into an artifact.
 */

const BLOCKS = new Set(["text", "structured_data"] as const);

export async function runFileTool(deps: Pick<StepDeps, "artifacts">, agentId: string, name: string, input: unknown): Promise<{ outcome: ToolOutcome; prepared: PreparedBlocks }> {
  const result = await run(deps, agentId, name, input);
  // Everything in a result is UTF-8 decoded text or database text; storable() is the guard that keeps one odd character from failing the record.
  const blocks = "error" in result ? [{ type: "text" as const, text: storable(result.error) }] : [{ type: "structured_data" as const, value: storable(result.value) }];
  return { outcome: "error" in result ? "failed" : "succeeded", prepared: await deps.artifacts.prepareContentBlocks(blocks, BLOCKS) };
}

function run(deps: Pick<StepDeps, "artifacts">, agentId: string, name: string, input: unknown): Promise<FileToolResult> {
  switch (name) {
    case "list_files":
      return listFiles(deps, agentId, input as ListFilesInput);
    case "read_file":
      return readFile(deps, agentId, input as ReadFileInput);
    case "search_files":
      return searchFiles(deps, agentId, input as SearchFilesInput);
    case "write_file":
      return Promise.resolve(writeFile(input as WriteFileInput));
    default:
      return Promise.resolve({ error: `${name} is not a file tool.` });
  }
}
