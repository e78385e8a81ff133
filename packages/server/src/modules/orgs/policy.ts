/**
 * The role matrix. Org roles grant org actions; project roles grant project actions; org owners and
 * admins hold an implicit project `admin` role on every project of their org.
 */
export const ORG_ROLES = ["owner", "admin", "member"] as const;
export const GRANTABLE_ORG_ROLES = ["admin", "member"] as const;
export const PROJECT_ROLES = ["admin", "developer", "operator", "viewer"] as const;

export type OrgRole = (typeof ORG_ROLES)[number];
export type ProjectRole = (typeof PROJECT_ROLES)[number];

export type OrgAction = "org.read" | "org.manage" | "org.own" | "org.secrets.list" | "org.secrets.manage";
export type ProjectAction =
  | "project.read"
  | "project.manage"
  | "project.access_manage"
  | "project.secrets.list"
  | "project.secrets.manage"
  | "agent.read"
  | "agent.operate";

const ORG_GRANTS: Record<OrgRole, readonly OrgAction[]> = {
  owner: ["org.read", "org.manage", "org.own", "org.secrets.list", "org.secrets.manage"],
  admin: ["org.read", "org.manage", "org.secrets.list", "org.secrets.manage"],
  member: ["org.read"],
};

const PROJECT_GRANTS: Record<ProjectRole, readonly ProjectAction[]> = {
  admin: [
    "project.read",
    "project.manage",
    "project.access_manage",
    "project.secrets.list",
    "project.secrets.manage",
    "agent.read",
    "agent.operate",
  ],
  developer: ["project.read", "project.manage", "project.secrets.list", "project.secrets.manage", "agent.read", "agent.operate"],
  operator: ["project.read", "agent.read", "agent.operate"],
  viewer: ["project.read", "agent.read"],
};

export function orgRoleAllows(role: OrgRole, action: OrgAction): boolean {
  return ORG_GRANTS[role].includes(action);
}

export function projectRoleAllows(role: ProjectRole | null, action: ProjectAction): boolean {
  return role !== null && PROJECT_GRANTS[role].includes(action);
}

/** The project role that counts: implicit admin for org owners and admins, else the explicit grant. */
export function effectiveProjectRole(orgRole: OrgRole, explicit: ProjectRole | null): ProjectRole | null {
  return orgRole === "owner" || orgRole === "admin" ? "admin" : explicit;
}

export function projectAccessFlags(role: ProjectRole | null) {
  return {
    can_read: projectRoleAllows(role, "project.read"),
    can_manage: projectRoleAllows(role, "project.manage"),
    can_manage_access: projectRoleAllows(role, "project.access_manage"),
    can_operate: projectRoleAllows(role, "agent.operate"),
  };
}
