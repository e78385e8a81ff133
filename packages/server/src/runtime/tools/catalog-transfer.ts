import type { PermissionMode } from "../definition.js";
import type { BuiltInTool } from "./catalog.js";

/*
 * The file transfer tools' catalog entries (reference docs/tools/built-in.mdx, "Files": upload_file,
 * download_file): they copy one file between an attached machine and svc's `/artifacts` or `/memory`. Each runs as a
 * process on the machine's daemon (runtime/tools/transfer-tools.ts), so offers, reports, cancel, stop and
 * the grace period work as for run_command. Both default to always_allow and offer every mode, as the
 * reference's built-in tools do. Only types are imported from catalog.ts, which imports this module.
 */

const ALL_MODES: readonly PermissionMode[] = ["always_allow", "always_ask", "always_deny"];

/** The reference's limits: 10 MiB per file, and an upload's 30-second execution timeout. */
export const TRANSFER_LIMITS = {
  maxFileBytes: 10 * 1024 * 1024,
  maxPathLength: 4096,
  uploadTimeoutSeconds: 30,
  /** svc's own bound for a download (the reference states none): it is a process the tools can follow meanwhile. */
  downloadTimeoutSeconds: 120,
} as const;

const MACHINE_ID = { type: "string", pattern: "^mch_[a-z2-7]{26}$", description: "The machine (mch_…); omit it when exactly one is attached." } as const;
const machinePath = (description: string) => ({ type: "string", minLength: 1, maxLength: TRANSFER_LIMITS.maxPathLength, description }) as const;

const uploadFile: BuiltInTool = {
  name: "upload_file",
  description:
    "Copy one regular file (at most 10 MiB, not empty) from an attached machine into svc as an artifact, so the user can " +
    "view or download it and read_file / search_files can read it; or, with path /memory/<store>/<file>, as the next version " +
    "of a file in a memory store attached to you with write access (UTF-8 text, may be empty). source is the machine file's path, " +
    "relative to your working directory, absolute, or ~-relative. The result has the artifact's path (/artifacts/art_…), " +
    "digest, size_bytes and content_type (or the memory file's path, digest and version); the file's contents are not added " +
    "to your context. Times out after 30 s.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["path", "source"],
    properties: {
      path: { type: "string", minLength: 1, maxLength: 1024, description: "Where in svc: /artifacts, or a memory file /memory/<store>/<file>." },
      source: machinePath("The file on the machine: relative to your working directory, absolute, or ~-relative."),
      machine_id: MACHINE_ID,
      expected_digest: { type: "string", maxLength: 100, description: "For memory files only: the file's current digest; the upload is refused if it changed. Not supported for artifacts." },
    },
  },
  defaultPermission: "always_allow",
  permissionModes: ALL_MODES,
  touchesMachine: true,
};

const downloadFile: BuiltInTool = {
  name: "download_file",
  description:
    "Copy one of your artifacts (/artifacts/art_…) or a file of an attached memory store (/memory/<store>/<file>) to a file " +
    "on an attached machine. destination is the exact file path: " +
    "relative to your working directory, absolute, or ~-relative; its directory must exist, and an existing file there is " +
    "replaced atomically. The result has the file's digest; a download still running after 10 s returns its process_id, " +
    "which read_process and stop_process follow.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["path", "destination"],
    properties: {
      path: { type: "string", minLength: 1, maxLength: 1024, description: "The stored file, /artifacts/<artifact_id> or /memory/<store>/<file>." },
      destination: machinePath("The file to write on the machine: relative to your working directory, absolute, or ~-relative."),
      machine_id: MACHINE_ID,
    },
  },
  defaultPermission: "always_allow",
  permissionModes: ALL_MODES,
  touchesMachine: true,
};

/** Sorted by name. */
export const TRANSFER_TOOLS: readonly BuiltInTool[] = [downloadFile, uploadFile];
export const TRANSFER_TOOL_NAMES: ReadonlySet<string> = new Set(TRANSFER_TOOLS.map((tool) => tool.name));
