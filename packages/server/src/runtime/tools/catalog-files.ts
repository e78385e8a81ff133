import type { PermissionMode } from "../definition.js";
import type { BuiltInTool } from "./catalog.js";

/*
 * The file tools over svc's stored files (reference docs/tools/built-in.mdx, "Files"): `list_files`,
 * `read_file`, `search_files` and `write_file`. Paths name files stored in svc, never files on a machine:
 * `/artifacts/<artifact_id>` is one of the agent's artifacts, and `/memory/<store>/<file>` a file of a memory
 * store its config attaches (the `memory` section; issue 31). `write_file` writes memory files only.
 * `upload_file` and `download_file`, which copy files between a machine and `/artifacts`, are in
 * catalog-transfer.ts.
 *
 * Kept apart from catalog.ts so the file tools can be read in one place; their code is in files/.
 * Only types are imported from catalog.ts: it imports this module, and a value import would be circular.
 */

const ALL_MODES: readonly PermissionMode[] = ["always_allow", "always_ask", "always_deny"];

/** The reference's limits on the inputs. */
export const FILE_LIMITS = {
  maxPathLength: 1024,
  listDefault: 50,
  listMax: 100,
  readLinesDefault: 100,
  readLinesMax: 200,
  readCharsDefault: 512,
  readCharsMax: 4096,
  searchDefault: 20,
  searchMax: 100,
  maxArgs: 64,
  maxScriptBytes: 64 * 1024,
  maxWriteBytes: 10 * 1024 * 1024,
} as const;

const path = (description: string) => ({ type: "string", minLength: 1, maxLength: FILE_LIMITS.maxPathLength, description });

const listFiles: BuiltInTool = {
  name: "list_files",
  description:
    "List files stored in svc (not on a machine) whose path matches an absolute pattern, without reading them. " +
    "/* lists the top level; /artifacts/* lists your artifacts (files you were sent, and large tool results saved as files), " +
    "/artifacts/*.csv those whose filename matches; /artifacts/art_… looks up one artifact; /memory/* lists your attached memory " +
    "stores with their descriptions, /memory/<store>/**/*.md their files. * matches within a path segment, " +
    "** across segments, ? one character. Each result has the path to pass to read_file and search_files.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["pattern"],
    properties: {
      pattern: path("An absolute path pattern such as /artifacts/* or /artifacts/*.md."),
      limit: { type: "integer", minimum: 1, maximum: FILE_LIMITS.listMax, description: `At most this many entries, 1 to ${FILE_LIMITS.listMax} (default ${FILE_LIMITS.listDefault}).` },
    },
  },
  defaultPermission: "always_allow",
  permissionModes: ALL_MODES,
  touchesMachine: false,
};

const readFile: BuiltInTool = {
  name: "read_file",
  description:
    "Read part of a UTF-8 text file stored in svc: /artifacts/art_… (a large tool result saved as a file gives its path) or a " +
    "memory file /memory/<store>/<file>. " +
    "Reads 100 lines from line 1 by default (offset_line, limit_lines); give offset_char and/or limit_chars instead to read by " +
    "characters, never both kinds. At most 4 KiB of text per call; when has_more is true, continue from next_offset_line or next_offset_char.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["path"],
    properties: {
      path: path("The exact file path, /artifacts/<artifact_id> or /memory/<store>/<file>."),
      offset_line: { type: "integer", minimum: 1, description: "The first line to read, from 1 (default 1)." },
      limit_lines: { type: "integer", minimum: 1, maximum: FILE_LIMITS.readLinesMax, description: `How many lines, 1 to ${FILE_LIMITS.readLinesMax} (default ${FILE_LIMITS.readLinesDefault}).` },
      offset_char: { type: "integer", minimum: 0, description: "Character mode: the first character to read, counted in Unicode code points from 0 (default 0)." },
      limit_chars: { type: "integer", minimum: 1, maximum: FILE_LIMITS.readCharsMax, description: `Character mode: how many characters, 1 to ${FILE_LIMITS.readCharsMax} (default ${FILE_LIMITS.readCharsDefault}).` },
    },
  },
  defaultPermission: "always_allow",
  permissionModes: ALL_MODES,
  touchesMachine: false,
};

