import type { HttpApp } from "../../platform/http/app.js";
import { pathId, projectPath } from "../../platform/http/params.js";
import { errorResponses } from "../../platform/http/schemas.js";
import { ProjectParams } from "../orgs/schemas.js";
import * as s from "./schemas.js";
import type { AgentConfigService } from "./service.js";
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
