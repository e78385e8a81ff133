/*
 * search_files arguments (reference docs/tools/built-in.mdx): ripgrep's short options, read the way
 * ripgrep reads them. Flags may be grouped (`-iw`); `-e`, `-A`, `-B` and `-C` take a value attached
 * (`-C2`, `-efoo`) or as the next argument. Without any `-e`, the first operand is the pattern, as in
 * `rg PATTERN`; every other operand would be a file, and the file is the tool's `path`, so it is
 * refused. Long options and options outside the reference's list are refused by name.
 */

export const MAX_PATTERN_BYTES = 1024;
const MAX_CONTEXT = 5;
const SUPPORTED = "-e PATTERN, -F, -i, -w, -x, -v, -U, -l, -c, -A N, -B N, -C N";

export interface SearchOptions {
  patterns: string[];
  fixed: boolean;
  ignoreCase: boolean;
  word: boolean;
  line: boolean;
  invert: boolean;
  multiline: boolean;
  filesWithMatches: boolean;
  count: boolean;
  before: number;
  after: number;
}

type Flag = "fixed" | "ignoreCase" | "word" | "line" | "invert" | "multiline" | "filesWithMatches" | "count";
const FLAGS: Record<string, Flag> = { F: "fixed", i: "ignoreCase", w: "word", x: "line", v: "invert", U: "multiline", l: "filesWithMatches", c: "count" };

export function parseSearchArgs(args: readonly string[]): SearchOptions | { error: string } {
  const options: SearchOptions = { patterns: [], fixed: false, ignoreCase: false, word: false, line: false, invert: false, multiline: false, filesWithMatches: false, count: false, before: 0, after: 0 };
  const context: { A?: number; B?: number; C?: number } = {};
  const operands: string[] = [];
  let onlyOperands = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (onlyOperands || arg === "-" || !arg.startsWith("-")) {
      operands.push(arg);
      continue;
    }
    if (arg === "--") {
      onlyOperands = true;
      continue;
    }
    if (arg.startsWith("--")) return { error: `Unsupported option ${arg}: search_files takes ${SUPPORTED}.` };
    for (let j = 1; j < arg.length; j++) {
      const letter = arg[j]!;
      const flag = FLAGS[letter];
      if (flag) {
        options[flag] = true;
        continue;
      }
      if (!"eABC".includes(letter)) return { error: `Unsupported option -${letter}: search_files takes ${SUPPORTED}.` };
      // The rest of the argument is the value, or else the next argument is.
      const value = j + 1 < arg.length ? arg.slice(j + 1) : args[++i];
      if (value === undefined) return { error: `-${letter} needs a value${letter === "e" ? " (the pattern)" : " (0 to 5)"}.` };
      if (letter === "e") options.patterns.push(value);
      else if (/^[0-9]+$/.test(value) && Number(value) <= MAX_CONTEXT) context[letter as "A" | "B" | "C"] = Number(value);
      else return { error: `-${letter} takes a number of context lines from 0 to ${MAX_CONTEXT}; got ${JSON.stringify(value)}.` };
      break;
    }
  }
  if (options.patterns.length === 0 && operands.length > 0) options.patterns.push(operands.shift()!);
  if (operands.length > 0) {
    return { error: `File operands are not accepted (${operands.map((o) => JSON.stringify(o)).join(", ")}): the file searched is path. Give patterns with -e.` };
  }
  if (options.patterns.length === 0) return { error: 'No pattern: give one with -e, e.g. ["-e", "deploy"].' };
  const bytes = options.patterns.reduce((sum, p) => sum + Buffer.byteLength(p, "utf8"), 0);
  if (bytes > MAX_PATTERN_BYTES) return { error: `The patterns take ${bytes} UTF-8 bytes together; at most ${MAX_PATTERN_BYTES} are allowed.` };
  if (options.filesWithMatches && options.count) return { error: "Give -l (matching paths) or -c (counts), not both." };
  if (options.multiline && options.invert) return { error: "-v cannot be combined with -U here: search the lines without -U to invert." };
  // -A and -B win over -C whatever their order, as in ripgrep.
  options.before = context.B ?? context.C ?? 0;
  options.after = context.A ?? context.C ?? 0;
  return options;
}
