import { skillGrants } from "../../db/schema/index.js";
import type { Database } from "../../platform/db/index.js";
import { createOwnedGrants } from "../grants/owned-service.js";
import { grantsStore } from "../grants/store.js";
import { SKILLS } from "./authority.js";

/** Grants of skills to other projects of their organization (modules/grants); the target project needs project.manage. */
export const createSkillGrants = (deps: { db: Database }) =>
  createOwnedGrants(deps, {
    owned: SKILLS,
    store: grantsStore(skillGrants, { subject: skillGrants.skillId, project: skillGrants.targetProjectId }),
    row: ({ subjectId, ...grant }) => ({ ...grant, skillId: subjectId }),
    uniqueTarget: "skill_grants_target",
  });
