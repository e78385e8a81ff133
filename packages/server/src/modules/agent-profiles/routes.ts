import { Type } from "typebox";
import type { HttpApp } from "../../platform/http/app.js";
import { pageOf, sortValue, toPage } from "../../platform/http/lists.js";
import { pathId, projectPath } from "../../platform/http/params.js";
import { errorResponses, IdempotencyKeyHeader, Page } from "../../platform/http/schemas.js";
import { decodeId } from "../../platform/ids.js";
import { TAG } from "../agent-configs/schemas.js";
import { ProjectParams } from "../orgs/schemas.js";
import * as s from "./schemas.js";
import type { AgentProfileService } from "./service.js";
import { agentProfileView } from "./views.js";

export function agentProfileRoutes(app: HttpApp, deps: { agentProfiles: AgentProfileService }) {
  const { agentProfiles } = deps;

  app.get(
    "/orgs/:orgID/projects/:projectID/agent-profiles",
    {
      schema: {
        tags: [TAG],
        operationId: "listAgentProfiles",
        summary: "List agent profiles",
        description: "The project's profiles with their current configs (agent.read); by default created_at descending, then id descending.",
        params: ProjectParams,
        querystring: s.ListAgentProfilesQuery,
        response: { 200: Page(s.AgentProfile), ...errorResponses() },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      const rows = await agentProfiles.listProfiles(request.principal!, ...projectPath(request.params), { name: request.query.name, page });
      return toPage(rows, page.limit, page.sort, (r) => ({ value: sortValue(page.sort, r.profile), id: r.profile.id }), agentProfileView);
    },
  );

  app.post(
    "/orgs/:orgID/projects/:projectID/agent-profiles",
    {
      schema: {
        tags: [TAG],
        operationId: "createAgentProfile",
        summary: "Create an agent profile",
        description:
          "Creates a profile at generation 1 pointing at a config of the project (project.manage), with an optional description " +
          "and `mcp_tool` (offer it as a tool of the project's MCP endpoint). With an Idempotency-Key, " +
          "repeating the request answers 200 with the same profile; reusing the key for another request is a 409.",
        params: ProjectParams,
        headers: IdempotencyKeyHeader,
        body: s.CreateAgentProfileRequest,
        response: { 200: s.AgentProfile, 201: s.AgentProfile, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const result = await agentProfiles.createProfile(request.principal!, ...projectPath(request.params), {
        name: request.body.name,
        configId: pathId("agentConfig", request.body.config),
        description: request.body.description,
        mcpTool: request.body.mcp_tool,
        idempotencyKey: request.headers["idempotency-key"],
      });
      return reply.status(result.created ? 201 : 200).send(agentProfileView(result));
    },
  );

  app.get(
    "/orgs/:orgID/projects/:projectID/agent-profiles/:agentProfileID",
    {
      schema: {
        tags: [TAG],
        operationId: "getAgentProfile",
        summary: "Get an agent profile",
        description: "One profile of the project with its current config (agent.read).",
        params: s.AgentProfileParams,
        response: { 200: s.AgentProfile, ...errorResponses() },
      },
    },
    async (request) => agentProfileView(await agentProfiles.getProfile(request.principal!, ...profilePath(request.params))),
  );

  app.patch(
    "/orgs/:orgID/projects/:projectID/agent-profiles/:agentProfileID",
    {
      schema: {
        tags: [TAG],
        operationId: "renameAgentProfile",
        summary: "Update an agent profile",
        description:
          "Renames the profile, changes its description or switches its MCP tool on or off (project.manage); only the members " +
          "given change. Names are unique in the project (409).",
        params: s.AgentProfileParams,
        body: s.RenameAgentProfileRequest,
        response: { 200: s.AgentProfile, ...errorResponses(409) },
      },
    },
    async (request) =>
      agentProfileView(
        await agentProfiles.updateProfile(request.principal!, ...profilePath(request.params), {
          name: request.body.name,
          description: request.body.description,
          mcpTool: request.body.mcp_tool,
        }),
      ),
  );

  app.delete(
    "/orgs/:orgID/projects/:projectID/agent-profiles/:agentProfileID",
    {
      schema: {
        tags: [TAG],
        operationId: "deleteAgentProfile",
        summary: "Delete an agent profile",
        description:
          "Deletes the profile and its generations (project.manage). Agents launched from it keep running on the config they " +
          "were launched with; their agent_profile_id is cleared.",
        params: s.AgentProfileParams,
        response: { 204: Type.Null(), ...errorResponses() },
      },
    },
    async (request, reply) => {
      await agentProfiles.deleteProfile(request.principal!, ...profilePath(request.params));
      return reply.status(204).send(null);
    },
  );

  app.post(
    "/orgs/:orgID/projects/:projectID/agent-profiles/:agentProfileID/config",
    {
      schema: {
        tags: [TAG],
        operationId: "updateAgentProfile",
        summary: "Point a profile at a new config",
        description:
          "Points the profile at another config of the project as its next generation (project.manage). Optimistic: " +
          "expected_current_config_id must name the profile's current config, else 409 conflict. Asking for the config the " +
          "profile already has answers 200 and adds no generation, so the request is safe to retry.",
        params: s.AgentProfileParams,
        body: s.UpdateAgentProfileRequest,
        response: { 200: s.AgentProfile, ...errorResponses(409) },
      },
    },
    async (request) =>
      agentProfileView(
        await agentProfiles.setProfileConfig(request.principal!, ...profilePath(request.params), {
          configId: pathId("agentConfig", request.body.config),
          // Only compared with the current config: an id that cannot decode simply does not match it.
          expectedConfigId: decodeId("agentConfig", request.body.expected_current_config_id),
        }),
      ),
  );
}

function profilePath(params: { orgID: string; projectID: string; agentProfileID: string }): [string, string, string] {
  return [...projectPath(params), pathId("agentProfile", params.agentProfileID)];
}
