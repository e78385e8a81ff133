import type { ToolArtifact, ToolContext } from "../kind.js";

/** The attachment arguments a message tool takes: artifacts by id, and stored files by path (a type: tool arguments are records). */
export type AttachmentArgs = {
  artifact_ids?: string[];
  paths?: string[];
};

/**
 * The files a message tool sends, in argument order (artifact_ids, then paths), every one read before
 * anything is sent: a bad id or path posts nothing (reference docs/tools/built-in.mdx,
 * "send_integration_message"). `max` is the provider's limit per message, over both lists together.
 */
export async function filesToSend(context: ToolContext, args: AttachmentArgs, max: number): Promise<ToolArtifact[] | { message: string }> {
  const ids = args.artifact_ids ?? [];
  const paths = args.paths ?? [];
  if (ids.length + paths.length > max) {
    return { message: `a message carries at most ${max} files; got ${ids.length + paths.length} (artifact_ids and paths together); nothing was posted` };
  }
  const files: ToolArtifact[] = [];
  for (const id of ids) {
    const artifact = await context.artifact(id);
    if ("missing" in artifact) return { message: `${artifact.missing}; nothing was posted` };
    files.push(artifact);
  }
  for (const path of paths) {
    const file = await context.file(path);
    if ("missing" in file) return { message: `${file.missing} Nothing was posted.` };
    files.push(file);
  }
  return files;
}

/** The `paths` member of a message tool's input schema (the tool's description says what it attaches). */
export function pathsSchema(max: number) {
  return {
    type: "array",
    items: { type: "string", minLength: 2, maxLength: 1024 },
    maxItems: max,
    uniqueItems: true,
    description: "Stored files to attach, each named exactly: /artifacts/<artifact_id> (yours) or /memory/<store>/<file> (a store attached to your config). No glob patterns.",
  };
}
