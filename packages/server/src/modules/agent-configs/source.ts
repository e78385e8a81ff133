import { parseJsonSource } from "./json-source.js";
import { parseYamlSource } from "./yaml-source.js";

export type SourceFormat = "yaml" | "json";

/**
 * The deepest nesting of mappings and lists a source may have. Real configs stay far below it (an input
 * schema adds a few levels); the cap keeps hostile documents away from the recursive parts of parsing.
 */
export const MAX_NESTING = 100;
export type PathSegment = string | number;
/** What an issue points at: the value found at its path, or the key that names it in its mapping. */
export type Anchor = "value" | "key";

/** A config source that parsed: its plain value and a way back from a path in it to the text. */
export interface ParsedSource {
  value: unknown;
  /** The offset an issue at `path` points at; see `resolveOffset`. */
  locate(path: readonly PathSegment[], anchor: Anchor): number | undefined;
}

/** A problem that keeps the source from parsing at all, at an offset into the text. */
export interface SyntaxProblem {
  message: string;
  offset: number;
}

export type ParseOutcome = { ok: true; source: ParsedSource } | { ok: false; problems: SyntaxProblem[] };

export function parseSource(text: string, format: SourceFormat): ParseOutcome {
  return format === "yaml" ? parseYamlSource(text) : parseJsonSource(text);
}

/** One step down a parsed tree: the child node (null when the key has no value) and where its key is written. */
export interface Step<N> {
  node: N | null;
  keyOffset?: number;
}

/**
 * Where an issue at `path` points. When the whole path exists: its value (or, for `key`, the key naming
 * it). When it does not (a required field is missing): the deepest part that exists, by its key where it
 * has one, so "model.name is required" points at the `model:` line.
 */
export function resolveOffset<N>(
  root: N | null,
  path: readonly PathSegment[],
  anchor: Anchor,
  step: (node: N, segment: PathSegment) => Step<N> | undefined,
  start: (node: N) => number | undefined,
): number | undefined {
  let node = root;
  let keyOffset: number | undefined;
  for (const segment of path) {
    const next = node === null ? undefined : step(node, segment);
    if (!next) return keyOffset ?? (node === null ? undefined : start(node));
    node = next.node;
    keyOffset = next.keyOffset;
  }
  const valueOffset = node === null ? undefined : start(node);
  return anchor === "key" ? (keyOffset ?? valueOffset) : (valueOffset ?? keyOffset);
}

/** 1-based line and column (in characters) of `offset` in `text`; a line ends at LF (CRLF included). */
export function positionAt(text: string, offset: number): { line: number; column: number } {
  const clamped = Math.max(0, Math.min(offset, text.length));
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < clamped; i = text.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  // Count code points, not UTF-16 units, so a character outside the BMP is one column as editors show it.
  return { line, column: [...text.slice(lineStart, clamped)].length + 1 };
}
