import { encodeId } from "../../platform/ids.js";
import { iso } from "../../platform/http/schemas.js";
import { projectAccessFlags, type ProjectRole } from "./policy.js";
import type { MembershipRow, OrgRow, ProjectRow } from "./store.js";

export function orgView(org: OrgRow) {
  return { id: encodeId("org", org.id), name: org.name, created_at: iso(org.createdAt), updated_at: iso(org.updatedAt) };
}

export function projectView(project: ProjectRow) {
  return {
    id: encodeId("project", project.id),
    org_id: encodeId("org", project.orgId),
    name: project.name,
    created_at: iso(project.createdAt),
    updated_at: iso(project.updatedAt),
  };
}

export function visibleProjectView(project: ProjectRow, role: ProjectRole | null) {
  return { ...projectView(project), access: projectAccessFlags(role) };
}

export function membershipView(membership: MembershipRow) {
  return {
    org_id: encodeId("org", membership.orgId),
    user_id: encodeId("user", membership.userId!),
    role: membership.role,
    created_at: iso(membership.createdAt),
  };
}
