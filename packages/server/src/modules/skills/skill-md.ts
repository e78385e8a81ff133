import { isStorableText } from "../../platform/storable.js";
import { MAX_SOURCE_LENGTH } from "../agent-configs/schemas.js";
import { parseYamlSource } from "../agent-configs/yaml-source.js";
import { archiveError, MAX_SKILL_MD_BYTES } from "./archive-rules.js";

/** The reference's skill name: lowercase words joined by single hyphens, at most 64 characters. */
export const SKILL_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const MAX_SKILL_NAME = 64;
export const MAX_DESCRIPTION = 1024;

export interface SkillMd {
  name: string;
  description: string;
  /** The whole file, front matter included, as the model will read it. */
  text: string;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const FRONT_MATTER = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/**
 * Reads SKILL.md: UTF-8 text that PostgreSQL can store, opening with YAML front matter that holds the
 * skill's `name` and `description`. Other front matter keys are the author's and kept as written.
 * `field` is where a refusal points: the archive, or the `skill_md` form field.
 */
export function parseSkillMd(bytes: Buffer, field: string): SkillMd {
  const fail = (message: string) => archiveError(`SKILL.md ${message}`, field);
  if (bytes.length > MAX_SKILL_MD_BYTES) throw fail(`is larger than ${MAX_SKILL_MD_BYTES / 1024} KiB`);
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    throw fail("is not valid UTF-8 text");
  }
  if (text.startsWith("\uFEFF")) text = text.slice(1);
  if (!isStorableText(text)) throw fail("contains NUL or other characters that cannot be stored");
  const match = FRONT_MATTER.exec(text);
  if (!match) throw fail("must start with YAML front matter between --- lines, holding name and description");
  // Front matter is read as configs are (docs/agent-configs.md): the same parser, with its limits on
  // aliases and nesting, and the same size limit.
  const frontMatter = match[1]!;
  if (frontMatter.length > MAX_SOURCE_LENGTH) throw fail(`front matter is longer than ${MAX_SOURCE_LENGTH} characters`);
  const parsed = parseYamlSource(frontMatter);
  if (!parsed.ok) throw fail(`has front matter that is not valid YAML: ${parsed.problems[0]!.message.split("\n")[0]}`);
  const data = parsed.source.value;
  if (typeof data !== "object" || data === null || Array.isArray(data)) throw fail("front matter must be a mapping with name and description");
  const { name, description } = data as Record<string, unknown>;
  if (typeof name !== "string" || name.length > MAX_SKILL_NAME || !SKILL_NAME.test(name)) {
    throw fail(`front matter name must be 1 to ${MAX_SKILL_NAME} lowercase letters and digits in words joined by single hyphens (such as release-notes); got ${JSON.stringify(name)?.slice(0, 80)}`);
  }
  if (typeof description !== "string" || description.trim() === "") throw fail("front matter must have a description: when the model should use the skill");
  if ([...description].length > MAX_DESCRIPTION) throw fail(`front matter description is longer than ${MAX_DESCRIPTION} characters`);
  return { name, description: description.trim(), text };
}
