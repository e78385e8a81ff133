import { FILE_LIMITS } from "../catalog-files.js";
import type { FileToolResult } from "./result.js";
import { parseSearchArgs, type SearchOptions } from "./search-args.js";
import { buildRegex, scanLines, scanSpans, type ScanInput } from "./search-regex.js";
import { countCodePoints, lineStart, loadTextFile, takeCodePoints, type FileToolContext, type FileToolDeps, type TextFile } from "./text.js";
import { isMemoryGlob, searchMemoryGlob } from "./search-memory.js";

/*
 * search_files (reference docs/tools/built-in.mdx) over one artifact: ripgrep-style arguments
 * (search-args.ts), a guarded matcher (search-regex.ts), and here the records: match and context records
 * with the path, the original line number and a bounded snippet. At most `limit` matches; context does
 * not count toward it, but everything counts toward RESPONSE_BYTES, where context may be cut off. With
 * more to find, `truncated` is true and `next_offset_line` is where to search on. `-l` answers the path
 * when the file matches, `-c` the number of matching lines (matches, with -U), not capped by `limit`.
 */

/** A snippet shows at most this many code points of a line; a longer line is cut around its match. */
export const SNIPPET_CHARS = 300;
const SNIPPET_LEAD = 60;
/** The records of one response take at most this many bytes of JSON, well under the 50 KiB overflow rule. */
export const RESPONSE_BYTES = 32 * 1024;

export interface SearchFilesInput {
  path: string;
  args: string[];
  limit?: number;
  offset_line?: number;
}

/** A match: the lines it covers (0-based), where the first starts, and where in it the match begins. */
export interface Hit {
  firstLine: number;
  lastLine: number;
  start: number;
  matchIndex: number;
}

export async function searchFiles(deps: FileToolDeps, ctx: FileToolContext, input: SearchFilesInput): Promise<FileToolResult> {
  const options = parseSearchArgs(input.args);
  if ("error" in options) return options;
  const regex = buildRegex(options);
  if ("error" in regex) return regex;
  if (isMemoryGlob(input.path)) return searchMemoryGlob(deps, ctx, input, options, regex);
  const file = await loadTextFile(deps, ctx, "search_files", input.path);
  if ("error" in file) return file;
  const offset = input.offset_line ?? 1;
  const limit = input.limit ?? FILE_LIMITS.searchDefault;
  const from = lineStart(file.text, offset);
  const scope = { regex, text: file.text, from: from === -1 ? file.text.length : from, firstLine: offset - 1, invert: options.invert };

  if (options.filesWithMatches || options.count) {
    const scan = await (options.multiline ? scanSpans({ ...scope, cap: 0, countAll: options.count }) : scanLines({ ...scope, cap: 0, countAll: options.count }));
    if ("error" in scan) return scan;
    // With cap 0 and no counting, the scan stops at the first hit, which is all -l needs to know.
    if (options.filesWithMatches) return { value: { paths: scan.count > 0 ? [file.path] : [], truncated: false } };
    return { value: { counts: [{ path: file.path, count: scan.count }], truncated: false } };
  }
  const found = await contentHits(options.multiline, { ...scope, cap: limit + 1, countAll: false });
  if ("error" in found) return found;
  const { bytes: _bytes, cut: _cut, ...result } = contentResult(file, options, found.hits, found.capped, limit, scope.firstLine);
  return { value: result };
}

/**
 * The hits of a content search, up to the scan's cap. With -U, matches sharing lines merge into fewer
 * hits, so `capped` says whether the scan itself stopped at its cap.
 */
export async function contentHits(multiline: boolean, scope: ScanInput): Promise<{ hits: Hit[]; capped: boolean } | { error: string }> {
  if (!multiline) {
    const scan = await scanLines(scope);
    if ("error" in scan) return scan;
    return { hits: scan.hits.map((h) => ({ firstLine: h.line, lastLine: h.line, start: h.start, matchIndex: h.matchIndex })), capped: scan.hits.length >= scope.cap };
  }
  const scan = await scanSpans(scope);
  if ("error" in scan) return scan;
  return { hits: spanHits(scope.text, scope.from, scope.firstLine, scan.hits), capped: scan.hits.length >= scope.cap };
}

/** Multiline matches as hits over whole lines; matches sharing a line become one hit, as ripgrep prints a line once. */
function spanHits(text: string, from: number, firstLine: number, spans: ReadonlyArray<{ index: number; length: number }>): Hit[] {
  const hits: Hit[] = [];
  let cursor = from;
  let cursorLine = firstLine;
  const lineOf = (index: number) => {
    for (let newline = text.indexOf("\n", cursor); newline !== -1 && newline < index; newline = text.indexOf("\n", cursor)) {
      cursor = newline + 1;
      cursorLine += 1;
    }
    return { line: cursorLine, start: cursor };
  };
  for (const span of spans) {
    const first = lineOf(span.index);
    const last = lineOf(span.index + Math.max(span.length - 1, 0)).line;
    const previous = hits[hits.length - 1];
    if (previous && first.line <= previous.lastLine) previous.lastLine = Math.max(previous.lastLine, last);
    else hits.push({ firstLine: first.line, lastLine: last, start: first.start, matchIndex: span.index - first.start });
  }
  return hits;
}

