import { AppError, type Issue } from "../../platform/errors.js";
import { positionAt, type Anchor, type ParsedSource, type PathSegment, type SyntaxProblem } from "./source.js";

interface PendingIssue {
  path: PathSegment[];
  message: string;
  anchor: Anchor;
}

/**
 * Every problem found in a config source, collected so the author sees them all at once. Each is kept as a
 * path into the document and placed in the text only when the error is raised.
 */
export class ConfigIssues {
  private readonly pending: PendingIssue[] = [];

  /** A problem with the value at `path` (or, when missing, with the mapping that should hold it). */
  add(path: readonly PathSegment[], message: string): void {
    this.pending.push({ path: [...path], message, anchor: "value" });
  }

  /** A problem with the key at the end of `path` itself: unknown, misspelled, badly named. */
  addAtKey(path: readonly PathSegment[], message: string): void {
    this.pending.push({ path: [...path], message, anchor: "key" });
  }

  get count(): number {
    return this.pending.length;
  }

  throwIfAny(text: string, source: ParsedSource): void {
    if (this.pending.length === 0) return;
    throw invalidConfig(
      this.pending.map(({ path, message, anchor }) => {
        const offset = source.locate(path, anchor);
        return { path: pointer(path), message, ...(offset === undefined ? {} : positionAt(text, offset)) };
      }),
    );
  }
}

/** Problems that kept the source from parsing: issues at the whole document, placed where the parser stopped. */
export function syntaxIssues(text: string, problems: readonly SyntaxProblem[]): AppError {
  return invalidConfig(problems.map((problem) => ({ path: "", message: problem.message, ...positionAt(text, problem.offset) })));
}

/** An RFC 6901 JSON Pointer; the empty path is the whole document. */
export function pointer(path: readonly PathSegment[]): string {
  return path.map((segment) => `/${String(segment).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
}

function invalidConfig(issues: Issue[]): AppError {
  const count = issues.length === 1 ? "1 problem" : `${issues.length} problems`;
  return new AppError("validation_failed", `the agent config has ${count}; see issues`, { issues });
}
