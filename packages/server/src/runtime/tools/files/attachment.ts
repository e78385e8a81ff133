import { encodeId } from "../../../platform/ids.js";
import { notFound, resolveFilePath } from "./paths.js";
import { MEMORY_CONTENT_TYPE, type FileToolContext, type FileToolDeps } from "./text.js";

/*
 * A stored file an integration message tool attaches (reference docs/tools/built-in.mdx,
 * "send_integration_message": `paths` attach files from /artifacts/<artifact_id> or /memory/<store>/<file>;
 * artifacts must belong to the agent and memory stores must be attached to its config; paths identify
 * individual files, glob expansion is not supported). Artifacts go as their bytes, whatever their type;
 * a memory file goes as the UTF-8 text it is, named after the last segment of its path.
 */

export interface AttachmentFile {
  filename: string;
  contentType: string;
  bytes: Buffer;
}

/** Reads one attachment `path` names for `tool`, or a message for the model. */
export type AttachmentReader = (path: string) => Promise<AttachmentFile | { missing: string }>;

const PATTERN = /[*?[\]{}]/;

export function attachmentReader(deps: FileToolDeps, ctx: FileToolContext, tool: string): AttachmentReader {
  return async (path) => {
    if (PATTERN.test(path)) return { missing: `${JSON.stringify(path)} is a pattern; ${tool} attaches individual files and expands no globs: name each file exactly (list_files finds them)` };
    const file = resolveFilePath(tool, path, ctx.attached);
    if ("error" in file) return { missing: file.error };
    if (file.kind === "memory") {
      const found = deps.memory ? await deps.memory.readFile(file.store.storeId, file.file) : undefined;
      if (!found) return { missing: notFound(path) };
      return { filename: file.file.split("/").pop()!, contentType: MEMORY_CONTENT_TYPE, bytes: Buffer.from(found.content, "utf8") };
    }
    // Scoped by agent: another agent's artifact is not found, exactly like an id that names nothing.
    const row = await deps.artifacts.findAgentArtifact(ctx.agentId, file.artifactId);
    if (!row || row.projectId !== ctx.projectId) return { missing: notFound(path) };
    return { filename: row.filename ?? encodeId("artifact", row.id), contentType: row.contentType, bytes: await deps.artifacts.artifactBytes(row) };
  };
}