interface SearchRecord {
  type: "match" | "context";
  path: string;
  line_number: number;
  end_line_number?: number;
  text: string;
  column?: number;
  cut?: true;
}

/** Match records with their context, in line order, within `limit` matches and `budget` bytes (RESPONSE_BYTES). */
export function contentResult(file: Pick<TextFile, "text" | "path">, options: SearchOptions, allHits: Hit[], capped: boolean, limit: number, firstLine: number, budget = RESPONSE_BYTES) {
  const { text, path } = file;
  const records: SearchRecord[] = [];
  let bytes = 0;
  let cut = false;
  let matches = 0;
  let lastShown = firstLine - 1;
  const add = (record: SearchRecord): boolean => {
    const size = Buffer.byteLength(JSON.stringify(record), "utf8");
    if (bytes + size > budget) return false;
    bytes += size;
    records.push(record);
    return true;
  };
  const hits = allHits.slice(0, limit);
  for (const [i, hit] of hits.entries()) {
    const before = contextLines(text, hit.start, hit.firstLine, Math.max(lastShown + 1, hit.firstLine - options.before));
    if (!before.every((line) => add(contextRecord(path, text, line)))) {
      cut = true;
      break;
    }
    if (!add(matchRecord(path, text, hit, options.invert))) {
      cut = true;
      break;
    }
    matches += 1;
    lastShown = hit.lastLine;
    // After-context stops before the next match: that line is shown as a match.
    const next = allHits[i + 1];
    const until = Math.min(hit.lastLine + options.after, next ? next.firstLine - 1 : Infinity);
    for (const line of linesAfter(text, hit.start, hit.firstLine, hit.lastLine, until)) {
      if (!add(contextRecord(path, text, line))) {
        cut = true;
        break;
      }
      lastShown = line.line;
    }
    if (cut) break;
  }
  const truncated = cut || capped || allHits.length > limit;
  const next = allHits[matches];
  const last = hits[matches - 1];
  const continueAt = next ? next.firstLine : last ? last.lastLine + 1 : firstLine;
  return { path, records, matches, truncated, bytes, cut, ...(truncated ? { next_offset_line: continueAt + 1 } : {}) };
}

interface Line {
  line: number;
  start: number;
}

/** The lines from `fromLine` up to (not including) the line `line` that starts at `start`, walking back. */
function contextLines(text: string, start: number, line: number, fromLine: number): Line[] {
  const lines: Line[] = [];
  let at = start;
  for (let n = line - 1; n >= fromLine && at > 0; n--) {
    at = text.lastIndexOf("\n", at - 2) + 1;
    lines.unshift({ line: n, start: at });
  }
  return lines;
}

/** The lines after a hit's last line, through line `until`; the walk starts at the hit's first line. */
function linesAfter(text: string, start: number, firstLine: number, lastLine: number, until: number): Line[] {
  const lines: Line[] = [];
  let at = start;
  for (let n = firstLine; n < until; n++) {
    const newline = text.indexOf("\n", at);
    // No next line: the text ends here, or with this line's "\n".
    if (newline === -1 || newline + 1 >= text.length) break;
    at = newline + 1;
    if (n + 1 > lastLine) lines.push({ line: n + 1, start: at });
  }
  return lines;
}

function lineEnd(text: string, start: number): number {
  const newline = text.indexOf("\n", start);
  return newline === -1 ? text.length : newline;
}

function contextRecord(path: string, text: string, line: Line): SearchRecord {
  return { type: "context", path, line_number: line.line + 1, ...snippet(text.slice(line.start, lineEnd(text, line.start)), 0) };
}

/** A match record: its lines (several with -U), cut around the match when long, and the match's column. */
function matchRecord(path: string, text: string, hit: Hit, invert: boolean): SearchRecord {
  let end = hit.start;
  for (let n = hit.firstLine; n <= hit.lastLine; n++) end = n < hit.lastLine ? lineEnd(text, end) + 1 : lineEnd(text, end);
  const body = text.slice(hit.start, end);
  const located = !invert && hit.matchIndex >= 0;
  return {
    type: "match",
    path,
    line_number: hit.firstLine + 1,
    ...(hit.lastLine > hit.firstLine ? { end_line_number: hit.lastLine + 1 } : {}),
    ...snippet(body, located ? hit.matchIndex : 0),
    ...(located ? { column: countCodePoints(body, 0, hit.matchIndex) + 1 } : {}),
  };
}

const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/** The line whole, or SNIPPET_CHARS code points of it starting a little before `around`. */
function snippet(body: string, around: number): { text: string; cut?: true } {
  const line = body.endsWith("\r") ? body.slice(0, -1) : body;
  // At most SNIPPET_CHARS UTF-16 units is at most that many code points.
  if (line.length <= SNIPPET_CHARS) return { text: line };
  let start = Math.min(around, line.length);
  for (let back = 0; back < SNIPPET_LEAD && start > 0; back++) start -= start > 1 && isLowSurrogate(line.charCodeAt(start - 1)) ? 2 : 1;
  const { end } = takeCodePoints(line, start, Infinity, SNIPPET_CHARS);
  return start === 0 && end === line.length ? { text: line } : { text: line.slice(start, end), cut: true };
}
