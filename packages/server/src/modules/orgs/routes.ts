import { Type } from "typebox";
import type { UserPrincipal } from "../../platform/http/auth.js";
import type { HttpApp } from "../../platform/http/app.js";
import { namedPageQuery, pageOf, ResourceSort, sortValue, toPage } from "../../platform/http/lists.js";
import { pathId, projectPath } from "../../platform/http/params.js";
import { errorResponses, IdempotencyKeyHeader, Page } from "../../platform/http/schemas.js";
import * as s from "./schemas.js";
import type { OrgService } from "./service.js";
import { agentProfileView } from "../agent-profiles/views.js";
import { agentView } from "../agents/views.js";
import { membershipView, orgView, projectView, visibleProjectView } from "./views.js";

const TAG = "Organizations and projects";

export function orgRoutes(app: HttpApp, deps: { orgs: OrgService }) {
  const { orgs } = deps;

  app.post(
    "/orgs",
    {
      config: { auth: "user" },
      schema: {
        tags: [TAG],
        operationId: "createOrganization",
        summary: "Create an organization",
        description: "Creates an organization with the caller as its owner, and a first project in it. Repeating the request with the same Idempotency-Key answers the same organization (200).",
        headers: IdempotencyKeyHeader,
        body: s.CreateOrganizationRequest,
        response: { 200: s.CreateOrganizationResponse, 201: s.CreateOrganizationResponse, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const result = await orgs.createOrg(request.principal as UserPrincipal, request.body.name, request.headers["idempotency-key"]);
      return reply.status(result.created ? 201 : 200).send({
        org: orgView(result.org),
        project: projectView(result.project),
        membership: membershipView(result.membership),
      });
    },
  );

  app.get(
    "/orgs/:orgID",
    {
      schema: { tags: [TAG], operationId: "getOrganization", summary: "Get an organization", description: "One organization the caller belongs to.", params: s.OrgParams, response: { 200: s.Organization, ...errorResponses() } },
    },
    async (request) => orgView((await orgs.getOrg(request.principal!, pathId("org", request.params.orgID))).org),
  );

  app.delete(
    "/orgs/:orgID",
    { schema: { tags: [TAG], operationId: "deleteOrganization", summary: "Delete an organization", description: "Deletes the organization and everything in it (owners only).", params: s.OrgParams, response: { 204: Type.Null(), ...errorResponses(409) } } },
    async (request, reply) => {
      await orgs.deleteOrg(request.principal!, pathId("org", request.params.orgID));
      return reply.status(204).send(null);
    },
  );

  app.get(
    "/orgs/:orgID/overview",
    {
      schema: {
        tags: [TAG],
        operationId: "getOrgOverview",
        summary: "Get the organization overview",
        description:
          "What the console's overview page shows: the caller's visible projects, and the most recently updated active agents " +
          "and agent profiles across the projects where the caller may read agents. Made for the console; its limits may change.",
        params: s.OrgParams,
        response: { 200: s.OrgOverviewResponse, ...errorResponses() },
      },
    },
    async (request) => {
      const overview = await orgs.overview(request.principal!, pathId("org", request.params.orgID));
      return {
        projects: overview.projects.map((r) => visibleProjectView(r.project, r.role)),
        recent_agents: overview.agents.map(agentView),
        recent_agent_profiles: overview.profiles.map(agentProfileView),
      };
    },
  );

  app.get(
    "/orgs/:orgID/projects",
    {
      schema: {
        tags: [TAG],
        operationId: "listVisibleProjects",
        summary: "List projects",
        description: "The organization's projects the caller can see, with what the caller may do in each.",
        params: s.OrgParams,
        querystring: Type.Object({ ...namedPageQuery, sort: Type.Optional(ResourceSort) }, { additionalProperties: false }),
        response: { 200: Page(s.VisibleProject), ...errorResponses() },
      },
    },
    async (request) => {
      const { limit, sort, cursor } = pageOf(request.query);
      const orgId = pathId("org", request.params.orgID);
      const rows = await orgs.listProjects(request.principal!, orgId, { limit, sort, cursor, name: request.query.name });
      return toPage(
        rows,
        limit,
        sort,
        (r) => ({ value: sortValue(sort, r.project), id: r.project.id }),
        (r) => visibleProjectView(r.project, r.role),
      );
    },
  );

  app.post(
    "/orgs/:orgID/projects",
    {
      schema: {
        tags: [TAG],
        operationId: "createProject",
        summary: "Create a project",
        description: "Creates a project in the organization. Names are unique in the organization (409); repeating the request with the same Idempotency-Key answers the same project (200).",
        params: s.OrgParams,
        headers: IdempotencyKeyHeader,
        body: s.CreateProjectRequest,
        response: { 200: s.Project, 201: s.Project, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const orgId = pathId("org", request.params.orgID);
      const result = await orgs.createProject(request.principal!, orgId, request.body.name, request.headers["idempotency-key"]);
      return reply.status(result.created ? 201 : 200).send(projectView(result.project));
    },
  );

  app.get(
    "/orgs/:orgID/projects/:projectID",
    {
      schema: {
        tags: [TAG],
        operationId: "getProject",
        summary: "Get a project",
        description: "One project the caller can see, with the caller's access flags.",
        params: s.ProjectParams,
        response: { 200: s.VisibleProject, ...errorResponses() },
      },
    },
    async (request) => {
      const { project, role } = await orgs.getProject(request.principal!, ...projectPath(request.params));
      return visibleProjectView(project, role);
    },
  );

  app.patch(
    "/orgs/:orgID/projects/:projectID",
    {
      schema: {
        tags: [TAG],
        operationId: "renameProject",
        summary: "Rename a project",
        description: "Changes the project's name (project.manage); names are unique in the organization (409).",
        params: s.ProjectParams,
        body: s.UpdateProjectRequest,
        response: { 200: s.VisibleProject, ...errorResponses(409) },
      },
    },
    async (request) => {
      const { project, role } = await orgs.renameProject(request.principal!, ...projectPath(request.params), request.body.name);
      return visibleProjectView(project, role);
    },
  );

  app.delete(
    "/orgs/:orgID/projects/:projectID",
    {
      schema: { tags: [TAG], operationId: "deleteProject", summary: "Delete a project", description: "Deletes the project and what belongs to it (org.manage). A project the caller cannot see answers 404.", params: s.ProjectParams, response: { 204: Type.Null(), ...errorResponses(409) } },
    },
    async (request, reply) => {
      await orgs.deleteProject(request.principal!, ...projectPath(request.params));
      return reply.status(204).send(null);
    },
  );
}
