import type { PreparedBlocks } from "../../../modules/artifacts/service.js";
import type { Tx } from "../../../platform/db/index.js";
import { storable } from "../../../platform/storable.js";
import type { StepDeps } from "../../model-step.js";
import type { ToolOutcome } from "../../store/tool-calls.js";
import { listFiles, type ListFilesInput } from "./list.js";
import { readFile, type ReadFileInput } from "./read.js";
import type { FileToolResult } from "./result.js";
import { searchFiles, type SearchFilesInput } from "./search.js";
import type { FileToolContext } from "./text.js";
import { planWrite, type WriteFileInput } from "./write.js";

export { FILE_TOOL_NAMES } from "../catalog-files.js";

/*
 * Runs a file tool call in a tool step (tool-step.ts): it reads stored bytes, which never happens inside a
 * transaction. The input has passed the tool's input schema (tools/execute.ts checks it before a call
 * becomes ready), so only what a schema cannot say is checked here. A result is one structured_data block;
 * a failure is one text block addressed to the model. Results are bounded by each tool's own limits (4 KiB
 * of text, 100 entries), so unlike `skill` they never overflow into an artifact. A `write_file` that can be
 * made comes back as a `commit` for the transaction that records the call (write.ts).
 */

const BLOCKS = new Set(["text", "structured_data"] as const);

export interface FileToolAnswer {
  outcome: ToolOutcome;
  prepared: PreparedBlocks;
}

export type FileToolRun = FileToolAnswer | { commit: (tx: Tx, toolCallId: string) => Promise<FileToolAnswer | "changed_meanwhile"> };

export async function runFileTool(deps: Pick<StepDeps, "artifacts" | "memory">, ctx: FileToolContext, name: string, input: unknown): Promise<FileToolRun> {
  if (name === "write_file") {
    const planned = await planWrite(deps, ctx, input as WriteFileInput);
    if (!("commit" in planned)) return answer(deps, planned);
    return {
      commit: async (tx, toolCallId) => {
        const result = await planned.commit(tx, toolCallId);
        return result === "changed_meanwhile" ? result : answer(deps, result);
      },
    };
  }
  return answer(deps, await run(deps, ctx, name, input));
}

async function answer(deps: Pick<StepDeps, "artifacts">, result: FileToolResult): Promise<FileToolAnswer> {
  // Everything in a result is UTF-8 decoded text or database text; storable() is the guard that keeps one odd character from failing the record.
  const blocks = "error" in result ? [{ type: "text" as const, text: storable(result.error) }] : [{ type: "structured_data" as const, value: storable(result.value) }];
  return { outcome: "error" in result ? "failed" : "succeeded", prepared: await deps.artifacts.prepareContentBlocks(blocks, BLOCKS) };
}

function run(deps: Pick<StepDeps, "artifacts" | "memory">, ctx: FileToolContext, name: string, input: unknown): Promise<FileToolResult> {
  switch (name) {
    case "list_files":
      return listFiles(deps, ctx, input as ListFilesInput);
    case "read_file":
      return readFile(deps, ctx, input as ReadFileInput);
    case "search_files":
      return searchFiles(deps, ctx, input as SearchFilesInput);
    default:
      return Promise.resolve({ error: `${name} is not a file tool.` });
  }
}
