import { Type } from "typebox";
import { Id, Timestamp } from "../../platform/http/schemas.js";
import { ORG_ROLES, PROJECT_ROLES } from "./policy.js";

export const OrgRoleValue = Type.Enum([...ORG_ROLES], { description: "Org role: owner, admin or member." });
export const ProjectRoleValue = Type.Enum([...PROJECT_ROLES], { description: "Project role: admin, developer, operator or viewer." });

export const OrgMember = Type.Object(
  { user_id: Id("user"), email: Type.String(), display_name: Type.String(), role: Type.String(), created_at: Timestamp },
  { additionalProperties: false },
);

export const UpdateOrgMemberRequest = Type.Object({ role: OrgRoleValue }, { additionalProperties: false });

export const ProjectMembershipGrant = Type.Object(
  { project_id: Id("project"), project_name: Type.String(), role: Type.String(), created_at: Timestamp },
  { additionalProperties: false },
);

export const ProjectMembershipGrantList = Type.Object({ data: Type.Array(ProjectMembershipGrant) }, { additionalProperties: false });

export const SetProjectMembershipRequest = Type.Object({ role: ProjectRoleValue }, { additionalProperties: false });

export const MemberParams = Type.Object({ orgID: Id("org"), userID: Id("user") });
export const MemberProjectParams = Type.Object({ orgID: Id("org"), userID: Id("user"), projectID: Id("project") });
