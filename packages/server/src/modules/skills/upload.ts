import type { MultipartFile, MultipartValue } from "@fastify/multipart";
import type { FastifyRequest } from "fastify";
import type { ErrorObject } from "ajv";
import { AppError, type Issue } from "../../platform/errors.js";
import { toIssues, validatorCompiler } from "../../platform/http/validation.js";
import { MAX_ARCHIVE_BYTES, MAX_SKILL_MD_BYTES } from "./archive-rules.js";
import { SkillOwnerInput } from "./schemas.js";

/*
 * The multipart forms of skill uploads, read here rather than by the route's schema: the archive streams
 * in under its own size limit and the fields are few and small. The route schemas document the same
 * forms in the OpenAPI document.
 */

const KiB = 1024;
/** Boundaries and part headers around the archive; a body past the archive limit plus this is refused unread. */
const FORM_OVERHEAD = 64 * KiB;

/** Options for @fastify/multipart: one archive and at most two small fields per request. */
export const MULTIPART_LIMITS = {
  fileSize: MAX_ARCHIVE_BYTES,
  files: 1,
  fields: 2,
  parts: 3,
  fieldNameSize: 64,
  // SKILL.md sent as a plain field, with room to say it is too large rather than truncate it silently.
  fieldSize: MAX_SKILL_MD_BYTES + KiB,
};

export type FormField = "owner" | "archive" | "skill_md";

export interface SkillForm {
  owner?: SkillOwnerInput;
  archive?: Buffer;
  skillMd?: string;
}

const ownerValidator = validatorCompiler({ schema: SkillOwnerInput, httpPart: "body", method: "POST", url: "" }) as unknown as {
  (value: unknown): boolean;
  errors?: ErrorObject[] | null;
};

/** Reads the form's parts named in `accepted`; anything else, or a part given twice, is a 400. */
export async function readSkillForm(request: FastifyRequest, accepted: readonly FormField[]): Promise<SkillForm> {
  if (!request.isMultipart()) {
    throw new AppError("unsupported_media_type", `send multipart/form-data with the fields ${accepted.join(", ")}`);
  }
  const length = Number(request.headers["content-length"] ?? 0);
  if (length > MAX_ARCHIVE_BYTES + FORM_OVERHEAD) throw archiveTooLarge();
  const form: SkillForm = {};
  const seen = new Set<string>();
  try {
    for await (const part of request.parts()) {
      const name = part.fieldname;
      if (!accepted.includes(name as FormField)) throw invalid(`/${name}`, "unknown field");
      if (seen.has(name)) throw invalid(`/${name}`, "is given more than once");
      seen.add(name);
      await readPart(form, name as FormField, part);
    }
  } catch (err) {
    throw formError(err);
  }
  return form;
}

async function readPart(form: SkillForm, name: FormField, part: MultipartFile | MultipartValue): Promise<void> {
  if (name === "archive") {
    if (part.type !== "file") throw invalid("/archive", "must be a file part (curl: -F archive=@skill.zip)");
    form.archive = await part.toBuffer();
  } else if (name === "skill_md") {
    // A file part is accepted too: `-F skill_md=@SKILL.md` is how curl users send a file's text.
    const value = part.type === "file" ? (await part.toBuffer()).toString("utf8") : part.value;
    if (part.type === "field" && part.valueTruncated) throw invalid("/skill_md", `SKILL.md is larger than ${MAX_SKILL_MD_BYTES / KiB} KiB`);
    if (typeof value !== "string") throw invalid("/skill_md", "must be the text of SKILL.md");
    form.skillMd = value;
  } else {
    if (part.type !== "field" || part.valueTruncated) throw invalid("/owner", "must be a small JSON field such as {\"kind\": \"org\"}");
    form.owner = readOwner(part.value);
  }
}

function readOwner(value: unknown): SkillOwnerInput {
  let owner = value;
  if (typeof value === "string") {
    try {
      owner = JSON.parse(value);
    } catch {
      throw invalid("/owner", "is not valid JSON; write it as {\"kind\": \"org\"}, {\"kind\": \"project\", \"project_id\": \"proj_…\"} or {\"kind\": \"user\"}");
    }
  }
  if (!ownerValidator(owner)) {
    const issues = toIssues(ownerValidator.errors ?? []).map((issue) => ({ ...issue, path: `/owner${issue.path}` }));
    throw new AppError("validation_failed", "request body failed validation", { issues });
  }
  return owner as SkillOwnerInput;
}

function invalid(path: string, message: string): AppError {
  const issues: Issue[] = [{ path, message }];
  return new AppError("validation_failed", "request body failed validation", { issues });
}

function archiveTooLarge(): AppError {
  return new AppError("request_too_large", `the archive is larger than ${MAX_ARCHIVE_BYTES / KiB / KiB} MiB`);
}

/** @fastify/multipart's and busboy's refusals, as the spec's errors. */
function formError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const code = (err as { code?: string }).code;
  if (code === "FST_REQ_FILE_TOO_LARGE") return archiveTooLarge();
  if (code === "FST_PARTS_LIMIT" || code === "FST_FILES_LIMIT" || code === "FST_FIELDS_LIMIT") {
    return new AppError("invalid_request", "the form has too many parts: send one archive and the documented fields only");
  }
  if (code === "FST_INVALID_JSON_FIELD_ERROR") return invalid("/owner", "is declared as JSON but is not valid JSON");
  const detail = err instanceof Error ? err.message.slice(0, 200) : "unreadable";
  return new AppError("invalid_request", `the multipart body could not be read (${detail})`);
}
