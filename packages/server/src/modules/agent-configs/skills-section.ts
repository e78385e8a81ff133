import type { Tx } from "../../platform/db/index.js";
import { decodeId } from "../../platform/ids.js";
import type { SkillDefinition } from "../../runtime/definition.js";
import { availableSkills } from "../skills/service.js";
import { describe } from "./fields.js";
import type { ConfigIssues } from "./issues.js";

/**
 * The `skills` section: a list of skill ids (the reference's shape). Each must be owned by or granted to
 * the project when the config is compiled; the compiled config pins the revision current then, so a new
 * upload changes an agent only when it gets a new config.
 */

/** A skill as written: its id, and where it stands in the list for issues. */
export interface SkillChoice {
  skillId: string;
  publicId: string;
  index: number;
}

/** Attached skills share the model's tool budget and instruction; a few dozen is already a lot to choose from. */
const MAX_SKILLS = 64;

export function readSkillsSection(issues: ConfigIssues, value: unknown): SkillChoice[] {
  if (!Array.isArray(value)) {
    issues.add(["skills"], `must be a list of skill ids (skl_…); got ${describe(value)}`);
    return [];
  }
  if (value.length > MAX_SKILLS) issues.add(["skills"], `at most ${MAX_SKILLS} skills; got ${value.length}`);
  const seen = new Set<string>();
  const choices: SkillChoice[] = [];
  value.forEach((id: unknown, index) => {
    const skillId = typeof id === "string" ? decodeId("skill", id) : null;
    if (skillId === null) issues.add(["skills", index], `must be a skill id (skl_…); got ${describe(id)}`);
    else if (seen.has(skillId)) issues.add(["skills", index], `${id as string} is listed twice`);
    else {
      seen.add(skillId);
      choices.push({ skillId, publicId: id as string, index });
    }
  });
  return choices;
}

/**
 * The chosen skills as the definition pins them, in the order written. One the project cannot use, or a
 * second skill of a name already attached (the `skill` tool finds skills by name), is an issue.
 */
export async function resolveSkills(tx: Tx, orgId: string, projectId: string, choices: readonly SkillChoice[], issues: ConfigIssues): Promise<SkillDefinition[]> {
  const found = new Map((await availableSkills(tx, orgId, projectId, choices.map((c) => c.skillId))).map((s) => [s.id, s]));
  const names = new Set<string>();
  const skills: SkillDefinition[] = [];
  for (const choice of choices) {
    const skill = found.get(choice.skillId);
    if (!skill) {
      issues.add(["skills", choice.index], `no skill ${choice.publicId} is owned by or granted to this project`);
    } else if (names.has(skill.name)) {
      issues.add(["skills", choice.index], `another attached skill is also named "${skill.name}"; the skill tool finds skills by name`);
    } else {
      names.add(skill.name);
      skills.push({ skillId: skill.id, revisionId: skill.currentRevisionId, name: skill.name, description: skill.description });
    }
  }
  return skills;
}
