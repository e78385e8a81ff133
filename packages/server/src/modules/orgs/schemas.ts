import { Type } from "typebox";
import { Id, ResourceName, Timestamp } from "../../platform/http/schemas.js";
import { AgentProfile } from "../agent-profiles/schemas.js";
import { Agent } from "../agents/schemas.js";
import { component } from "../../platform/http/components.js";

export const Organization = component("Organization", Type.Object(
  { id: Id("org"), name: Type.String(), created_at: Timestamp, updated_at: Timestamp },
  { additionalProperties: false },
));

export const Project = component("Project", Type.Object(
  { id: Id("project"), org_id: Id("org"), name: Type.String(), created_at: Timestamp, updated_at: Timestamp },
  { additionalProperties: false },
));

export const ProjectAccessFlags = component("ProjectAccess", Type.Object(
  { can_read: Type.Boolean(), can_manage: Type.Boolean(), can_manage_access: Type.Boolean(), can_operate: Type.Boolean() },
  { additionalProperties: false },
));

export const VisibleProject = component("VisibleProject", Type.Object(
  {
    id: Id("project"),
    org_id: Id("org"),
    name: Type.String(),
    created_at: Timestamp,
    updated_at: Timestamp,
    access: ProjectAccessFlags,
  },
  { additionalProperties: false },
));

export const OrgOverviewResponse = component("OrgOverviewResponse", Type.Object(
  {
    projects: Type.Array(VisibleProject, { description: "Projects visible to the caller, newest first (at most 200)." }),
    recent_agents: Type.Array(Agent, {
      description: "The most recently updated active agents of the projects where the caller may read agents, updated_at descending (at most 5).",
    }),
    recent_agent_profiles: Type.Array(AgentProfile, {
      description: "The most recently updated agent profiles of those projects, updated_at descending (at most 5).",
    }),
  },
  { additionalProperties: false },
));

export const OrganizationMembership = component("OrganizationMembership", Type.Object(
  { org_id: Id("org"), user_id: Id("user"), role: Type.String(), created_at: Timestamp },
  { additionalProperties: false },
));

export const CreateOrganizationRequest = component("CreateOrganizationRequest", Type.Object({ name: ResourceName }, { additionalProperties: false }));
export const CreateOrganizationResponse = component("CreateOrganizationResponse", Type.Object(
  { org: Organization, project: Project, membership: OrganizationMembership },
  { additionalProperties: false },
));

export const CreateProjectRequest = component("CreateProjectRequest", Type.Object({ name: ResourceName }, { additionalProperties: false }));
export const UpdateProjectRequest = component("UpdateProjectRequest", Type.Object({ name: ResourceName }, { additionalProperties: false }));

export const OrgParams = Type.Object({ orgID: Id("org") });
export const ProjectParams = Type.Object({ orgID: Id("org"), projectID: Id("project") });
