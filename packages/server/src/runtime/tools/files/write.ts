import type { Tx } from "../../../platform/db/index.js";
import { FILE_LIMITS } from "../catalog-files.js";
import type { MemoryPort, MemoryWrite } from "./memory.js";
import { ARTIFACTS_DIR, MEMORY_DIR, notFound, resolveFilePath } from "./paths.js";
import type { FileToolResult } from "./result.js";
import { runSedScript } from "./sed.js";
import type { FileToolContext, FileToolDeps } from "./text.js";

/*
 * write_file (reference docs/tools/built-in.mdx) creates or edits a text file in an attached memory store,
 * and only there: artifacts are immutable records of what entered the timeline. Exactly one of `content`
 * (replace, or with `append` add to the end, creating the file) or `script` (a sed script over the current
 * file, sed.ts). Everything that can be judged before writing is judged here, outside any transaction;
 * the write itself is a `commit` the tool step runs in the transaction that records the call's result
 * (tool-step.ts), so the version and the result commit together: a crash before that commit leaves
 * nothing written, and the retried call writes once.
 *
 * Conflicts (issue 31, item 2): with `expected_digest`, the file must still have that digest when the
 * write commits, or the call fails with the current digest. Without it, `content` replaces whatever is
 * there (two agents' writes become consecutive versions) and `append` appends to the current content. A
 * script is run against the content it read; when another write lands before its result commits, svc
 * runs it again on the new content (a few times at most) unless the model pinned `expected_digest`.
 */

export interface WriteFileInput {
  path: string;
  content?: string;
  script?: string;
  append?: boolean;
  expected_digest?: string;
}

/** A planned write: applied in the recording transaction, its result is the call's result. */
export interface PlannedWrite {
  commit: (tx: Tx, toolCallId: string) => Promise<FileToolResult | "changed_meanwhile">;
}

const MAX_BYTES = FILE_LIMITS.maxWriteBytes;

export async function planWrite(deps: FileToolDeps, ctx: FileToolContext, input: WriteFileInput): Promise<FileToolResult | PlannedWrite> {
  if ((input.content === undefined) === (input.script === undefined)) return { error: "Give exactly one of content or script." };
  if (input.append !== undefined && input.script !== undefined) return { error: "append applies to content only, not to a script." };
  const top = input.path.split("/")[1];
  if (top === ARTIFACTS_DIR) return { error: "Artifacts cannot be written or changed: write_file writes memory files, /memory/<store>/<file>." };
  if (top !== MEMORY_DIR) return { error: `write_file takes an exact /memory/<store>/<file> destination; got ${JSON.stringify(input.path)}.` };
  const file = resolveFilePath("write_file", input.path, ctx.attached);
  if ("error" in file) return file;
  if (file.kind !== "memory") return { error: "write_file writes memory files only." };
  if (/[*?]/.test(file.file)) return { error: "write_file takes one exact path, not a pattern." };
  if (file.store.access === "read_only") {
    return { error: `The memory store ${file.store.name} is attached to you read_only: you can read its files but not write them.` };
  }
  if (!deps.memory) return { error: "Memory stores are not available in this deployment." };
  const memory = deps.memory;
  const change = { storeId: file.store.storeId, path: file.file, ...(input.expected_digest !== undefined ? { expectedDigest: input.expected_digest } : {}) };

  if (input.content !== undefined) {
    const problem = textProblem(input.content);
    if (problem) return { error: problem };
    return writing(memory, ctx, input.path, { ...change, mode: input.append ? "append" : "replace", content: input.content });
  }

  if (Buffer.byteLength(input.script!, "utf8") > FILE_LIMITS.maxScriptBytes) return { error: `The script is larger than ${FILE_LIMITS.maxScriptBytes} bytes.` };
  const current = await memory.readFile(file.store.storeId, file.file);
  if (!current) return { error: `${notFound(input.path)} A script transforms an existing file; create it with content first.` };
  if (input.expected_digest !== undefined && current.digest !== input.expected_digest) {
    return { error: `Conflict: ${input.path} changed: its digest is now ${current.digest}, not expected_digest. Read it again before retrying.` };
  }
  const ran = await runSedScript(input.script!, current.content, MAX_BYTES);
  if ("error" in ran) return { error: `The script was not applied: ${ran.error}` };
  const problem = textProblem(ran.output);
  if (problem) return { error: `The script was not applied: ${problem}` };
  // Pinned to what the script read: a write in between is a conflict, which the caller may answer by running it again.
  const planned = writing(memory, ctx, input.path, { ...change, mode: "replace", content: ran.output, expectedDigest: current.digest });
  const pinnedByModel = input.expected_digest !== undefined;
  return {
    commit: async (tx, toolCallId) => {
      const result = await planned.commit(tx, toolCallId);
      return !pinnedByModel && result !== "changed_meanwhile" && "error" in result && result.error.startsWith("Conflict:") ? "changed_meanwhile" : result;
    },
  };
}

function writing(memory: MemoryPort, ctx: FileToolContext, fullPath: string, change: Omit<MemoryWrite, "agentId" | "toolCallId">): PlannedWrite & { commit: (tx: Tx, toolCallId: string) => Promise<FileToolResult> } {
  return {
    commit: async (tx, toolCallId) => {
      const result = await memory.write(tx, ctx.orgId, ctx.projectId, { ...change, agentId: ctx.agentId, toolCallId });
      if (!result.ok && result.reason === "conflict") return { error: `Conflict: ${fullPath}: ${result.message}` };
      if (!result.ok) return { error: `${fullPath} was not written: ${result.message}.` };
      return {
        value: { path: fullPath, digest: result.digest, size_bytes: result.sizeBytes, version: result.version, created: result.created, changed: result.changed },
      };
    },
  };
}

/** Memory files are UTF-8 text without NUL, at most 10 MiB. */
function textProblem(text: string): string | undefined {
  if (text.includes("\u0000")) return "Memory files are text without NUL characters.";
  if (Buffer.byteLength(text, "utf8") > MAX_BYTES) return `Memory files hold at most 10 MiB (${MAX_BYTES} bytes) of UTF-8.`;
  return undefined;
}
