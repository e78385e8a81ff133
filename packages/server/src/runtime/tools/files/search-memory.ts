import { FILE_LIMITS } from "../catalog-files.js";
import { parsePattern } from "./glob.js";
import { matchingMemoryFiles } from "./list-memory.js";
import { MEMORY_DIR } from "./paths.js";
import type { FileToolResult } from "./result.js";
import type { SearchOptions } from "./search-args.js";
import { scanLines, scanSpans } from "./search-regex.js";
import { contentHits, contentResult, RESPONSE_BYTES, type SearchFilesInput } from "./search.js";
import type { FileToolContext, FileToolDeps } from "./text.js";

/*
 * search_files over memory files matching a glob (reference docs/tools/built-in.mdx, search_files): the
 * files list_files would list for the pattern, searched in path order. `limit` counts matches across all
 * files and every record shares one response budget; `-l` lists the matching paths, `-c` each matching
 * file's count. At most MAX_FILES files and MAX_SCAN_BYTES of text are searched per call; past either, the
 * result is `truncated` and says to narrow the pattern. `offset_line` is for one exact file only.
 */

const MAX_FILES = 1000;
const MAX_SCAN_BYTES = 64 * 1024 * 1024;

/** Whether `path` is a memory glob rather than one exact memory file. */
export function isMemoryGlob(path: string): boolean {
  return path.split("/")[1] === MEMORY_DIR && /[*?]/.test(path);
}

export async function searchMemoryGlob(deps: FileToolDeps, ctx: FileToolContext, input: SearchFilesInput, options: SearchOptions, regex: RegExp): Promise<FileToolResult> {
  if (input.offset_line !== undefined) return { error: "offset_line applies only to a search of one exact file; leave it out when path is a glob." };
  const segments = parsePattern(input.path);
  if ("error" in segments) return segments;
  const listed = await matchingMemoryFiles(deps, ctx, segments, MAX_FILES + 1);
  if ("error" in listed) return listed;
  const files = listed.files.slice(0, MAX_FILES);
  let truncated = listed.files.length > MAX_FILES;
  const limit = input.limit ?? FILE_LIMITS.searchDefault;
  const paths: string[] = [];
  const counts: Array<{ path: string; count: number }> = [];
  const records: unknown[] = [];
  let matches = 0;
  let bytes = 0;
  let scanned = 0;
  for (const entry of files) {
    if (!options.filesWithMatches && !options.count && matches >= limit) {
      truncated = true;
      break;
    }
    if (scanned + entry.sizeBytes > MAX_SCAN_BYTES) {
      truncated = true;
      break;
    }
    const file = deps.memory ? await deps.memory.readFile(entry.storeId, entry.file) : undefined;
    if (!file) continue; // deleted since it was listed
    scanned += file.sizeBytes;
    const scope = { regex, text: file.content, from: 0, firstLine: 0, invert: options.invert };
    if (options.filesWithMatches || options.count) {
      const scan = await (options.multiline ? scanSpans({ ...scope, cap: 0, countAll: options.count }) : scanLines({ ...scope, cap: 0, countAll: options.count }));
      if ("error" in scan) return scan;
      if (scan.count > 0 && options.filesWithMatches) paths.push(entry.path);
      else if (scan.count > 0) counts.push({ path: entry.path, count: scan.count });
      continue;
    }
    const room = limit - matches;
    const found = await contentHits(options.multiline, { ...scope, cap: room + 1, countAll: false });
    if ("error" in found) return found;
    if (found.hits.length === 0) continue;
    const result = contentResult({ path: entry.path, text: file.content }, options, found.hits, found.capped, room, 0, RESPONSE_BYTES - bytes);
    records.push(...result.records);
    matches += result.matches;
    bytes += result.bytes;
    if (result.cut) {
      truncated = true;
      break;
    }
  }
  const note = truncated ? { note: "There is more to find than this result holds; narrow the pattern or the path glob." } : {};
  if (options.filesWithMatches) return { value: { paths, truncated, ...note } };
  if (options.count) return { value: { counts, truncated, ...note } };
  return { value: { path: input.path, records, matches, truncated, ...note } };
}
