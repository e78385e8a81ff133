import { settledValue, type Tx } from "../../platform/db/index.js";
import type { Principal } from "../../platform/http/auth.js";
import { recentProfiles } from "../agent-profiles/service.js";
import { recentAgents } from "../agents/service.js";
import { projectsAllowing, requireOrg } from "./access.js";
import { effectiveProjectRole, type ProjectRole } from "./policy.js";
import * as store from "./store.js";

/** The reference's sizes: the projects it considers, and the recent agents and profiles it shows. */
export const OVERVIEW_PROJECTS = 200;
export const OVERVIEW_RECENT = 5;

/**
 * What the console's overview page shows of an org (getOrgOverview): the caller's visible projects,
 * newest first, and the most recently updated active agents and agent profiles of the projects where
 * the caller may read agents. After access, its three reads are sent together: three statements, one
 * round trip, however many projects the org has. Unlike the reference, the recent items are picked from
 * every such project, not only from the first OVERVIEW_PROJECTS.
 */
export async function orgOverview(tx: Tx, principal: Principal, orgId: string) {
  const access = await requireOrg(tx, principal, orgId);
  const readable = projectsAllowing(access, "agent.read");
  const [projects, agents, profiles] = await Promise.allSettled([
    store.listVisibleProjects(tx, { id: access.membershipId, orgId, role: access.orgRole }, { limit: OVERVIEW_PROJECTS, sort: "-created_at" }),
    recentAgents(tx, orgId, readable, OVERVIEW_RECENT),
    recentProfiles(tx, orgId, readable, OVERVIEW_RECENT),
  ]);
  return {
    // The list reads one row past the limit, for its paging.
    projects: settledValue(projects)
      .slice(0, OVERVIEW_PROJECTS)
      .map((r) => ({ project: r.project, role: effectiveProjectRole(access.orgRole, r.explicitRole as ProjectRole | null) })),
    agents: settledValue(agents),
    profiles: settledValue(profiles),
  };
}
