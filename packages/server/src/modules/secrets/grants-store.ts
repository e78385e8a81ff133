import { secretGrants } from "../../db/schema/index.js";
import { projectGrantsStore } from "../orgs/project-grants-store.js";

export type { GrantTargetRow } from "../orgs/project-grants-store.js";
export type GrantRow = typeof secretGrants.$inferSelect;

/** Grants of secrets to other projects of their organization. */
export const grants = projectGrantsStore(secretGrants, secretGrants.secretId);
