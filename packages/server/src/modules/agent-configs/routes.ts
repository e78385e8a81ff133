import type { HttpApp } from "../../platform/http/app.js";
import { pathId, projectPath } from "../../platform/http/params.js";
import { pageOf, toPage } from "../../platform/http/lists.js";
import { errorResponses, Page } from "../../platform/http/schemas.js";
import { ProjectParams } from "../orgs/schemas.js";
import * as s from "./schemas.js";
import type { AgentConfigService } from "./service.js";
import { AGENT_CONFIG_JSON_SCHEMA } from "./json-schema.js";
import { agentConfigView } from "./views.js";

export function agentConfigRoutes(app: HttpApp, deps: { agentConfigs: AgentConfigService }) {
  const { agentConfigs } = deps;

  app.post(
    "/orgs/:orgID/projects/:projectID/agent-configs",
    {
      // The compiler reports NUL in a source with its line and column.
      config: { checksOwnText: ["/source"] },
      schema: {
        tags: [s.TAG],
        operationId: "createAgentConfig",
        summary: "Compile an agent config",
        description:
          "Compiles a config source (agent.operate). A new definition answers 201; the same source compiling to the same " +
          "definition answers 200 with the existing config. A source that does not compile answers 400 validation_failed " +
          "with every issue, each with a JSON Pointer into the document and its line and column in the source.",
        params: ProjectParams,
        body: s.AgentConfigSource,
        response: { 200: s.AgentConfig, 201: s.AgentConfig, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const { row, created } = await agentConfigs.createConfig(request.principal!, ...projectPath(request.params), {
        source: request.body.source,
        sourceFormat: request.body.source_format,
      });
      return reply.status(created ? 201 : 200).send(agentConfigView(row));
    },
  );

  app.get(
    "/orgs/:orgID/projects/:projectID/agent-configs",
    {
      schema: {
        tags: [s.TAG],
        operationId: "listAgentConfigs",
        summary: "List agent configs",
        description:
          "The project's configs (agent.read), each with its source and model; by default created_at descending, then id " +
          "descending. Configs are immutable and never deleted: a changed source compiles to a new one.",
        params: ProjectParams,
        querystring: s.ListAgentConfigsQuery,
        response: { 200: Page(s.AgentConfig), ...errorResponses() },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      const rows = await agentConfigs.listConfigs(request.principal!, ...projectPath(request.params), page);
      return toPage(rows, page.limit, page.sort, (row) => ({ value: row.createdAt, id: row.id }), agentConfigView);
    },
  );

  app.post(
    "/orgs/:orgID/projects/:projectID/agent-configs/validate",
    {
      config: { checksOwnText: ["/source"] },
      schema: {
        tags: [s.TAG],
        operationId: "validateAgentConfig",
        summary: "Check an agent config without saving it",
        description:
          "Runs every check of a create (agent.operate) and saves nothing: 200 with the issues a create would answer " +
          "(none when the source compiles), each with its JSON Pointer, line and column. An invalid config is an answer, " +
          "not an error; a malformed request body is a 400. Editors call it as the author types.",
        params: ProjectParams,
        body: s.AgentConfigSource,
        response: { 200: s.AgentConfigValidation, ...errorResponses() },
      },
    },
    async (request) => {
      const issues = await agentConfigs.validateConfig(request.principal!, ...projectPath(request.params), {
        source: request.body.source,
        sourceFormat: request.body.source_format,
      });
      return { issues };
    },
  );

  app.get(
    "/orgs/:orgID/projects/:projectID/agent-configs/schema",
    {
      schema: {
        tags: [s.TAG],
        operationId: "getAgentConfigSchema",
        summary: "The config document's JSON Schema",
        description:
          "A JSON Schema (2020-12) of the config document (agent.read), for editors: completion of keys and values and " +
          "their descriptions. It describes the shape; what the project has (models, machines, secrets) is checked by validate and create.",
        params: ProjectParams,
        response: { 200: s.AgentConfigJsonSchema, ...errorResponses() },
      },
    },
    async (request) => {
      await agentConfigs.checkReadable(request.principal!, ...projectPath(request.params));
      return AGENT_CONFIG_JSON_SCHEMA;
    },
  );

  app.get(
    "/orgs/:orgID/projects/:projectID/agent-configs/:agentConfigID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "getAgentConfig",
        summary: "Get an agent config",
        description: "One config of the project (agent.read).",
        params: s.AgentConfigParams,
        response: { 200: s.AgentConfig, ...errorResponses() },
      },
    },
    async (request) => {
      const configId = pathId("agentConfig", request.params.agentConfigID);
      return agentConfigView(await agentConfigs.getConfig(request.principal!, ...projectPath(request.params), configId));
    },
  );
}
