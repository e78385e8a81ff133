import { encodeId } from "../../platform/ids.js";
import { iso } from "../../platform/http/schemas.js";
import type { RevisionRow, SkillRow } from "./store.js";

function ownerView(skill: SkillRow) {
  if (skill.ownerKind === "project") return { kind: "project" as const, project_id: encodeId("project", skill.ownerProjectId!) };
  if (skill.ownerKind === "user") return { kind: "user" as const, user_id: encodeId("user", skill.ownerUserId!) };
  return { kind: "org" as const };
}

/** A skill as lists show it: what it is and its current revision, without the instructions. */
export function skillSummaryView(skill: SkillRow) {
  return {
    id: encodeId("skill", skill.id),
    org_id: encodeId("org", skill.orgId),
    owner: ownerView(skill),
    name: skill.name,
    revision_id: encodeId("skillRevision", skill.currentRevisionId),
    revision: skill.currentRevision,
    description: skill.description,
    created_at: iso(skill.createdAt),
    updated_at: iso(skill.updatedAt),
  };
}

/** A skill with its current revision's SKILL.md and file list, as get, create and update answer. */
export function skillView(row: { skill: SkillRow; revision: RevisionRow }) {
  return { ...skillSummaryView(row.skill), skill_md: row.revision.skillMd, files: row.revision.files };
}

/** A skill seen from a project: direct when the project owns it, else through the grant named. */
export function projectSkillView(projectId: string, row: { skill: SkillRow; grantId: string | null }) {
  return {
    skill: skillSummaryView(row.skill),
    project_id: encodeId("project", projectId),
    availability: row.grantId === null ? { source: "direct" as const } : { source: "grant" as const, grant_id: encodeId("skillGrant", row.grantId) },
  };
}
