import { describe, expect, it } from "vitest";
import { parseSearchArgs } from "../../src/runtime/tools/files/search-args.js";
import { buildRegex, scanLines, scanSpans, TIMED_OUT, type ScanInput } from "../../src/runtime/tools/files/search-regex.js";

/* search_files' scans run in the search thread, one at a time; a runaway scan is stopped and its thread replaced. */

function scope(args: string[], text: string): ScanInput {
  const options = parseSearchArgs(args);
  if ("error" in options) throw new Error(options.error);
  const regex = buildRegex(options);
  if ("error" in regex) throw new Error(regex.error);
  return { regex, text, from: 0, firstLine: 0, cap: 10, countAll: true, invert: options.invert };
}

describe("the search thread", () => {
  it("stops a runaway scan and runs the scans queued behind it, in order, on a new thread", async () => {
    const text = `${"a".repeat(40)}!\nneedle one\nneedle two\n`;
    const [runaway, lines, spans] = await Promise.all([
      scanLines(scope(["-e", "(a+)+$"], text)),
      scanLines(scope(["-e", "needle \\w+"], text)),
      scanSpans(scope(["-U", "-e", "one\\nneedle"], text)),
    ]);
    expect(runaway).toEqual({ error: TIMED_OUT });
    expect(lines).toEqual({
      hits: [
        { line: 1, start: 42, matchIndex: 0, matchLength: 10 },
        { line: 2, start: 53, matchIndex: 0, matchLength: 10 },
      ],
      count: 2,
    });
    expect(spans).toEqual({ hits: [{ index: 49, length: 10 }], count: 1 });
  });

});
