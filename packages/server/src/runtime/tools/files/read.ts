import { FILE_LIMITS } from "../catalog-files.js";
import { countCodePoints, indexOfCodePoint, lineStart, loadTextFile, takeCodePoints, type FileToolContext, type FileToolDeps, type TextFile } from "./text.js";
import type { FileToolResult } from "./result.js";

/*
 * read_file (reference docs/tools/built-in.mdx): line mode by default, character mode when either
 * character input is given, never both. A response holds at most 4 KiB of file text with the file's
 * size, content type and whole-file digest; `has_more` with `next_offset_line` or `next_offset_char`
 * says where to continue. A line longer than a page returns its first chunk and a character offset.
 */

export const PAGE_BYTES = 4096;

export interface ReadFileInput {
  path: string;
  offset_line?: number;
  limit_lines?: number;
  offset_char?: number;
  limit_chars?: number;
}

export async function readFile(deps: FileToolDeps, ctx: FileToolContext, input: ReadFileInput): Promise<FileToolResult> {
  const lineMode = input.offset_line !== undefined || input.limit_lines !== undefined;
  const charMode = input.offset_char !== undefined || input.limit_chars !== undefined;
  if (lineMode && charMode) {
    return { error: "Give either line inputs (offset_line, limit_lines) or character inputs (offset_char, limit_chars), not both: they select different reading modes." };
  }
  const file = await loadTextFile(deps, ctx, "read_file", input.path);
  if ("error" in file) return file;
  const page = charMode
    ? readChars(file.text, input.offset_char ?? 0, input.limit_chars ?? FILE_LIMITS.readCharsDefault)
    : readLines(file.text, input.offset_line ?? 1, input.limit_lines ?? FILE_LIMITS.readLinesDefault);
  return { value: { ...fileFacts(file), ...page } };
}

function fileFacts(file: TextFile) {
  return { path: file.path, size_bytes: file.sizeBytes, content_type: file.contentType, digest: file.digest };
}

/** Whole lines from `offset` while they fit in a page; a first line longer than the page gives its first chunk. */
function readLines(text: string, offset: number, limit: number) {
  const start = lineStart(text, offset);
  if (start === -1) return { offset_line: offset, content: "", has_more: false };
  let end = start;
  let bytes = 0;
  let lines = 0;
  while (lines < limit && end < text.length) {
    const newline = text.indexOf("\n", end);
    const lineEnd = newline === -1 ? text.length : newline + 1;
    const lineBytes = Buffer.byteLength(text.slice(end, lineEnd), "utf8");
    if (bytes + lineBytes > PAGE_BYTES) {
      if (lines === 0) return longLine(text, offset, start, lineEnd);
      break;
    }
    bytes += lineBytes;
    end = lineEnd;
    lines += 1;
  }
  const hasMore = end < text.length;
  return { offset_line: offset, content: text.slice(start, end), has_more: hasMore, ...(hasMore ? { next_offset_line: offset + lines } : {}) };
}

/** The first page of a line too long for one: continuing takes character mode, from the returned offset. */
function longLine(text: string, offset: number, start: number, lineEnd: number) {
  const chunk = takeCodePoints(text, start, PAGE_BYTES, Infinity, lineEnd);
  const nextChar = countCodePoints(text, 0, start) + chunk.codePoints;
  return {
    offset_line: offset,
    content: text.slice(start, chunk.end),
    has_more: true,
    next_offset_char: nextChar,
    note: `Line ${offset} is longer than one page (${PAGE_BYTES} bytes); this is its start. Continue in character mode with offset_char ${nextChar}.`,
  };
}

function readChars(text: string, offset: number, limit: number) {
  const start = indexOfCodePoint(text, offset);
  if (start === -1) return { offset_char: offset, content: "", has_more: false };
  const chunk = takeCodePoints(text, start, PAGE_BYTES, limit);
  const hasMore = chunk.end < text.length;
  return { offset_char: offset, content: text.slice(start, chunk.end), has_more: hasMore, ...(hasMore ? { next_offset_char: offset + chunk.codePoints } : {}) };
}
