import type { ArtifactsService } from "../../../modules/artifacts/service.js";
import type { MemoryAttachmentDefinition } from "../../definition.js";
import type { MemoryPort } from "./memory.js";
import { notFound, resolveFilePath } from "./paths.js";

/*
 * The text of a stored file, as read_file and search_files take it (reference docs/tools/built-in.mdx,
 * read_file): UTF-8 without NUL bytes, at most 48 MiB for an artifact; memory files are text already (the
 * memory-stores module refuses anything else, at most 10 MiB). Readability is decided from the bytes,
 * whatever content type the artifact was stored with. Offsets in characters count Unicode code points, so
 * the helpers below walk code points, never cutting a surrogate pair (which PostgreSQL's jsonb would
 * refuse to store in a result).
 */

export const MAX_ARTIFACT_TEXT_BYTES = 48 * 1024 * 1024;
/** What read_file reports as a memory file's content type: memory holds UTF-8 text only. */
export const MEMORY_CONTENT_TYPE = "text/plain; charset=utf-8";

/** What the file tools need: the agent's own artifacts, and the memory stores (absent: none reachable). */
export interface FileToolDeps {
  artifacts: Pick<ArtifactsService, "findAgentArtifact" | "artifactBytes" | "listAgentArtifacts">;
  memory?: MemoryPort;
}

/** Whose call it is: the agent, its project, and the memory stores its call's config attaches. */
export interface FileToolContext {
  agentId: string;
  orgId: string;
  projectId: string;
  attached: readonly MemoryAttachmentDefinition[];
}

export interface TextFile {
  path: string;
  text: string;
  sizeBytes: number;
  contentType: string;
  digest: string;
}

// fatal: invalid UTF-8 is refused rather than turned into U+FFFD; ignoreBOM keeps a BOM as a character, so offsets count it.
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The artifact or memory file `path` names, among what the agent may reach, decoded; or a message for the model. */
export async function loadTextFile(deps: FileToolDeps, ctx: FileToolContext, tool: string, path: string): Promise<TextFile | { error: string }> {
  const file = resolveFilePath(tool, path, ctx.attached);
  if ("error" in file) return file;
  if (file.kind === "memory") {
    const found = deps.memory ? await deps.memory.readFile(file.store.storeId, file.file) : undefined;
    if (!found) return { error: notFound(path) };
    return { path, text: found.content, sizeBytes: found.sizeBytes, contentType: MEMORY_CONTENT_TYPE, digest: found.digest };
  }
  // Scoped by agent: another agent's artifact id is not found, exactly like an id that names nothing.
  const row = await deps.artifacts.findAgentArtifact(ctx.agentId, file.artifactId);
  if (!row) return { error: notFound(path) };
  if (row.sizeBytes > MAX_ARTIFACT_TEXT_BYTES) {
    return { error: `${path} is ${row.sizeBytes} bytes; ${tool} reads artifacts of at most 48 MiB (${MAX_ARTIFACT_TEXT_BYTES} bytes).` };
  }
  const bytes = await deps.artifacts.artifactBytes(row);
  const notText = `${path} (${row.contentType}) is not a text file`;
  if (bytes.includes(0)) return { error: `${notText}: it contains NUL bytes. ${tool} reads UTF-8 text only.` };
  try {
    return { path, text: decoder.decode(bytes), sizeBytes: row.sizeBytes, contentType: row.contentType, digest: row.digest };
  } catch {
    return { error: `${notText}: it is not valid UTF-8. ${tool} reads UTF-8 text only.` };
  }
}

/** UTF-8 bytes of the code point starting at `index`, and its length in UTF-16 units. */
function codePointAt(text: string, index: number): { bytes: number; units: number } {
  const cp = text.codePointAt(index)!;
  return { bytes: cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4, units: cp > 0xffff ? 2 : 1 };
}

/**
 * From string index `start`, as many whole code points as fit in `maxBytes` of UTF-8 and `maxCodePoints`,
 * stopping before `limit`: the end index and how many code points were taken.
 */
export function takeCodePoints(text: string, start: number, maxBytes: number, maxCodePoints = Infinity, limit = text.length): { end: number; codePoints: number } {
  let end = start;
  let bytes = 0;
  let codePoints = 0;
  while (end < limit && codePoints < maxCodePoints) {
    const next = codePointAt(text, end);
    if (bytes + next.bytes > maxBytes) break;
    bytes += next.bytes;
    end += next.units;
    codePoints += 1;
  }
  return { end, codePoints };
}

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;

/** The code points between string indexes `start` and `end` (both on code point boundaries). */
export function countCodePoints(text: string, start = 0, end = text.length): number {
  let count = 0;
  for (let i = start; i < end; i++) {
    count += 1;
    // Decoded UTF-8 has no unpaired surrogates, so a high surrogate always has its low half next.
    if (isHighSurrogate(text.charCodeAt(i))) i++;
  }
  return count;
}

/** The string index of code point `offset`, or -1 when the text has no more than `offset` code points. */
export function indexOfCodePoint(text: string, offset: number): number {
  let index = 0;
  for (let seen = 0; seen < offset; seen++) {
    if (index >= text.length) return -1;
    index += isHighSurrogate(text.charCodeAt(index)) ? 2 : 1;
  }
  return index < text.length ? index : -1;
}

/** The string index where line `line` (from 1) starts, or -1 when the text has fewer lines. A final "\n" ends the last line. */
export function lineStart(text: string, line: number): number {
  let index = 0;
  for (let n = 1; n < line; n++) {
    const newline = text.indexOf("\n", index);
    if (newline === -1) return -1;
    index = newline + 1;
  }
  return index < text.length ? index : -1;
}
