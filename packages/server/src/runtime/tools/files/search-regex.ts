import { Script, createContext } from "node:vm";
import type { SearchOptions } from "./search-args.js";

/*
 * The matcher behind search_files, in TypeScript over the decoded file (no ripgrep binary). Patterns are
 * JavaScript regular expressions in Unicode mode (`u`), one alternation of all `-e` patterns, like
 * ripgrep's. JavaScript's engine backtracks, so a pattern such as `(a+)+$` can take exponential time on
 * a short line, where ripgrep's automaton would not. The guard, in layers:
 *   - bounded input: the file is at most 48 MiB (text.ts), the patterns at most 1024 bytes (search-args.ts);
 *   - bounded time: the scan runs as a script in a `node:vm` context with a timeout. V8 checks for the
 *     timeout's interrupt inside a running regular expression too, so a catastrophic pattern is stopped
 *     after SEARCH_TIMEOUT_MS and the call fails with advice, instead of holding a worker slot;
 *   - bounded output: the scan keeps at most `cap` hits; only -c counts further.
 * A worker thread with a deadline would bound it too, but costs a thread start per search; the vm timeout
 * interrupts on the same thread, and the worker's other slots wait at most SEARCH_TIMEOUT_MS.
 */

export const SEARCH_TIMEOUT_MS = 2000;

export function buildRegex(options: SearchOptions): RegExp | { error: string } {
  const sources: string[] = [];
  for (const pattern of options.patterns) {
    if (options.fixed) {
      sources.push(pattern.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&"));
      continue;
    }
    try {
      new RegExp(pattern, "u");
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      return { error: `Invalid regular expression ${JSON.stringify(pattern)} (JavaScript syntax, Unicode mode): ${reason}. Use -F to search for literal text.` };
    }
    sources.push(pattern);
  }
  let source = sources.map((s) => `(?:${s})`).join("|");
  // ripgrep's -w: the match is not preceded or followed by a word character (letters, digits, _).
  if (options.word) source = `(?<![\\p{L}\\p{N}_])(?:${source})(?![\\p{L}\\p{N}_])`;
  if (options.line) source = `^(?:${source})$`;
  // -U matches across lines; ^ and $ still match at line ends, as in ripgrep's multiline mode.
  const flags = `u${options.ignoreCase ? "i" : ""}${options.multiline ? "gm" : ""}`;
  return new RegExp(source, flags);
}

/** Lines that matched (or, inverted, did not): each its 0-based line number, the index where it starts, and where its match is. */
export interface LineHit {
  line: number;
  start: number;
  matchIndex: number;
  matchLength: number;
}

/** A multiline match: where it starts in the text and how long it is. */
export interface SpanHit {
  index: number;
  length: number;
}

export interface Scan<T> {
  hits: T[];
  /** All matching lines (or matches, with -U) from the first line searched, when `countAll`; else at least the hits. */
  count: number;
}

// Both scans run inside the sandbox context and use only its globals: re, text, from, firstLine, cap, countAll, invert.
const LINE_SCAN = new Script(`(() => {
  const hits = [];
  let count = 0;
  let pos = from;
  let line = firstLine;
  while (pos < text.length) {
    const newline = text.indexOf("\\n", pos);
    const end = newline === -1 ? text.length : newline;
    const match = re.exec(text.slice(pos, end));
    if ((match !== null) !== invert) {
      count += 1;
      if (hits.length < cap * 4) hits.push(line, pos, match === null ? -1 : match.index, match === null ? 0 : match[0].length);
      else if (!countAll) break;
    }
    line += 1;
    pos = newline === -1 ? text.length : newline + 1;
  }
  return [hits, count];
})()`);

const SPAN_SCAN = new Script(`(() => {
  const hits = [];
  let count = 0;
  re.lastIndex = from;
  for (let match = re.exec(text); match !== null; match = re.exec(text)) {
    count += 1;
    if (hits.length < cap * 2) hits.push(match.index, match[0].length);
    else if (!countAll) break;
    if (match[0].length === 0) re.lastIndex = match.index + (text.codePointAt(match.index) > 0xffff ? 2 : 1);
  }
  return [hits, count];
})()`);

export interface ScanInput {
  regex: RegExp;
  text: string;
  /** The string index of the first line searched, and its 0-based number. */
  from: number;
  firstLine: number;
  /** How many hits to keep. */
  cap: number;
  countAll: boolean;
  invert: boolean;
}

export const TIMED_OUT =
  `The search was stopped after ${SEARCH_TIMEOUT_MS / 1000} s. Nested repetition such as (a+)+ can take exponential time: ` +
  "simplify the pattern, use -F for literal text, or search from a later offset_line.";

/** Runs a scan under the timeout; a message for the model when it was stopped or the engine gave up. */
function sandboxed(script: Script, input: ScanInput): { hits: number[]; count: number } | { error: string } {
  const context = createContext({ re: input.regex, text: input.text, from: input.from, firstLine: input.firstLine, cap: input.cap, countAll: input.countAll, invert: input.invert });
  try {
    const [hits, count] = script.runInContext(context, { timeout: SEARCH_TIMEOUT_MS }) as [number[], number];
    return { hits: Array.from(hits), count };
  } catch (err) {
    if ((err as { code?: unknown }).code === "ERR_SCRIPT_EXECUTION_TIMEOUT") return { error: TIMED_OUT };
    // The engine's own limits (a RangeError for a pattern too deep for its stack) belong to the pattern, not to svc.
    return { error: `The pattern could not be run: ${err instanceof Error ? err.message : String(err)}. Simplify it.` };
  }
}

export function scanLines(input: ScanInput): Scan<LineHit> | { error: string } {
  const result = sandboxed(LINE_SCAN, input);
  if ("error" in result) return result;
  const hits: LineHit[] = [];
  for (let i = 0; i < result.hits.length; i += 4) {
    hits.push({ line: result.hits[i]!, start: result.hits[i + 1]!, matchIndex: result.hits[i + 2]!, matchLength: result.hits[i + 3]! });
  }
  return { hits, count: result.count };
}

export function scanSpans(input: ScanInput): Scan<SpanHit> | { error: string } {
  const result = sandboxed(SPAN_SCAN, input);
  if ("error" in result) return result;
  const hits: SpanHit[] = [];
  for (let i = 0; i < result.hits.length; i += 2) hits.push({ index: result.hits[i]!, length: result.hits[i + 1]! });
  return { hits, count: result.count };
}
