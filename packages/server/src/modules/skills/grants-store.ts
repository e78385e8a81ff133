import { skillGrants } from "../../db/schema/index.js";
import { projectGrantsStore } from "../orgs/project-grants-store.js";

export type { GrantTargetRow } from "../orgs/project-grants-store.js";
export type GrantRow = typeof skillGrants.$inferSelect;

/** Grants of skills to other projects of their organization. */
export const grants = projectGrantsStore(skillGrants, skillGrants.skillId);
