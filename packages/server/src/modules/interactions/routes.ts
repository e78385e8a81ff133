import type { HttpApp } from "../../platform/http/app.js";
import { DEFAULT_PAGE_SIZE, toPage } from "../../platform/http/lists.js";
import { pathId, projectPath } from "../../platform/http/params.js";
import { errorResponses, Page } from "../../platform/http/schemas.js";
import { AgentParams, TAG } from "../agents/schemas.js";
import * as s from "./schemas.js";
import type { InteractionsService } from "./service.js";
import { interactionView } from "./views.js";

export function interactionRoutes(app: HttpApp, deps: { interactions: InteractionsService }) {
  const { interactions } = deps;

  app.get(
    "/orgs/:orgID/projects/:projectID/agents/:agentID/interactions",
    {
      schema: {
        tags: [TAG],
        operationId: "listAgentInteractions",
        summary: "List an agent's interactions",
        description: "Approvals and questions of the agent (agent.read), ordered by created_at ascending, then id ascending.",
        params: AgentParams,
        querystring: s.ListInteractionsQuery,
        response: { 200: Page(s.AgentInteraction), ...errorResponses() },
      },
    },
    async (request) => {
      const page = { limit: request.query.limit ?? DEFAULT_PAGE_SIZE, cursor: request.query.cursor };
      const { agent, rows } = await interactions.list(request.principal!, ...projectPath(request.params), pathId("agent", request.params.agentID), request.query.state, page);
      return toPage(rows, page.limit, "created_at", (r) => ({ value: r.createdAt, id: r.id }), (r) => interactionView(agent, r));
    },
  );

  app.post(
    "/orgs/:orgID/projects/:projectID/agents/:agentID/interactions/:interactionID/resolve",
    {
      schema: {
        tags: [TAG],
        operationId: "resolveAgentInteraction",
        summary: "Answer an interaction",
        description:
          "Answers an open interaction (agent.operate), one answer per question. For a permission request option 0 allows the " +
          "tool call and option 1 denies it (with optional text as the reason). The first answer wins: the same answers again " +
          "return 200 with the resolved interaction; different answers, or an interaction that was canceled, return 409.",
        params: s.InteractionParams,
        body: s.ResolveAgentInteractionRequest,
        response: { 200: s.AgentInteraction, ...errorResponses(409) },
      },
    },
    async (request) => {
      const { agent, interaction } = await interactions.resolve(
        request.principal!,
        ...projectPath(request.params),
        pathId("agent", request.params.agentID),
        pathId("interaction", request.params.interactionID),
        request.body,
      );
      return interactionView(agent, interaction);
    },
  );
}
