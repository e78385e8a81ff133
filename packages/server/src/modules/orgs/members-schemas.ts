import { Type } from "typebox";
import { Id, Timestamp } from "../../platform/http/schemas.js";
import { ORG_ROLES, PROJECT_ROLES } from "./policy.js";
import { component } from "../../platform/http/components.js";

export const OrgRoleValue = component("OrgRole", Type.Enum([...ORG_ROLES], { description: "Org role: owner, admin or member." }));
export const ProjectRoleValue = component("ProjectRole", Type.Enum([...PROJECT_ROLES], { description: "Project role: admin, developer, operator or viewer." }));

export const OrgMember = component("OrgMember", Type.Object(
  { user_id: Id("user"), email: Type.String(), display_name: Type.String(), role: Type.String(), created_at: Timestamp },
  { additionalProperties: false },
));

export const UpdateOrgMemberRequest = component("UpdateOrgMemberRequest", Type.Object({ role: OrgRoleValue }, { additionalProperties: false }));

export const ProjectMembershipGrant = component("ProjectMembershipGrant", Type.Object(
  { project_id: Id("project"), project_name: Type.String(), role: Type.String(), created_at: Timestamp },
  { additionalProperties: false },
));

export const ProjectMembershipGrantList = component("ListProjectMembershipGrantsResponse", Type.Object({ data: Type.Array(ProjectMembershipGrant) }, { additionalProperties: false }));

export const SetProjectMembershipRequest = component("SetProjectMembershipRequest", Type.Object({ role: ProjectRoleValue }, { additionalProperties: false }));

export const MemberParams = Type.Object({ orgID: Id("org"), userID: Id("user") });
export const MemberProjectParams = Type.Object({ orgID: Id("org"), userID: Id("user"), projectID: Id("project") });
