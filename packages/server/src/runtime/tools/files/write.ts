import { MEMORY_DIR, NO_MEMORY } from "./paths.js";
import type { FileToolResult } from "./result.js";

/*
 * write_file (reference docs/tools/built-in.mdx) creates or edits a text file in an attached memory store,
 * and only there: artifacts are immutable records of what entered the timeline. svc has no memory stores
 * (the spec defines none), so no call can succeed. The tool is still in the catalog so that configs written
 * for the reference compile, and every call fails with the reason, after the input's own rules are
 * checked so that the model learns those too.
 */

export interface WriteFileInput {
  path: string;
  content?: string;
  script?: string;
  append?: boolean;
  expected_digest?: string;
}

export function writeFile(input: WriteFileInput): FileToolResult {
  if ((input.content === undefined) === (input.script === undefined)) return { error: "Give exactly one of content or script." };
  if (input.append !== undefined && input.script !== undefined) return { error: "append applies to content only, not to a script." };
  const segments = input.path.split("/");
  if (segments[1] === MEMORY_DIR) return { error: `${NO_MEMORY} write_file writes only memory files, so it cannot write ${input.path}.` };
  if (segments[1] === "artifacts") {
    return { error: "Artifacts cannot be written or changed: write_file writes memory files (/memory/<store>/<file>), and svc has no memory stores." };
  }
  return { error: `write_file takes an exact /memory/<store>/<file> destination; got ${JSON.stringify(input.path)}. ${NO_MEMORY}` };
}