const searchFiles: BuiltInTool = {
  name: "search_files",
  description:
    "Search the text of one file stored in svc (/artifacts/art_… or /memory/<store>/<file>), or of the memory files a glob such as " +
    "/memory/notes/**/*.md matches, with ripgrep-style arguments, e.g. " +
    '["-i", "-C", "2", "-e", "deploy"]. Options: -e PATTERN (repeatable), -F literal, -i ignore case, -w whole word, ' +
    "-x whole line, -v invert, -U multiline, -l matching paths only, -c counts only, -A/-B/-C N context lines (0 to 5). " +
    "Patterns are JavaScript regular expressions (Unicode mode). Results are match and context records with line numbers; " +
    "then read around a match with read_file.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["path", "args"],
    properties: {
      path: path("One exact file, /artifacts/<artifact_id> or /memory/<store>/<file>, or a memory glob such as /memory/<store>/**/*.md."),
      args: {
        type: "array",
        minItems: 1,
        maxItems: FILE_LIMITS.maxArgs,
        items: { type: "string", maxLength: 1024 },
        description: "Options and -e patterns, one argument per item; patterns total at most 1024 UTF-8 bytes. No file operands: the file is `path`.",
      },
      limit: { type: "integer", minimum: 1, maximum: FILE_LIMITS.searchMax, description: `At most this many matches, 1 to ${FILE_LIMITS.searchMax} (default ${FILE_LIMITS.searchDefault}); context lines do not count.` },
      offset_line: { type: "integer", minimum: 1, description: "Search from this line on (default 1); for one exact file only." },
    },
  },
  defaultPermission: "always_allow",
  permissionModes: ALL_MODES,
  touchesMachine: false,
};

const writeFile: BuiltInTool = {
  name: "write_file",
  description:
    "Create or edit a UTF-8 text file (at most 10 MiB) in a memory store attached to you with write access (/memory/<store>/<file>). " +
    "Give exactly one of content (replaces the file, or with append: true is added to its end; creates a missing file) or script " +
    "(a GNU sed script with extended regular expressions that transforms the existing file; it cannot read or write other files " +
    "or run commands). Pass expected_digest (from read_file or list_files) to change the file only if nobody changed it since; a " +
    "conflict answers the current digest. Returns path, digest and version. Artifacts cannot be written.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["path"],
    properties: {
      path: path("The exact destination, /memory/<store>/<file>."),
      content: { type: "string", maxLength: FILE_LIMITS.maxWriteBytes, description: "Text to create or replace the file with; empty text is allowed." },
      script: { type: "string", maxLength: FILE_LIMITS.maxScriptBytes, description: "A GNU sed script (extended regular expressions) that transforms the existing file." },
      append: { type: "boolean", description: "Append content exactly, without adding a newline (default false)." },
      expected_digest: { type: "string", maxLength: 100, description: "The file's current digest when changing an existing file; omit it to create one." },
    },
  },
  defaultPermission: "always_allow",
  permissionModes: ALL_MODES,
  touchesMachine: false,
};

export const FILE_TOOLS: readonly BuiltInTool[] = [listFiles, readFile, searchFiles, writeFile];

/** The file tools read stored bytes, so they run in a tool step (outside the claim's transaction), like `skill`. */
export const FILE_TOOL_NAMES: ReadonlySet<string> = new Set(FILE_TOOLS.map((tool) => tool.name));

/**
 * Added to a compiled config that has enabled tools or MCP servers, unless it names them itself (reference
 * docs/tools/built-in.mdx, list_files): they read the artifacts that oversized tool results are saved as.
 */
export const RETRIEVAL_TOOLS = ["read_file", "search_files"] as const;
