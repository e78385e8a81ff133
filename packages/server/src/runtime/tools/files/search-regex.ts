import { Worker } from "node:worker_threads";
import type { SearchOptions } from "./search-args.js";

/*
 * The matcher behind search_files, in TypeScript over the decoded file (no ripgrep binary). Patterns are
 * JavaScript regular expressions in Unicode mode (`u`), one alternation of all `-e` patterns, like
 * ripgrep's. JavaScript's engine backtracks, so a pattern such as `(a+)+$` can take exponential time on
 * a short line, where ripgrep's automaton would not. The guard, in layers:
 *   - bounded input: the file is at most 48 MiB (text.ts), the patterns at most 1024 bytes (search-args.ts);
 *   - bounded time, off the main thread: scans run in one long-lived search thread (SearchThread, below)
 *     with a deadline. A catastrophic pattern is stopped after SEARCH_TIMEOUT_MS by terminating the thread,
 *     and the call fails with advice. The main thread, which answers HTTP and runs the other worker slots,
 *     never runs a pattern: a `node:vm` timeout, used before, bounded a scan too, but on the main thread,
 *     so every request waited for it;
 *   - bounded output: the scan keeps at most `cap` hits; only -c counts further.
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

/*
 * The search thread's program: both scans, over the message's text with its regex rebuilt from source
 * and flags (already checked by buildRegex). Plain JavaScript evaluated as the thread's script, so the
 * thread starts without a loader and is the same when svc runs from source or built.
 */
const THREAD_SOURCE = `
const { parentPort } = require("node:worker_threads");
function scanLines({ re, text, from, firstLine, cap, countAll, invert }) {
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
  return { hits, count };
}
function scanSpans({ re, text, from, cap, countAll }) {
  const hits = [];
  let count = 0;
  re.lastIndex = from;
  for (let match = re.exec(text); match !== null; match = re.exec(text)) {
    count += 1;
    if (hits.length < cap * 2) hits.push(match.index, match[0].length);
    else if (!countAll) break;
    if (match[0].length === 0) re.lastIndex = match.index + (text.codePointAt(match.index) > 0xffff ? 2 : 1);
  }
  return { hits, count };
}
parentPort.on("message", (job) => {
  let reply;
  try {
    const input = { ...job, re: new RegExp(job.source, job.flags) };
    reply = job.kind === "lines" ? scanLines(input) : scanSpans(input);
  } catch (err) {
    reply = { failure: String(err && err.message ? err.message : err) };
  }
  parentPort.postMessage(reply);
});
`;

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

type RawScan = { hits: number[]; count: number } | { error: string };

interface Job {
  kind: "lines" | "spans";
  input: ScanInput;
  resolve(result: RawScan): void;
}

/**
 * One long-lived thread that runs the scans, one at a time in the order asked. A scan that outlives
 * SEARCH_TIMEOUT_MS is stopped by terminating the thread (a running regular expression cannot be
 * interrupted otherwise), and the next scan starts a new one. The thread is unreferenced: it never keeps
 * svc from exiting, and an idle one costs no CPU.
 */
class SearchThread {
  private worker: Worker | undefined;
  private readonly waiting: Job[] = [];
  private running: { job: Job; deadline: NodeJS.Timeout | undefined } | undefined;
  private readonly online = new WeakSet<Worker>();

  scan(kind: Job["kind"], input: ScanInput): Promise<RawScan> {
    return new Promise((resolve) => {
      this.waiting.push({ kind, input, resolve });
      this.startNext();
    });
  }

  private startNext(): void {
    if (this.running || this.waiting.length === 0) return;
    const job = this.waiting.shift()!;
    const { regex, text, from, firstLine, cap, countAll, invert } = job.input;
    const running: { job: Job; deadline: NodeJS.Timeout | undefined } = { job, deadline: undefined };
    this.running = running;
    const worker = this.thread();
    // The limit is the scan's, not the thread's start: a new thread on a loaded machine can take seconds to come up.
    const startClock = () => {
      if (this.running === running) running.deadline = setTimeout(() => this.abandon({ error: TIMED_OUT }), SEARCH_TIMEOUT_MS).unref();
    };
    if (this.online.has(worker)) startClock();
    else worker.once("online", startClock);
    worker.postMessage({ kind: job.kind, source: regex.source, flags: regex.flags, text, from, firstLine, cap, countAll, invert });
  }

  private finish(result: RawScan): void {
    const running = this.running;
    if (!running) return;
    clearTimeout(running.deadline);
    this.running = undefined;
    running.job.resolve(result);
    this.startNext();
  }

  /** The running scan ends with `result`, and its thread with it. */
  private abandon(result: RawScan): void {
    const worker = this.worker;
    this.worker = undefined;
    void worker?.terminate();
    this.finish(result);
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(THREAD_SOURCE, { eval: true });
    worker.unref();
    const current = () => this.worker === worker;
    worker.once("online", () => this.online.add(worker));
    worker.on("message", (reply: RawScan | { failure: string }) => current() && this.finish("failure" in reply ? { error: cannotRun(reply.failure) } : reply));
    worker.on("error", (err) => current() && this.abandon({ error: cannotRun(err) }));
    worker.on("exit", () => current() && this.abandon({ error: cannotRun(new Error("the search thread exited")) }));
    this.worker = worker;
    return worker;
  }
}

// An error the engine raises while running a pattern belongs to the pattern, not to svc.
const cannotRun = (reason: unknown) => `The pattern could not be run: ${reason instanceof Error ? reason.message : String(reason)}. Simplify it.`;

const searchThread = new SearchThread();

export async function scanLines(input: ScanInput): Promise<Scan<LineHit> | { error: string }> {
  const result = await searchThread.scan("lines", input);
  if ("error" in result) return result;
  const hits: LineHit[] = [];
  for (let i = 0; i < result.hits.length; i += 4) {
    hits.push({ line: result.hits[i]!, start: result.hits[i + 1]!, matchIndex: result.hits[i + 2]!, matchLength: result.hits[i + 3]! });
  }
  return { hits, count: result.count };
}

export async function scanSpans(input: ScanInput): Promise<Scan<SpanHit> | { error: string }> {
  const result = await searchThread.scan("spans", input);
  if ("error" in result) return result;
  const hits: SpanHit[] = [];
  for (let i = 0; i < result.hits.length; i += 2) hits.push({ index: result.hits[i]!, length: result.hits[i + 1]! });
  return { hits, count: result.count };
}
