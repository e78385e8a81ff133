import type { ArtifactRow } from "../../../modules/artifacts/service.js";
import { decodeId } from "../../../platform/ids.js";
import { FILE_LIMITS } from "../catalog-files.js";
import { matchesPath, namesUnder, parsePattern, type Segment } from "./glob.js";
import { ARTIFACTS_DIR, artifactPath, MEMORY_DIR, NO_MEMORY } from "./paths.js";
import type { FileToolResult } from "./result.js";
import type { FileToolContext, FileToolDeps } from "./text.js";
import { memoryEntries } from "./list-memory.js";

/*
 * list_files (reference docs/tools/built-in.mdx): the entries of svc's virtual filesystem that match an
 * absolute pattern, without their contents. The tree is `/artifacts` and, in it, the agent's artifacts,
 * newest first; then `/memory` with the attached stores and their files (list-memory.ts), when the config
 * attaches any. An artifact matches
 * by its filename's last `/` component (unnamed ones by the empty name, so `/artifacts/*` lists them);
 * an exact `/artifacts/<artifact_id>` looks that artifact up. At most `limit` entries; `truncated` says
 * there were more, and the model narrows the pattern (the reference pages no further).
 */

export interface ListFilesInput {
  pattern: string;
  limit?: number;
}

export async function listFiles(deps: FileToolDeps, ctx: FileToolContext, input: ListFilesInput): Promise<FileToolResult> {
  const segments = parsePattern(input.pattern);
  if ("error" in segments) return segments;
  const first = segments[0]!;
  if (!first.deep && first.literal && first.glob === MEMORY_DIR && ctx.attached.length === 0) return { error: NO_MEMORY };
  const limit = input.limit ?? FILE_LIMITS.listDefault;

  const entries: Array<Record<string, unknown>> = [];
  if (matchesPath(segments, [ARTIFACTS_DIR])) entries.push({ path: `/${ARTIFACTS_DIR}`, type: "directory" });
  const room = limit - entries.length;
  const rows = await matchingArtifacts(deps, ctx.agentId, segments, room + 1);
  let truncated = rows.length > room;
  entries.push(...rows.slice(0, room).map(fileEntry));
  if (!truncated) {
    const memory = await memoryEntries(deps, ctx, segments, limit - entries.length + 1);
    truncated = entries.length + memory.length > limit;
    entries.push(...memory.slice(0, limit - entries.length));
  }
  const value: Record<string, unknown> = { pattern: input.pattern, entries, truncated };
  if (truncated) value["note"] = `More than ${limit} entries match; narrow the pattern (for example /artifacts/*.csv or /memory/<store>/notes/*) to see the others.`;
  return { value };
}

/** The agent's artifacts the pattern matches, at most `take`; its own artifacts only, whatever the pattern says. */
async function matchingArtifacts(deps: FileToolDeps, agentId: string, segments: readonly Segment[], take: number): Promise<ArtifactRow[]> {
  const exact = exactArtifact(segments);
  if (exact) {
    const row = await deps.artifacts.findAgentArtifact(agentId, exact);
    return row ? [row] : [];
  }
  const names = namesUnder(segments, ARTIFACTS_DIR);
  if (names !== "any" && names.length === 0) return [];
  return deps.artifacts.listAgentArtifacts(agentId, names === "any" ? null : names, take);
}

/** The artifact id of a literal `/artifacts/<artifact_id>` pattern. */
function exactArtifact(segments: readonly Segment[]): string | null {
  const [dir, name] = segments;
  if (segments.length !== 2 || !dir || dir.deep || dir.glob !== ARTIFACTS_DIR || !name || name.deep || !name.literal) return null;
  return decodeId("artifact", name.glob);
}

function fileEntry(row: ArtifactRow): Record<string, unknown> {
  return {
    path: artifactPath(row.id),
    type: "file",
    ...(row.filename !== null ? { filename: row.filename } : {}),
    content_type: row.contentType,
    size_bytes: row.sizeBytes,
    digest: row.digest,
    created_at: row.createdAt.toISOString(),
  };
}
