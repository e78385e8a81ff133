import { Type, type Static } from "typebox";

/*
 * What svc offers svcd on the runtime's socket. svc builds these from its own rows and does not validate
 * them; the schemas give both sides one set of types. They stay open (no `strict`): svcd ignores members it
 * does not know, so svc can add one without breaking an older svcd.
 */

export const ActionKind = Type.Union([Type.Literal("write"), Type.Literal("read"), Type.Literal("interrupt"), Type.Literal("terminate")]);
export type ActionKind = Static<typeof ActionKind>;

/** What an action asks for; only the members of its kind are set. */
export const ActionPayload = Type.Object({
  /** write: the text to write to the process's standard input, then maybe close it. */
  data: Type.Optional(Type.String()),
  close_stdin: Type.Optional(Type.Boolean()),
  /** read: where to read from, how much, and how long to wait for output past the cursors. */
  cursor: Type.Optional(Type.Integer()),
  stderr_cursor: Type.Optional(Type.Integer()),
  max_bytes: Type.Optional(Type.Integer()),
  wait_ms: Type.Optional(Type.Integer()),
});
export type ActionPayload = Static<typeof ActionPayload>;

export const ActionOffer = Type.Object({
  process_id: Type.String(),
  process_action_id: Type.String(),
  action_kind: ActionKind,
  seq: Type.Integer(),
  payload: ActionPayload,
});
export type ActionOffer = Static<typeof ActionOffer>;

/** A file to move between the machine and svc through the tool call's daemon transfer routes. */
export const TransferOffer = Type.Object({
  kind: Type.Union([Type.Literal("upload"), Type.Literal("download")]),
  /** The tool call whose daemon routes the transfer uses. */
  tool_call_id: Type.String(),
  timeout_seconds: Type.Integer(),
  max_bytes: Type.Integer(),
  /** upload: the machine file, as the model gave it. */
  source: Type.Optional(Type.String()),
  /** upload: an empty file may be sent (a memory file; artifacts are never empty). */
  allow_empty: Type.Optional(Type.Boolean()),
  /** download: the artifact, its digest and size, and the machine file to write, as the model gave it. */
  artifact_id: Type.Optional(Type.String()),
  digest: Type.Optional(Type.String()),
  size_bytes: Type.Optional(Type.Integer()),
  destination: Type.Optional(Type.String()),
  /** download: where on svc to fetch the bytes, when they are not an artifact's (a memory file); an absolute path. */
  content_path: Type.Optional(Type.String()),
});
export type TransferOffer = Static<typeof TransferOffer>;

/** A command svc asks svcd to run. `preparation_error` set means: refuse it, report it failed. */
export const ProcessOffer = Type.Object({
  process_id: Type.String(),
  io_mode: Type.Union([Type.Literal("pipe"), Type.Literal("pty")]),
  command: Type.String(),
  shell_selector: Type.String(),
  cwd: Type.String(),
  env: Type.Record(Type.String(), Type.String()),
  wait_ms: Type.Integer(),
  timeout_seconds: Type.Integer(),
  preparation_error: Type.Optional(Type.String()),
  /** upload_file and download_file: svcd runs this transfer instead of `command`. */
  transfer: Type.Optional(TransferOffer),
});
export type ProcessOffer = Static<typeof ProcessOffer>;

/** svc asks for a skill revision's files; the token downloads its archive for a few minutes. */
export const SkillOffer = Type.Object({
  request_id: Type.String(),
  skill_id: Type.String(),
  revision_id: Type.String(),
  /** svc's addition: the skill's name, which names the folder the files go to. */
  skill_name: Type.String(),
  download_token: Type.String(),
  /** Unix seconds; the `expires_at` the archive route takes. */
  download_expires_at: Type.Integer(),
  /** `sha256:<hex>` of the archive's bytes. */
  digest: Type.String(),
});
export type SkillOffer = Static<typeof SkillOffer>;
